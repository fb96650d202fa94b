import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CanaryRelease, CanaryReleaseSpec } from '../../src/api/canary-release.js';
import type { ClusterClient } from '../../src/kube/clients.js';
import { isNotFound } from '../../src/kube/errors.js';
import { Manager } from '../../src/kube/manager.js';
import { writeStatus } from '../../src/kube/status.js';
import { silentLogger } from '../../src/log.js';
import { MemberClients } from '../../src/placement/member-clients.js';
import { registerRolloutControllers } from '../../src/rollout/register.js';
import { TEMPLATE_HASH_ANNOTATION, type DeploymentLike } from '../../src/rollout/workload.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';
import { deploymentManifest } from '../support/manifests.js';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-basic.js';
import { createNamespace, deleteObject, ensureCrds } from '../support/sluice-objects.js';

// The release follows a Delivery (whose status this test writes, playing the Delivery
// controller) applied to member-1 and member-2: weights move on both, analysis runs on each,
// and one failing cluster rolls both back.
const hub = testClient('hub');
const MEMBERS = ['member-1', 'member-2'] as const;
const clients = new Map<string, ClusterClient>(MEMBERS.map((m) => [m, testClient(m)]));
const ns = uniqueName('lock');
let manager: Manager;
let prom: PrometheusHandle;

const rev = (n: number) => `main@sha1:${n.toString(16).padStart(40, '0')}`;

async function applyOn(
  client: ClusterClient,
  obj: Record<string, unknown>,
  fieldManager = 'sluice-test',
): Promise<void> {
  await client.raw.applyRaw(obj as unknown as KubernetesObject, { fieldManager, force: true });
}

/** What the Delivery controller would do for `revision`: the target on every member, then its status. */
async function deliver(revision: string, version: string, first = false): Promise<void> {
  // The order of the real controllers: a new artifact, the apply on the members, then the Delivery's status.
  await writeStatus(
    hub,
    { apiVersion: 'sluice.dev/v1', kind: 'GitSource', plural: 'gitsources', namespace: ns, name: 'src' },
    {
      artifact: {
        revision,
        digest: `sha256:${'0'.repeat(64)}`,
        lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    },
  );
  for (const [, c] of clients) {
    const d = deploymentManifest('web', 2);
    const containers = [
      { ...d.spec.template.spec.containers[0]!, env: [{ name: 'VERSION', value: version }] },
    ];
    const body = first
      ? {
          ...d,
          metadata: { name: 'web', namespace: ns },
          spec: { ...d.spec, template: { ...d.spec.template, spec: { containers } } },
        }
      : {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name: 'web', namespace: ns },
          spec: { template: { spec: { containers } } },
        };
    if (first) await applyOn(c, body, 'sluice-delivery');
    else await c.raw.mergePatch(body as KubernetesObject, { spec: body.spec });
  }
  await writeStatus(
    hub,
    { apiVersion: 'sluice.dev/v1', kind: 'Delivery', plural: 'deliveries', namespace: ns, name: 'apps' },
    {
      lastAppliedRevision: revision,
      clusters: MEMBERS.map((name) => ({ name, revision, phase: 'Healthy' })),
    },
  );
}

async function release(spec: Partial<CanaryReleaseSpec>): Promise<void> {
  await applyOn(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: ns, name: 'web' },
    spec: {
      deliveryRef: { name: 'apps' },
      targetRef: { kind: 'Deployment', name: 'web' },
      service: { port: 80 },
      strategy: 'canary',
      trafficRouting: { provider: 'replicas' },
      steps: { weights: [50] },
      interval: '2s',
      ...spec,
    },
  });
}

async function get(): Promise<CanaryRelease> {
  return hub.raw.getRaw<CanaryRelease & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: ns, name: 'web' },
  });
}

async function waitFor(check: (r: CanaryRelease) => boolean, timeoutMs = 60_000): Promise<CanaryRelease> {
  let last: CanaryRelease | undefined;
  try {
    return await eventually(async () => {
      last = await get();
      return check(last) ? last : undefined;
    }, timeoutMs);
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status, null, 1)}`);
  }
}

async function deployment(member: string, name: string): Promise<DeploymentLike | undefined> {
  try {
    return await clients.get(member)!.raw.getRaw<DeploymentLike>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace: ns, name },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

beforeAll(async () => {
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  for (const [, c] of clients) await createNamespace(c, ns);
  prom = await startPrometheus();
  await applyOn(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name: 'apps' },
    spec: { sourceRef: { kind: 'GitSource', name: 'src' }, placementRef: { name: 'none' }, suspend: true },
  });
  await applyOn(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name: 'src' },
    spec: { url: 'http://127.0.0.1:1/repo.git', ref: { branch: 'main' }, interval: '1h', suspend: true },
  });
  const members = new MemberClients();
  for (const [name, c] of clients) members.set(name, c);
  manager = new Manager({ client: hub, logger: silentLogger(), leaderElection: false });
  registerRolloutControllers(manager, { members, storagePath: '/tmp' });
  await manager.start();
});

afterAll(async () => {
  await manager?.stop();
  await prom?.stop();
  for (const c of [hub, ...clients.values()]) {
    await deleteObject(c, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  }
});

describe('CanaryRelease following a Delivery on two members (lockstep)', () => {
  it('GIVEN the Delivery applied on two members WHEN released THEN both are initialised and a good version is promoted on both, under the Delivery revision', async () => {
    await deliver(rev(1), 'v1', true);
    await release({ skipAnalysis: true });
    let r = await waitFor((x) => x.status?.phase === 'Succeeded');
    expect(r.status?.clusters).toEqual(['member-1', 'member-2']);
    expect(r.status?.lastPromotedRevision).toBe(rev(1));
    await deliver(rev(2), 'v2');
    r = await waitFor((x) => x.status?.phase === 'Succeeded' && x.status.lastPromotedRevision === rev(2));
    for (const m of MEMBERS) {
      expect((await deployment(m, 'web-primary'))?.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION]).toBe(
        r.status?.lastPromotedTemplateHash,
      );
      expect((await deployment(m, 'web'))?.spec?.replicas).toBe(0);
    }
  });

  it('GIVEN a metric failing on member-2 only WHEN released THEN the release rolls back on both and records the Delivery revision', async () => {
    // 0.999 on member-1; no series on member-2, so 0.5 there.
    const query =
      '(label_replace(vector(0.999), "cl", "{{ cluster }}", "", "") unless on(cl) label_replace(vector(1), "cl", "member-2", "", "")) or on() vector(0.5)';
    await release({
      analysis: {
        scoreThreshold: 0.95,
        failureLimit: 1,
        judge: 'threshold',
        confidence: 0.95,
        provider: { type: 'prometheus', address: prom.url, timeout: '5s' },
        metrics: [
          { name: 'success-rate', query, thresholdRange: { min: 0.99 }, weight: 1, onNoData: 'fail' },
        ],
      },
    });
    await deliver(rev(3), 'v3');
    const r = await waitFor((x) => x.status?.phase === 'RolledBack');
    expect(r.status?.revision).toBe(rev(3));
    expect(r.status?.rolledBackRevisions).toEqual([rev(3)]);
    expect(r.status?.rollback).toMatchObject({ metric: 'success-rate', value: '0.5', revision: rev(3) });
    const byCluster = Object.fromEntries((r.status?.measurements ?? []).map((m) => [m.cluster, m.outcome]));
    expect(byCluster).toEqual({ 'member-1': 'Successful', 'member-2': 'Failed' });
    for (const m of MEMBERS) {
      expect((await deployment(m, 'web'))?.spec?.replicas).toBe(0);
      expect((await deployment(m, 'web-primary'))?.spec?.replicas).toBe(2);
    }
  });
});
