import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterClient } from '../../src/kube/clients.js';
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
} from '../support/sluice-objects.js';

interface EventObject extends KubernetesObject {
  reason?: string;
  count?: number;
  involvedObject?: { name?: string };
}

const running: ControllerProcess[] = [];
function start(kubeconfig: string, lease: string, extra: string[] = []): ControllerProcess {
  const c = new ControllerProcess(
    controllerArgs(kubeconfig, lease, ['--cluster-probe-interval', '1h', ...extra]),
  );
  running.push(c);
  return c;
}

async function setUp(client: ClusterClient, ns: string): Promise<void> {
  await ensureCrds(client);
  await createNamespace(client, ns);
  await kubeconfigSecret(client, ns, 'member', 'member-1');
}

async function allAvailable(client: ClusterClient, names: string[]): Promise<boolean> {
  const states = await Promise.all(names.map(async (n) => available(await getCluster(client, n))?.status));
  return states.every((s) => s === 'True');
}

async function eventsFor(client: ClusterClient, names: Set<string>): Promise<EventObject[]> {
  const list = await client.raw.listRaw<EventObject>('v1', 'Event', { namespace: 'default' });
  return list.items.filter((e) => names.has(e.involvedObject?.name ?? ''));
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.kill('SIGKILL')));
});

describe('the controller process', () => {
  const hub = testClient('hub');
  const ns = uniqueName('ctl-proc');
  const names: string[] = [];

  beforeAll(() => setUp(hub, ns));
  afterAll(async () => {
    for (const n of names)
      await deleteObject(hub, { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: { name: n } });
    await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });

  it('GIVEN 40 Clusters WHEN the controller is SIGKILLed mid-reconcile and restarted THEN all converge, each Event recorded once', async () => {
    const prefix = uniqueName('kill');
    const batch = Array.from({ length: 40 }, (_, i) => `${prefix}-${i}`);
    names.push(...batch);
    const lease = uniqueName('lease');
    const first = start(kubeconfigPath('hub'), lease);
    await first.waitForLog((l) => l.message === 'controllers started');
    await Promise.all(batch.map((n) => registerCluster(hub, n, { namespace: ns, name: 'member' })));
    // Kill as soon as some, but not all, of the batch were reconciled.
    await first.waitForLog((l) => l.message === 'reconciled' && String(l.key).startsWith(prefix));
    await first.kill('SIGKILL');
    const doneBeforeKill = new Set(first.reconciles('cluster').map((l) => l.key)).size;
    expect(doneBeforeKill).toBeLessThan(batch.length);

    const second = start(kubeconfigPath('hub'), lease, ['--lease-duration', '4s']);
    await eventually(() => allAvailable(hub, batch), 120_000, 500);

    const events = await eventsFor(hub, new Set(batch));
    // No side effect twice: at most one ClusterAvailable Event per Cluster, each with count 1.
    const perCluster = new Map<string, number>();
    for (const e of events) {
      expect(e.reason).toBe('ClusterAvailable');
      expect(e.count ?? 1).toBe(1);
      perCluster.set(e.involvedObject!.name!, (perCluster.get(e.involvedObject!.name!) ?? 0) + 1);
    }
    expect([...perCluster.values()].every((n) => n === 1)).toBe(true);
    expect(second.reconciles('cluster').length).toBeGreaterThan(0);
  });

  it('GIVEN two controllers on one Lease THEN only the leader reconciles, and the standby takes over within the lease duration when it dies', async () => {
    const lease = uniqueName('lease');
    const a = start(kubeconfigPath('hub'), lease, ['--lease-duration', '6s']);
    const b = start(kubeconfigPath('hub'), lease, ['--lease-duration', '6s']);
    const leaderLine = await Promise.race(
      [a, b].map((c) => c.waitForLog((l) => l.message === 'became leader').then(() => c)),
    );
    const leader = leaderLine;
    const standby = leader === a ? b : a;
    const n1 = `${uniqueName('le')}-1`;
    names.push(n1);
    await registerCluster(hub, n1, { namespace: ns, name: 'member' });
    await eventually(async () => leader.reconciles('cluster').some((l) => l.key === n1));
    await standby.waitForLog((l) => l.message === 'caches synced');
    expect(standby.reconciles('cluster')).toEqual([]);
    expect(standby.lines.some((l) => l.message === 'became leader')).toBe(false);

    const killedAt = Date.now();
    await leader.kill('SIGKILL');
    await standby.waitForLog((l) => l.message === 'became leader', 30_000);
    const takeoverMs = Date.now() - killedAt;
    // 6 s lease + one 1 s retry period; a margin for this 2-core machine.
    expect(takeoverMs).toBeLessThan(6_000 + 1_000 + 3_000);
    const n2 = `${uniqueName('le')}-2`;
    names.push(n2);
    await registerCluster(hub, n2, { namespace: ns, name: 'member' });
    await eventually(async () => available(await getCluster(hub, n2))?.status === 'True');
    expect(standby.reconciles('cluster').some((l) => l.key === n2)).toBe(true);
    console.log(`leader takeover after SIGKILL: ${takeoverMs} ms (lease 6 s)`);
  });
});

describe('graceful shutdown', () => {
  it('GIVEN a leader and a standby WHEN the leader gets SIGTERM THEN it exits 0 and releases the Lease, so the standby leads at once', async () => {
    const lease = uniqueName('lease');
    // A long lease: only a released Lease lets the standby lead quickly.
    const a = start(kubeconfigPath('hub'), lease, ['--lease-duration', '60s']);
    await a.waitForLog((l) => l.message === 'became leader');
    const b = start(kubeconfigPath('hub'), lease, ['--lease-duration', '60s']);
    await b.waitForLog((l) => l.message === 'caches synced');
    expect(await a.kill('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(a.lines.some((l) => l.message === 'shutting down')).toBe(true);
    await b.waitForLog((l) => l.message === 'became leader', 30_000);
  });
});

describe('the controller whose hub apiserver restarts', () => {
  // member-3 plays the hub here, so that its control plane can be stopped without
  // disturbing the other suites' hub.
  const hub = testClient('member-3');
  const ns = uniqueName('restart');

  beforeAll(() => setUp(hub, ns));
  afterAll(async () => {
    await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  });

  it('GIVEN a running controller WHEN its hub stops and comes back THEN a Cluster created right after is reconciled', async () => {
    const c = start(kubeconfigPath('member-3'), uniqueName('lease'), ['--leader-elect=false']);
    await c.waitForLog((l) => l.message === 'controllers started');
    const before = uniqueName('before');
    await registerCluster(hub, before, { namespace: ns, name: 'member' });
    await eventually(async () => available(await getCluster(hub, before))?.status === 'True');

    await stopCluster('member-3');
    await startCluster('member-3');
    const after = uniqueName('after');
    await registerCluster(hub, after, { namespace: ns, name: 'member' });
    await eventually(async () => available(await getCluster(hub, after))?.status === 'True', 90_000, 500);
    // The status is written inside the reconcile and the outcome line after it returns,
    // so the line may still be in the pipe when the status is seen.
    await c.waitForLog(
      (l) => l.message === 'reconciled' && l.controller === 'cluster' && l.key === after,
      10_000,
    );
    expect(c.child.exitCode).toBeNull();
    for (const n of [before, after])
      await deleteObject(hub, { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: { name: n } });
  });
});
