import type { KubernetesObject } from '@kubernetes/client-node';
import {
  eventually,
  kubeconfigPath,
  startCluster,
  stopCluster,
  testClient,
  uniqueName,
} from '../support/clusters.js';
import { ControllerProcess, controllerArgs } from '../support/controller-process.js';
import {
  available,
  createNamespace,
  deleteObject,
  ensureCrds,
  getCluster,
  kubeconfigSecret,
  registerCluster,
  secret,
} from '../support/sluice-objects.js';

const hub = testClient('hub');
const ns = uniqueName('cluster-ctl');
const prefix = uniqueName('c');
const name = (s: string) => `${prefix}-${s}`;
let controller: ControllerProcess;
const created: string[] = [];

async function register(s: string, secretName: string, key?: string): Promise<string> {
  const n = name(s);
  created.push(n);
  await registerCluster(hub, n, { namespace: ns, name: secretName, ...(key ? { key } : {}) });
  return n;
}

async function waitAvailable(n: string, status: 'True' | 'False', reason?: string) {
  return eventually(async () => {
    const c = await getCluster(hub, n);
    const a = available(c);
    return a?.status === status && (!reason || a.reason === reason) ? c : undefined;
  }, 60_000);
}

beforeAll(async () => {
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  for (const m of ['member-1', 'member-2', 'member-3']) await kubeconfigSecret(hub, ns, `${m}-kubeconfig`, m);
  controller = new ControllerProcess(
    controllerArgs(kubeconfigPath('hub'), uniqueName('lease'), [
      '--cluster-probe-interval',
      '2s',
      '--leader-elect=false',
    ]),
  );
  await controller.waitForLog((l) => l.message === 'controllers started');
});

afterAll(async () => {
  await controller?.kill();
  for (const n of created)
    await deleteObject(hub, { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: { name: n } });
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

describe('Cluster controller on real clusters', () => {
  it('GIVEN reachable members WHEN registered THEN Available=True with version, API groups and allocatable', async () => {
    const names = await Promise.all(
      ['member-1', 'member-2', 'member-3'].map((m) => register(m, `${m}-kubeconfig`)),
    );
    for (const n of names) {
      const c = await waitAvailable(n, 'True', 'ClusterAvailable');
      expect(c.status?.version).toBe('v1.36.3');
      expect(c.status?.apiGroups?.count).toBeGreaterThan(10);
      expect(c.status?.apiGroups?.groupVersions).toEqual(expect.arrayContaining(['v1', 'apps/v1']));
      expect(c.status?.allocatable).toEqual({ cpu: '16', memory: '64Gi', pods: '500' });
      expect(c.status?.observedGeneration).toBe(c.metadata?.generation);
      expect(c.status?.conditions?.find((x) => x.type === 'Ready')?.status).toBe('True');
    }
  });

  it('GIVEN a missing Secret THEN SecretNotFound (Stalled), and creating the Secret recovers it without a restart', async () => {
    const n = await register('late-secret', 'not-yet');
    const c = await waitAvailable(n, 'False', 'SecretNotFound');
    expect(available(c)?.message).toBe(`Secret ${ns}/not-yet not found`);
    expect(c.status?.conditions?.find((x) => x.type === 'Stalled')?.status).toBe('True');
    await kubeconfigSecret(hub, ns, 'not-yet', 'member-1');
    await waitAvailable(n, 'True');
  });

  it('GIVEN a Secret without the key THEN SecretKeyMissing naming the keys it has', async () => {
    await secret(hub, ns, 'wrong-key', { config: 'x', token: 'y' });
    const n = await register('wrong-key', 'wrong-key');
    const c = await waitAvailable(n, 'False', 'SecretKeyMissing');
    expect(available(c)?.message).toBe(
      `Secret ${ns}/wrong-key has no key "kubeconfig" (keys: config, token)`,
    );
  });

  it('GIVEN a malformed kubeconfig THEN KubeconfigInvalid, and the controller keeps reconciling the others', async () => {
    await secret(hub, ns, 'garbage', { kubeconfig: 'this: [is not: a kubeconfig' });
    await secret(hub, ns, 'no-cluster', {
      kubeconfig: 'apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\n',
    });
    const bad = await register('garbage', 'garbage');
    const empty = await register('no-cluster', 'no-cluster');
    const c1 = await waitAvailable(bad, 'False', 'KubeconfigInvalid');
    expect(available(c1)?.message).toMatch(
      new RegExp(`^Secret ${ns}/garbage key "kubeconfig" is not a usable kubeconfig: `),
    );
    const c2 = await waitAvailable(empty, 'False', 'KubeconfigInvalid');
    expect(available(c2)?.message).toContain('no current cluster');
    // Still alive and still probing the healthy ones.
    expect(controller.child.exitCode).toBeNull();
    const before = controller.reconciles('cluster').filter((l) => l.key === name('member-1')).length;
    await eventually(
      async () => controller.reconciles('cluster').filter((l) => l.key === name('member-1')).length > before,
      30_000,
    );
  });

  it('GIVEN the running controller THEN /healthz, /readyz and /metrics answer with per-controller figures', async () => {
    const started = await controller.waitForLog((l) => l.message === 'controller starting');
    const base = `http://127.0.0.1:${String(started.healthPort)}`;
    expect(await (await fetch(`${base}/healthz`)).text()).toBe('ok\n');
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/sluice_reconcile_total\{controller="cluster",result="requeue"\} [1-9]/);
    expect(metrics).toContain('sluice_reconcile_duration_seconds_bucket{le=');
    expect(metrics).toMatch(/sluice_workqueue_depth\{name="cluster"\} \d+/);
    expect(metrics).toContain('sluice_reconcile_errors_total');
  });

  it('GIVEN a member whose apiserver stops THEN Available=False Unreachable, and it recovers by itself when it returns', async () => {
    const n = name('member-3');
    await waitAvailable(n, 'True');
    await stopCluster('member-3');
    try {
      const c = await waitAvailable(n, 'False', 'Unreachable');
      expect(available(c)?.message).toContain('API server unreachable');
      expect(c.status?.conditions?.find((x) => x.type === 'Reconciling')?.reason).toBe(
        'ProgressingWithRetry',
      );
    } finally {
      await startCluster('member-3');
    }
    await waitAvailable(n, 'True', 'ClusterAvailable');
    const events = await hub.raw.listRaw<KubernetesObject & { reason?: string; type?: string }>(
      'v1',
      'Event',
      { namespace: 'default' },
    );
    const mine = events.items.filter(
      (e) => (e as { involvedObject?: { name?: string } }).involvedObject?.name === n,
    );
    expect(new Set(mine.map((e) => `${e.type}/${e.reason}`))).toEqual(
      new Set(['Normal/ClusterAvailable', 'Warning/Unreachable']),
    );
  });
});
