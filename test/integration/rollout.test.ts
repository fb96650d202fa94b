import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CanaryRelease, CanaryReleaseSpec } from '../../src/api/canary-release.js';
import { isNotFound } from '../../src/kube/errors.js';
import { Manager } from '../../src/kube/manager.js';
import { createLogger, silentLogger } from '../../src/log.js';
import { MemberClients } from '../../src/placement/member-clients.js';
import { registerRolloutControllers } from '../../src/rollout/register.js';
import { TEMPLATE_HASH_ANNOTATION, type DeploymentLike } from '../../src/rollout/workload.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';
import { deploymentManifest } from '../support/manifests.js';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-basic.js';
import { installGatewayApiCrds } from '../support/gateway-api.js';
import { createNamespace, deleteObject, ensureCrds, eventsAbout } from '../support/sluice-objects.js';

const hub = testClient('hub');
const ns = uniqueName('rol');
let manager: Manager;
let prom: PrometheusHandle;
let storage: string;

async function apply(obj: Record<string, unknown>): Promise<void> {
  await hub.raw.applyRaw(obj as unknown as KubernetesObject, { fieldManager: 'sluice-test', force: true });
}

/** The target, as a Delivery would apply it: 2 replicas, version `v` in an env var of the template. */
async function target(name: string, v: string): Promise<void> {
  const d = deploymentManifest(name, 2) as ReturnType<typeof deploymentManifest> & {
    metadata: Record<string, unknown>;
  };
  d.spec.template.spec.containers[0] = {
    ...d.spec.template.spec.containers[0]!,
    env: [{ name: 'VERSION', value: v }],
  } as never;
  await apply({ ...d, metadata: { name, namespace: ns } });
}

/** A new version of the target: only the template changes (a merge patch leaves the rollout's replicas alone). */
async function newVersion(name: string, v: string): Promise<void> {
  await hub.raw.mergePatch(
    { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: ns, name } },
    {
      spec: {
        template: {
          spec: {
            containers: [
              { name: 'web', image: 'example.invalid/web:1', env: [{ name: 'VERSION', value: v }] },
            ],
          },
        },
      },
    },
  );
}

async function release(name: string, spec: Partial<CanaryReleaseSpec>): Promise<void> {
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: ns, name },
    spec: {
      targetRef: { kind: 'Deployment', name },
      service: { port: 80 },
      strategy: 'canary',
      trafficRouting: { provider: 'replicas' },
      steps: { weights: [50] },
      interval: '2s',
      ...spec,
    },
  });
}

async function get(name: string): Promise<CanaryRelease> {
  return hub.raw.getRaw<CanaryRelease & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: ns, name },
  });
}

async function waitFor(
  name: string,
  check: (r: CanaryRelease) => boolean,
  timeoutMs = 60_000,
): Promise<CanaryRelease> {
  let last: CanaryRelease | undefined;
  try {
    return await eventually(async () => {
      last = await get(name);
      return check(last) ? last : undefined;
    }, timeoutMs);
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status, null, 1)}`);
  }
}

const phase = (p: string) => (r: CanaryRelease) => r.status?.phase === p;

async function deployment(name: string): Promise<DeploymentLike | undefined> {
  try {
    return await hub.raw.getRaw<DeploymentLike>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace: ns, name },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function request(name: string, action: string): Promise<string> {
  const value = new Date().toISOString();
  await hub.raw.mergePatch(
    { apiVersion: 'sluice.dev/v1', kind: 'CanaryRelease', metadata: { namespace: ns, name } },
    { metadata: { annotations: { [`sluice.dev/${action}`]: value } } },
  );
  return value;
}

const reasons = (r: CanaryRelease) => (r.status?.transitions ?? []).map((t) => t.reason);

beforeAll(async () => {
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  prom = await startPrometheus();
  storage = await mkdtemp(join(tmpdir(), 'sluice-rollout-'));
  manager = new Manager({
    client: hub,
    logger: process.env.DEBUG_ROLLOUT ? createLogger({ level: 'warn' }) : silentLogger(),
    leaderElection: false,
  });
  registerRolloutControllers(manager, { members: new MemberClients(), storagePath: storage });
  await manager.start();
});

afterAll(async () => {
  await manager?.stop();
  await prom?.stop();
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  if (storage) await rm(storage, { recursive: true, force: true });
});

describe('CanaryRelease in the hub cluster (replica router)', () => {
  it('GIVEN a new release WHEN first seen THEN the target becomes the primary: Services, 100% primary, target at 0, Succeeded without analysis', async () => {
    await target('init', 'v1');
    await release('init', { skipAnalysis: true });
    const r = await waitFor('init', phase('Succeeded'));
    expect(reasons(r)).toContain('Initialized');
    expect(r.status?.lastPromotedTemplateHash).toBeDefined();
    const primary = await deployment('init-primary');
    expect(primary?.spec?.selector?.matchLabels).toEqual({ app: 'init-primary' });
    expect(primary?.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION]).toBe(
      r.status?.lastPromotedTemplateHash,
    );
    expect(primary?.spec?.replicas).toBe(2);
    expect((await deployment('init'))?.spec?.replicas).toBe(0);
    for (const svc of ['init', 'init-primary', 'init-canary']) {
      const s = await hub.raw.getRaw<KubernetesObject & { spec?: { selector?: Record<string, string> } }>({
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { namespace: ns, name: svc },
      });
      expect(s.spec?.selector).toEqual({ app: svc === 'init-canary' ? 'init' : 'init-primary' });
    }
    expect(r.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('GIVEN a good version and a passing metric on Prometheus WHEN released THEN it is promoted through every step', async () => {
    await target('good', 'v1');
    await release('good', {
      steps: { weights: [25, 50] },
      analysis: {
        scoreThreshold: 0.95,
        failureLimit: 2,
        judge: 'threshold',
        confidence: 0.95,
        provider: { type: 'prometheus', address: prom.url, timeout: '5s' },
        metrics: [
          {
            name: 'success-rate',
            query: 'vector(0.999)',
            thresholdRange: { min: 0.99 },
            weight: 1,
            onNoData: 'fail',
          },
        ],
      },
    });
    const init = await waitFor('good', phase('Succeeded'));
    await newVersion('good', 'v2');
    const done = await waitFor(
      'good',
      (r) =>
        r.status?.phase === 'Succeeded' &&
        r.status.lastPromotedTemplateHash !== init.status?.lastPromotedTemplateHash,
    );
    expect(reasons(done)).toEqual(
      expect.arrayContaining(['NewRevision', 'StepAdvanced', 'AnalysisPassed', 'Promoted']),
    );
    expect(
      done.status?.transitions?.filter((t) => t.reason === 'StepAdvanced').map((t) => t.canaryWeight),
    ).toEqual([25, 50]);
    expect(done.status?.measurements?.every((m) => m.outcome === 'Successful' && m.value === '0.999')).toBe(
      true,
    );
    expect((await deployment('good-primary'))?.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION]).toBe(
      done.status?.lastPromotedTemplateHash,
    );
    expect((await deployment('good'))?.spec?.replicas).toBe(0);
    const events = await eventsAbout(hub, ns, 'CanaryRelease', 'good');
    expect(events.map((e) => e.reason)).toEqual(expect.arrayContaining(['StepAdvanced', 'Promoted']));
  });

  it('GIVEN a failing metric WHEN released THEN it is rolled back with the metric, value and threshold, and 100% on the primary', async () => {
    await target('bad', 'v1');
    await release('bad', {
      analysis: {
        scoreThreshold: 0.95,
        failureLimit: 2,
        judge: 'threshold',
        confidence: 0.95,
        provider: { type: 'prometheus', address: prom.url, timeout: '5s' },
        metrics: [
          {
            name: 'success-rate',
            query: 'vector(0.5)',
            thresholdRange: { min: 0.99 },
            weight: 1,
            onNoData: 'fail',
          },
        ],
      },
    });
    const init = await waitFor('bad', phase('Succeeded'));
    await newVersion('bad', 'v2');
    const started = Date.now();
    const r = await waitFor('bad', phase('RolledBack'));
    // failureLimit × interval, plus the step to 50% and settling.
    expect(Date.now() - started).toBeLessThan(2 * 2000 + 10_000);
    expect(r.status?.rollback).toMatchObject({
      reason: 'AnalysisFailed',
      metric: 'success-rate',
      value: '0.5',
      step: '1/1',
      canaryWeight: 50,
    });
    expect(r.status?.rollback?.threshold).toMatch(/0\.99/);
    expect(r.status?.rolledBackRevisions).toEqual([r.status?.templateHash]);
    expect(r.status?.lastPromotedTemplateHash).toBe(init.status?.lastPromotedTemplateHash);
    expect((await deployment('bad'))?.spec?.replicas).toBe(0);
    expect((await deployment('bad-primary'))?.spec?.replicas).toBe(2);
    expect(r.status?.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'RolledBack',
    });
    const events = await eventsAbout(hub, ns, 'CanaryRelease', 'bad');
    expect(events.filter((e) => e.type === 'Warning').map((e) => e.reason)).toEqual(
      expect.arrayContaining(['AnalysisFailed', 'RolledBack']),
    );
  });

  it('GIVEN a release at a step WHEN the operator pauses, resumes, promotes, aborts and retries THEN each shows in status and Events', async () => {
    await target('ops', 'v1');
    await release('ops', { steps: { weights: [20, 60] }, interval: '1h', skipAnalysis: true });
    await waitFor('ops', phase('Succeeded'));
    await newVersion('ops', 'v2');
    await waitFor('ops', (r) => r.status?.phase === 'Progressing' && r.status.step === '1/2');

    const pause = await request('ops', 'pause');
    let r = await waitFor('ops', phase('Paused'));
    expect(r.status?.acknowledgedRequests?.pause).toBe(pause);
    expect(r.status?.pausedFrom).toBe('Progressing');

    await request('ops', 'resume');
    r = await waitFor('ops', (x) => x.status?.phase === 'Progressing' && reasons(x).includes('Resumed'));
    expect(r.status?.step).toBe('1/2');

    await request('ops', 'promote');
    r = await waitFor(
      'ops',
      (x) => x.status?.phase === 'Succeeded' && reasons(x).includes('PromotedByOperator'),
    );
    expect(reasons(r).slice(-2)).toEqual(['PromotedByOperator', 'Promoted']);

    await newVersion('ops', 'v3');
    await waitFor('ops', (x) => x.status?.phase === 'Progressing' && x.status.step === '1/2');
    await request('ops', 'abort');
    r = await waitFor('ops', phase('RolledBack'));
    expect(r.status?.rollback?.reason).toBe('Aborted');
    expect((await deployment('ops'))?.spec?.replicas).toBe(0);

    await request('ops', 'retry');
    r = await waitFor('ops', (x) => x.status?.phase === 'Progressing' && reasons(x).includes('Retried'));
    expect(r.status?.rolledBackRevisions).toEqual([]);

    // An abort once more: a request is acted on once per value, never twice.
    const abort = await request('ops', 'abort');
    r = await waitFor('ops', phase('RolledBack'));
    expect(r.status?.acknowledgedRequests?.abort).toBe(abort);
    const events = (await eventsAbout(hub, ns, 'CanaryRelease', 'ops')).map((e) => e.reason);
    expect(events).toEqual(
      expect.arrayContaining(['Paused', 'Resumed', 'PromotedByOperator', 'Aborted', 'Retried']),
    );
  });

  it('GIVEN an invalid release THEN Stalled InvalidSpec with the field path, and nothing is created', async () => {
    await target('invalid', 'v1');
    await release('invalid', {
      analysis: {
        scoreThreshold: 0.95,
        failureLimit: 2,
        judge: 'threshold',
        confidence: 0.95,
        provider: { type: 'prometheus', address: prom.url, timeout: '5s' },
        metrics: [
          {
            name: 'broken',
            query: 'sum(rate(x[5m])',
            thresholdRange: { min: 1 },
            weight: 1,
            onNoData: 'fail',
          },
        ],
      },
    });
    const r = await waitFor(
      'invalid',
      (x) => x.status?.conditions?.some((c) => c.type === 'Stalled') === true,
    );
    expect(r.status?.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({ reason: 'InvalidSpec' });
    expect(r.status?.conditions?.find((c) => c.type === 'Stalled')?.message).toMatch(
      /spec\.analysis\.metrics\[0\]\.query/,
    );
    expect(await deployment('invalid-primary')).toBeUndefined();
  });
});

describe('CanaryRelease blue/green (Gateway API HTTPRoute)', () => {
  async function route(name: string): Promise<void> {
    await apply({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { namespace: ns, name },
      spec: {
        parentRefs: [{ name: 'gw' }],
        rules: [
          {
            backendRefs: [
              { name: `${name}-primary`, port: 80, weight: 100 },
              { name: `${name}-canary`, port: 80, weight: 0 },
            ],
          },
        ],
      },
    });
  }
  const weights = async (name: string) => {
    const r = await hub.raw.getRaw<
      KubernetesObject & {
        spec?: { rules?: Array<{ backendRefs?: Array<{ name: string; weight?: number }> }> };
      }
    >({
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'HTTPRoute',
      metadata: { namespace: ns, name },
    });
    return Object.fromEntries((r.spec?.rules?.[0]?.backendRefs ?? []).map((b) => [b.name, b.weight]));
  };
  const bg = (name: string, query: string): Partial<CanaryReleaseSpec> => ({
    strategy: 'blueGreen',
    steps: undefined,
    trafficRouting: { provider: 'gatewayAPI', gatewayAPI: { httpRoute: { name } } },
    scaleDownDelay: '3s',
    analysis: {
      scoreThreshold: 0.95,
      failureLimit: 1,
      judge: 'threshold',
      confidence: 0.95,
      provider: { type: 'prometheus', address: prom.url, timeout: '5s' },
      metrics: [{ name: 'success-rate', query, thresholdRange: { min: 0.99 }, weight: 1, onNoData: 'fail' }],
    },
  });

  beforeAll(async () => {
    await installGatewayApiCrds(hub);
  });

  it('GIVEN blue/green and a passing analysis THEN the canary runs at 0% while analysed, then all traffic switches and the primary runs it', async () => {
    await target('bgok', 'v1');
    await route('bgok');
    await release('bgok', bg('bgok', 'vector(0.999)'));
    const init = await waitFor('bgok', phase('Succeeded'));
    await newVersion('bgok', 'v2');
    const analysed = await waitFor(
      'bgok',
      (r) => r.status?.phase === 'Progressing' && r.status.step === '1/1',
    );
    expect(analysed.status?.canaryWeight).toBe(0);
    expect((await deployment('bgok'))?.spec?.replicas).toBe(2);
    expect(await weights('bgok')).toEqual({ 'bgok-primary': 100, 'bgok-canary': 0 });
    const done = await waitFor(
      'bgok',
      (r) =>
        r.status?.phase === 'Succeeded' &&
        r.status.lastPromotedTemplateHash !== init.status?.lastPromotedTemplateHash,
    );
    expect(reasons(done)).toEqual(expect.arrayContaining(['StepAdvanced', 'AnalysisPassed', 'Promoted']));
    expect(await weights('bgok')).toEqual({ 'bgok-primary': 100, 'bgok-canary': 0 });
    expect((await deployment('bgok-primary'))?.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION]).toBe(
      done.status?.lastPromotedTemplateHash,
    );
    // The old version keeps its pods for scaleDownDelay after the switch, then goes.
    expect(done.status?.primaryRoutedAt).toBeDefined();
    await eventually(async () => (await deployment('bgok'))?.spec?.replicas === 0, 30_000);
  });

  it('GIVEN blue/green and a failing analysis THEN it rolls back and the old version never lost its traffic', async () => {
    await target('bgbad', 'v1');
    await route('bgbad');
    await release('bgbad', bg('bgbad', 'vector(0.5)'));
    const init = await waitFor('bgbad', phase('Succeeded'));
    await newVersion('bgbad', 'v2');
    const seen = new Set<string>();
    const r = await waitFor('bgbad', (x) => {
      void weights('bgbad').then((w) => seen.add(JSON.stringify(w)));
      return x.status?.phase === 'RolledBack';
    });
    expect([...seen]).toEqual([JSON.stringify({ 'bgbad-primary': 100, 'bgbad-canary': 0 })]);
    expect(r.status?.rollback).toMatchObject({ reason: 'AnalysisFailed', canaryWeight: 0 });
    expect((await deployment('bgbad-primary'))?.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION]).toBe(
      init.status?.lastPromotedTemplateHash,
    );
    await eventually(async () => (await deployment('bgbad'))?.spec?.replicas === 0, 30_000);
  });
});
