import { stringify } from 'yaml';

/** Plain manifests the delivery tests put into Git. */
export function namespaceManifest(name: string) {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name } };
}

export function configMapManifest(name: string, data: Record<string, string>) {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data };
}

/** A Deployment kube-local's node agent reports Ready (the image is never pulled). */
export function deploymentManifest(name: string, replicas: number) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'web', image: 'example.invalid/web:1' }] },
      },
    },
  };
}

/** One multi-document YAML file from `objects`. */
export const yamlDocs = (...objects: object[]): string => objects.map((o) => stringify(o)).join('---\n');
