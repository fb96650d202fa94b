/**
 * What the webhook and storage-migration suites share: swapping the CanaryRelease CRD for a
 * variant and back to the plain generated one (by PUT: the webhook registration merge-patches
 * a url and caBundle that a server-side apply of the plain CRD would leave behind), and
 * starting the webhooks in-process against the real apiserver.
 */
import { canaryReleaseKind } from '../../src/api/canary-release.js';
import { toCrd } from '../../src/api/crds.js';
import type { CustomResourceDefinition } from '../../src/api/schema.js';
import { FeatureGates } from '../../src/features.js';
import type { ClusterClient } from '../../src/kube/clients.js';
import { isNotFound } from '../../src/kube/errors.js';
import { unregisterValidatingWebhooks } from '../../src/webhooks/registration.js';
import { Webhooks, type WebhooksOptions } from '../../src/webhooks/webhooks.js';
import { eventually } from './clusters.js';

const CRD_PATH = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** Replaces (or creates) `crd` whole and waits until it is Established with this storage version. */
export async function replaceCrd(client: ClusterClient, crd: CustomResourceDefinition): Promise<void> {
  const name = crd.metadata.name;
  for (let attempt = 0; ; attempt++) {
    let live: { metadata: { resourceVersion: string } } | undefined;
    try {
      live = await client.raw.request({ method: 'GET', path: `${CRD_PATH}/${name}` });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    try {
      if (live)
        await client.raw.request({
          method: 'PUT',
          path: `${CRD_PATH}/${name}`,
          body: { ...crd, metadata: { ...crd.metadata, resourceVersion: live.metadata.resourceVersion } },
        });
      else await client.raw.request({ method: 'POST', path: CRD_PATH, body: crd });
      break;
    } catch (err) {
      if (attempt >= 3) throw err;
    }
  }
  const storage = crd.spec.versions.find((v) => v.storage)!.name;
  await eventually(async () => {
    const live = await client.apiextensions.readCustomResourceDefinition({ name });
    return (
      live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') &&
      live.spec.versions.find((v) => v.storage)?.name === storage
    );
  }, 30_000);
}

/** The plain generated CanaryRelease CRD back, and no ValidatingWebhookConfiguration: what other suites expect. */
export async function restoreWebhookFreeCluster(client: ClusterClient): Promise<void> {
  await unregisterValidatingWebhooks(client);
  await replaceCrd(client, toCrd(canaryReleaseKind));
}

/** Starts the webhooks on 127.0.0.1 (a free port) with a generated certificate. */
export function startTestWebhooks(
  client: ClusterClient,
  overrides: Partial<WebhooksOptions> = {},
): Promise<Webhooks> {
  return Webhooks.start({
    client,
    gates: new FeatureGates(),
    host: '127.0.0.1',
    port: 0,
    endpoint: (port) => ({ url: `https://127.0.0.1:${port}` }),
    hosts: { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] },
    certificate: { kind: 'generated', validityMs: 3_600_000 },
    conversion: { prometheusAddress: 'http://prometheus.monitoring:9090' },
    propagationMs: 500,
    overlapMs: 2_000,
    ...overrides,
  });
}
