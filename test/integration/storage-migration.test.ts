/**
 * Storage version migration on a real apiserver: CanaryReleases created while v1alpha1 was
 * the storage version are rewritten as v1 by `sluice migrate-storage`, and the CRD's
 * status.storedVersions is trimmed to [v1].
 *
 * That an object is really stored as v1 afterwards is checked without reading etcd: with the
 * conversion webhook stopped, a v1 read of an object stored as v1alpha1 fails (it needs
 * conversion), and one of an object stored as v1 succeeds.
 */
import { canaryReleaseKind, type CanaryRelease } from '../../src/api/canary-release.js';
import { toCrd } from '../../src/api/crds.js';
import type { CustomResourceDefinition } from '../../src/api/schema.js';
import { runCli } from '../../src/cli/run.js';
import { serverSideApply } from '../../src/kube/apply.js';
import type { Webhooks } from '../../src/webhooks/webhooks.js';
import { captureOutput } from '../support/capture-output.js';
import { kubeconfigPath, testClient, uniqueName } from '../support/clusters.js';
import { replaceCrd, restoreWebhookFreeCluster, startTestWebhooks } from '../support/webhook-env.js';
import { FeatureGates } from '../../src/features.js';
import { ControllerProcess } from '../support/controller-process.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const hub = testClient('hub');
const namespace = uniqueName('storage');
const CRD = 'canaryreleases.sluice.dev';
let webhooks: Webhooks | undefined;

/** The CanaryRelease CRD with `storage` as its storage version. */
function crdStoredAs(storage: 'v1' | 'v1alpha1'): CustomResourceDefinition {
  const crd = toCrd(canaryReleaseKind);
  for (const v of crd.spec.versions) v.storage = v.name === storage;
  return crd;
}

const alphaRelease = (name: string, canary: number) => ({
  apiVersion: 'sluice.dev/v1alpha1',
  kind: 'CanaryRelease',
  metadata: { name, namespace },
  spec: {
    targetService: { name: 'payment-service', port: 8080 },
    trafficSplit: { baseline: 100 - canary, canary },
    metrics: [
      {
        name: 'business_order_success_rate',
        query: 'sum(rate(orders_total[5m]))',
        threshold: 0.995,
        weight: 0.6,
      },
      {
        name: 'p95_latency_ms',
        query: 'histogram_quantile(0.95, sum by (le) (rate(x_bucket[5m])))',
        threshold: 800,
        weight: 0.4,
      },
    ],
  },
});

const v1Release = (name: string) => ({
  apiVersion: 'sluice.dev/v1',
  kind: 'CanaryRelease',
  metadata: { name, namespace },
  spec: {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    service: { port: 80 },
    strategy: 'canary',
    trafficRouting: { provider: 'gatewayAPI', gatewayAPI: { httpRoute: { name: 'web' } } },
    steps: { weights: [5, 20, 50] },
    analysis: {
      provider: { type: 'prometheus', address: 'http://prometheus.monitoring:9090' },
      metrics: [
        { name: 'latency', builtin: 'requestDuration', quantile: 0.95, thresholdRange: { max: 300 } },
      ],
    },
    gates: [{ name: 'qa', at: 'confirmPromotion', type: 'manual' }],
  },
});

async function storedVersions(): Promise<string[]> {
  return (await hub.apiextensions.readCustomResourceDefinition({ name: CRD })).status?.storedVersions ?? [];
}

const readV1 = (name: string) =>
  hub.raw.getRaw<CanaryRelease>({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { name, namespace },
  });

beforeAll(async () => {
  await restoreWebhookFreeCluster(hub);
  await serverSideApply(
    hub,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    {
      fieldManager: 'test',
    },
  );
}, 120_000);

afterAll(async () => {
  // Delete this suite's objects while conversion still works (one stored as v1alpha1 could
  // otherwise neither be listed by the namespace controller nor be dropped from storedVersions).
  if (!webhooks)
    webhooks = await startTestWebhooks(hub, { gates: new FeatureGates({ AdmissionWebhook: false }) }).catch(
      () => undefined,
    );
  const left = await hub.raw.listRaw('sluice.dev/v1', 'CanaryRelease', { namespace }).catch(() => undefined);
  for (const o of left?.items ?? []) await hub.raw.deleteRaw(o).catch(() => undefined);
  await webhooks?.stop().catch(() => undefined);
  await hub.raw
    .deleteRaw({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } })
    .catch(() => undefined);
  // Objects this suite stored as v1alpha1 are gone with the namespace; put the plain CRD back
  // and trim storedVersions so the next suite finds what it expects.
  await restoreWebhookFreeCluster(hub);
  await hub.raw
    .request({
      method: 'PATCH',
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${CRD}/status`,
      body: { status: { storedVersions: ['v1'] } },
      contentType: 'application/merge-patch+json',
    })
    .catch(() => undefined);
}, 120_000);

it('GIVEN CanaryReleases stored as v1alpha1 WHEN storage switches to v1 and sluice migrate-storage runs THEN they are stored as v1 and storedVersions is [v1]', async () => {
  // 1. v1alpha1 is the storage version; objects are written in both versions.
  await replaceCrd(hub, crdStoredAs('v1alpha1'));
  webhooks = await startTestWebhooks(hub, { gates: new FeatureGates({ AdmissionWebhook: false }) });
  const names = { a: uniqueName('alpha'), b: uniqueName('alpha'), c: uniqueName('v1') };
  const apply = (o: object) => serverSideApply(hub, o as never, { fieldManager: 'test' });
  await eventuallyApplied(() => apply(alphaRelease(names.a, 10)));
  await apply(alphaRelease(names.b, 25));
  await apply(v1Release(names.c));
  expect(await storedVersions()).toContain('v1alpha1');
  const before = Object.fromEntries(
    await Promise.all(Object.entries(names).map(async ([k, n]) => [k, (await readV1(n)).spec])),
  );

  // 2. v1 becomes the storage version: nothing is rewritten yet.
  await replaceCrd(hub, crdStoredAs('v1'));
  await webhooks.publish(); // the replacement dropped the webhook's url and caBundle
  expect(await storedVersions()).toEqual(expect.arrayContaining(['v1', 'v1alpha1']));

  // 3. Migrate through the CLI, as an operator would.
  const out = captureOutput();
  let code: number;
  try {
    code = await runCli(['migrate-storage', '--kubeconfig', kubeconfigPath('hub'), '-o', 'json']);
  } finally {
    out.restore();
  }
  expect({ code, err: out.err() }).toEqual({ code: 0, err: '' });
  const result = JSON.parse(out.out());
  expect(result).toMatchObject({ crd: CRD, storageVersion: 'v1', storedVersionsAfter: ['v1'] });
  expect(result.rewritten).toBeGreaterThanOrEqual(3);
  expect(await storedVersions()).toEqual(['v1']);

  // 4. Stored as v1 now: readable as v1 with no conversion webhook, and unchanged.
  await webhooks.stop();
  webhooks = undefined;
  // Nothing lost; what v1alpha1 could not say (and so was not defaulted while stored as
  // v1alpha1) now carries v1's defaults, written when the object was rewritten as v1.
  for (const [k, n] of Object.entries(names))
    expect({ k, spec: (await readV1(n)).spec }).toMatchObject({ k, spec: before[k] });
  expect((await readV1(names.a)).spec.analysis).toMatchObject({ judge: 'threshold', scoreThreshold: 0.95 });
  expect(before.a).toMatchObject({
    steps: { weights: [10] },
    analysis: {
      metrics: [
        { name: 'business-order-success-rate', thresholdRange: { min: 0.995 }, weight: 0.6 },
        { name: 'p95-latency-ms', thresholdRange: { max: 800 }, weight: 0.4 },
      ],
    },
  });
  expect(before.c).toMatchObject(v1Release(names.c).spec);

  // 5. Running it again does nothing.
  const again = captureOutput();
  try {
    expect(await runCli(['migrate-storage', '--kubeconfig', kubeconfigPath('hub')])).toBe(0);
  } finally {
    again.restore();
  }
  expect(again.out()).toMatch(/rewrote 0 object\(s\); storedVersions \[v1\] -> \[v1\]/);
});

it('GIVEN an object still stored as v1alpha1 and the conversion webhook down WHEN read as v1 THEN it fails (the check above means something)', async () => {
  await replaceCrd(hub, crdStoredAs('v1alpha1'));
  webhooks = await startTestWebhooks(hub, { gates: new FeatureGates({ AdmissionWebhook: false }) });
  const name = uniqueName('unmigrated');
  await eventuallyApplied(() =>
    serverSideApply(hub, alphaRelease(name, 10) as never, { fieldManager: 'test' }),
  );
  await replaceCrd(hub, crdStoredAs('v1'));
  await webhooks.stop();
  webhooks = undefined;
  await expect(readV1(name)).rejects.toThrow(/conversion webhook/);
  // afterAll restarts the webhooks to delete it.
});

it('GIVEN objects stored as v1alpha1 WHEN the controller starts with --feature-gates StorageMigration=true THEN it serves the webhooks and migrates them', async () => {
  await replaceCrd(hub, crdStoredAs('v1alpha1'));
  webhooks = await startTestWebhooks(hub, { gates: new FeatureGates({ AdmissionWebhook: false }) });
  const name = uniqueName('at-start');
  await eventuallyApplied(() =>
    serverSideApply(hub, alphaRelease(name, 30) as never, { fieldManager: 'test' }),
  );
  await replaceCrd(hub, crdStoredAs('v1'));
  await webhooks.stop();
  webhooks = undefined;
  expect(await storedVersions()).toEqual(expect.arrayContaining(['v1', 'v1alpha1']));

  const controller = new ControllerProcess([
    '--kubeconfig',
    kubeconfigPath('hub'),
    '--leader-elect=false',
    '--metrics-bind-address',
    '127.0.0.1:0',
    '--health-probe-bind-address',
    '127.0.0.1:0',
    '--webhook-bind-address',
    '0',
    '--webhook-port',
    '0',
    '--feature-gates',
    'StorageMigration=true,AdmissionWebhook=false',
    '--storage-path',
    join(tmpdir(), uniqueName('sluice-storage')),
  ]);
  try {
    const migrated = await controller.waitForLog((l) => l.message === 'storage migrated', 60_000);
    expect(migrated).toMatchObject({ storageVersion: 'v1', storedVersionsAfter: ['v1'] });
    expect(await storedVersions()).toEqual(['v1']);
  } finally {
    await controller.kill('SIGTERM');
  }
  // Stored as v1: readable with no conversion webhook running.
  expect((await readV1(name)).spec.steps).toEqual({ weights: [30] });
});

/** The apiserver loads a new CRD's conversion config asynchronously: retry the first write briefly. */
async function eventuallyApplied(write: () => Promise<unknown>): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await write();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}
