import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { PlacementRule, PlacementRuleSpec } from '../../src/api/placement-rule.js';
import { Manager } from '../../src/kube/manager.js';
import { silentLogger } from '../../src/log.js';
import { registerPlacementControllers } from '../../src/placement/register.js';
import { eventually, startCluster, stopCluster, testClient, uniqueName } from '../support/clusters.js';
import {
  available,
  createNamespace,
  deleteObject,
  ensureCrds,
  getCluster,
  kubeconfigSecret,
  registerCluster,
  labelCluster,
} from '../support/sluice-objects.js';

// Short enough for a test, long enough that the kept phase is seen by polling.
const DEBOUNCE_MS = 8_000;

const hub = testClient('hub');
const ns = uniqueName('placement');
const run = uniqueName('run');
const name = (member: string) => `${run}-${member}`;
const m1 = name('member-1');
const m2 = name('member-2');
const m3 = name('member-3');
let manager: Manager;

async function label(cluster: string, env: string): Promise<void> {
  await labelCluster(hub, cluster, { env });
}

async function applyRule(rule: string, spec: PlacementRuleSpec): Promise<void> {
  // Apply replaces the whole spec owned by this manager (a field left out is removed).
  await hub.raw.applyRaw(
    {
      apiVersion: 'sluice.dev/v1',
      kind: 'PlacementRule',
      metadata: { namespace: ns, name: rule },
      spec,
    } as KubernetesObject,
    { fieldManager: 'sluice-test', force: true },
  );
}

async function getRule(rule: string): Promise<PlacementRule> {
  return hub.raw.getRaw<PlacementRule>({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: ns, name: rule },
  } as KubernetesObject);
}

const decided = (r: PlacementRule) => (r.status?.decisions ?? []).map((d) => d.clusterName);
const ready = (r: PlacementRule) => r.status?.conditions?.find((c) => c.type === 'Ready');

/** Waits until the rule's decisions are exactly `names` for its current generation. */
async function waitDecided(rule: string, names: string[], timeoutMs = 60_000): Promise<PlacementRule> {
  return eventually(async () => {
    const r = await getRule(rule);
    return r.status?.observedGeneration === r.metadata.generation &&
      JSON.stringify(decided(r)) === JSON.stringify(names)
      ? r
      : undefined;
  }, timeoutMs);
}

async function events(rule: string): Promise<Array<{ type?: string; reason?: string; message?: string }>> {
  const list = await hub.raw.listRaw<KubernetesObject & { involvedObject?: { name?: string } }>(
    'v1',
    'Event',
    { namespace: ns },
  );
  return list.items.filter((e) => e.involvedObject?.name === rule) as Array<{
    type?: string;
    reason?: string;
    message?: string;
  }>;
}

/** The selector of this test run's clusters (other suites' Clusters may exist on the hub). */
const ours = (labels: Record<string, string> = {}) => ({
  matchLabels: { 'sluice-test-run': run, ...labels },
});

beforeAll(async () => {
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  for (const m of ['member-1', 'member-2', 'member-3']) {
    await kubeconfigSecret(hub, ns, `${m}-kubeconfig`, m);
    await registerCluster(
      hub,
      name(m),
      { namespace: ns, name: `${m}-kubeconfig` },
      { 'sluice-test-run': run, env: m === 'member-3' ? 'staging' : 'prod' },
    );
  }
  manager = new Manager({
    client: testClient('hub'),
    logger: silentLogger(),
    registry: new Registry(),
    leaderElection: false,
  });
  registerPlacementControllers(manager, { probeIntervalMs: 1_000, placementDebounceMs: DEBOUNCE_MS });
  await manager.start();
  for (const c of [m1, m2, m3]) {
    await eventually(async () => available(await getCluster(hub, c))?.status === 'True');
  }
});

afterAll(async () => {
  await manager?.stop();
  for (const c of [m1, m2, m3])
    await deleteObject(hub, { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: { name: c } });
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

describe('PlacementRule controller on real clusters', () => {
  it('GIVEN clusterSelector env=prod THEN the prod clusters are decided, with reasons and Ready=Decided', async () => {
    await applyRule('prod', { clusterSelector: ours({ env: 'prod' }) });
    const r = await waitDecided('prod', [m1, m2]);
    expect(r.status?.decisions?.[0]?.reason).toMatch(/^matches clusterSelector/);
    expect(ready(r)).toMatchObject({ status: 'True', reason: 'Decided' });
    expect(ready(r)?.message).toMatch(/^2 of \d+ clusters selected$/);
    await eventually(async () =>
      (await events('prod')).some(
        (e) => e.reason === 'DecisionsChanged' && e.message === `added ${m1}, ${m2}`,
      ),
    );
  });

  it('GIVEN a cluster labelled env=prod THEN it is added; WHEN the label goes THEN it is removed at once', async () => {
    await label(m3, 'prod');
    await waitDecided('prod', [m1, m2, m3]);
    await eventually(async () =>
      (await events('prod')).some((e) => e.reason === 'DecisionsChanged' && e.message === `added ${m3}`),
    );
    await label(m3, 'staging');
    await waitDecided('prod', [m1, m2]);
    await eventually(async () =>
      (await events('prod')).some(
        (e) => e.message === `removed ${m3} (dropped: no longer selected by the rule)`,
      ),
    );
  });

  it('GIVEN clusters: [{name}] THEN the list replaces the selector', async () => {
    await applyRule('named', { clusterSelector: ours({ env: 'prod' }), clusters: [{ name: m3 }] });
    const r = await waitDecided('named', [m3]);
    expect(r.status?.decisions?.[0]?.reason).toMatch(/^named in spec\.clusters/);
  });

  it('GIVEN clusterReplicas THEN the count is capped, and existing decisions stay first (sticky)', async () => {
    await applyRule('capped', { clusters: [{ name: m2 }, { name: m3 }], clusterReplicas: 1 });
    await waitDecided('capped', [m2]);
    // member-1 sorts first by name, but member-2 was decided before: it stays.
    await applyRule('capped', { clusters: [{ name: m1 }, { name: m2 }, { name: m3 }], clusterReplicas: 1 });
    const r = await waitDecided('capped', [m2]);
    expect(r.status?.decisions?.[0]?.reason).toContain('kept from previous decisions');
    expect(ready(r)?.message).toContain(`not chosen (clusterReplicas 1 reached): ${m1}, ${m3}`);
  });

  it('GIVEN clusterConditions Available=True WHEN a member stops THEN it is kept during the debounce (status says why) and removed after it; WHEN it returns THEN it is back', async () => {
    const spec: PlacementRuleSpec = {
      clusterSelector: ours(),
      clusterConditions: [{ type: 'Available', status: 'True' }],
    };
    await applyRule('healthy', spec);
    await waitDecided('healthy', [m1, m2, m3]);
    await stopCluster('member-3');
    try {
      const kept = await eventually(async () => {
        const r = await getRule('healthy');
        const d = r.status?.decisions?.find((x) => x.clusterName === m3);
        return d?.failingSince ? { r, d } : undefined;
      });
      expect(kept.d.reason).toMatch(/^kept: Available=False since \S+Z, within the 8s debounce$/);
      expect(Date.parse(kept.d.failingSince ?? '')).not.toBeNaN();
      expect(ready(kept.r)?.message).toContain(
        `kept during the flap debounce: ${m3} (failing since ${kept.d.failingSince})`,
      );
      await waitDecided('healthy', [m1, m2]);
      await eventually(async () =>
        (await events('healthy')).some((e) =>
          e.message?.startsWith(`removed ${m3} (evicted: Available=False for `),
        ),
      );
    } finally {
      await startCluster('member-3');
    }
    const back = await waitDecided('healthy', [m1, m2, m3]);
    expect(back.status?.decisions?.every((d) => d.failingSince === undefined)).toBe(true);
  });

  it('GIVEN a selector the CRD schema cannot check THEN Stalled=True InvalidSpec naming the field, decisions kept', async () => {
    await applyRule('typo', { clusterSelector: ours({ env: 'prod' }) });
    await waitDecided('typo', [m1, m2]);
    await applyRule('typo', {
      clusterSelector: { matchExpressions: [{ key: 'bad key!', operator: 'Exists' }] },
    });
    const r = await eventually(async () => {
      const now = await getRule('typo');
      const stalled = now.status?.conditions?.find((c) => c.type === 'Stalled');
      return now.status?.observedGeneration === now.metadata.generation && stalled?.status === 'True'
        ? now
        : undefined;
    });
    expect(ready(r)).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(ready(r)?.message).toBe(
      `invalid spec: spec.clusterSelector.matchExpressions[0].key: Invalid value: "bad key!": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
    expect(decided(r)).toEqual([m1, m2]);
    await eventually(async () =>
      (await events('typo')).some((e) => e.type === 'Warning' && e.reason === 'InvalidSpec'),
    );
  });

  it('GIVEN operator In without values THEN the CRD schema rejects it at apply time', async () => {
    await expect(
      applyRule('rejected', {
        clusterSelector: { matchExpressions: [{ key: 'env', operator: 'In' }] },
      }),
    ).rejects.toThrow(/values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist/);
  });
});
