// examples/canary as Git content and hub objects, for the canary e2e test and the demo's
// third chapter: the same files a user would commit, at a chosen demo-app version, and the
// hub objects wired to one test bed (Git URL, Prometheus address, cluster, namespace).
//
// No jest imports here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { REPO_ROOT } from './kube-local.mjs';

export const CANARY_EXAMPLE_DIR = join(REPO_ROOT, 'examples', 'canary');

/**
 * The files of examples/canary/deploy (as `deploy/…`) with the demo app at `version`: its
 * image tag and its `version` label. Throws when the example no longer has the v1 shape.
 */
export function canaryDeployFiles(version: string): Record<string, string> {
  const deployment = readFileSync(join(CANARY_EXAMPLE_DIR, 'deploy', 'deployment.yaml'), 'utf8');
  const versioned = deployment
    .replace(/sluice\.dev\/demo-app:v1\b/, `sluice.dev/demo-app:${version}`)
    .replace(/version: v1\b/, `version: ${version}`);
  if (!versioned.includes(`sluice.dev/demo-app:${version}`) || !versioned.includes(`version: ${version}`))
    throw new Error(
      `${join(CANARY_EXAMPLE_DIR, 'deploy', 'deployment.yaml')}: expected image sluice.dev/demo-app:v1 and label version: v1`,
    );
  return {
    'deploy/deployment.yaml': versioned,
    'deploy/httproute.yaml': readFileSync(join(CANARY_EXAMPLE_DIR, 'deploy', 'httproute.yaml'), 'utf8'),
  };
}

/** One hub object of the example, with a `spec` to edit. */
export type ExampleObject = KubernetesObject & { spec: Record<string, unknown> };

/** Where the example's hub objects point on one test bed. */
export interface CanaryExampleWiring {
  /** Namespace of the hub objects and, on the member, of the workload (a CanaryRelease needs both equal). */
  namespace: string;
  gitUrl: string;
  /** The GitSource's poll interval (e.g. `1s`). */
  gitInterval?: string;
  /** The Cluster the PlacementRule names. */
  cluster: string;
  prometheusUrl: string;
}

/** examples/canary/{delivery,canary-release}.yaml, rewired to `w`. Pure apart from reading the files. */
export function canaryHubObjects(w: CanaryExampleWiring): ExampleObject[] {
  const docs = ['delivery.yaml', 'canary-release.yaml'].flatMap((f) =>
    parseAllDocuments(readFileSync(join(CANARY_EXAMPLE_DIR, f), 'utf8')).map(
      (d) => d.toJS() as ExampleObject,
    ),
  );
  for (const o of docs) {
    o.metadata = { ...o.metadata, namespace: w.namespace };
    if (o.kind === 'GitSource') {
      o.spec.url = w.gitUrl;
      if (w.gitInterval) o.spec.interval = w.gitInterval;
    }
    if (o.kind === 'PlacementRule') o.spec.clusters = [{ name: w.cluster }];
    if (o.kind === 'Delivery') o.spec.targetNamespace = w.namespace;
    if (o.kind === 'CanaryRelease') {
      const analysis = o.spec.analysis as { provider: { address: string } };
      analysis.provider.address = w.prometheusUrl;
    }
  }
  return docs;
}

/**
 * Runs `start` again (up to `attempts` times) when it fails because a port was taken:
 * startGateway and startClusterPrometheus pick a free port and bind it only later, in another
 * process (Traefik, Prometheus), and on a busy machine an outgoing connection can take that
 * port in between ("bind: address already in use"). Any other error is thrown at once.
 */
export async function retryOnPortTaken<T>(start: () => Promise<T>, attempts = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await start();
    } catch (err) {
      if (i >= attempts || !/address already in use/i.test(String(err))) throw err;
    }
  }
}
