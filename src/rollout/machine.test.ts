import { describe, expect, it } from '@jest/globals';
import type { CanaryReleaseSpec, CanaryReleaseStatus } from '../api/canary-release.js';
import { probesFor, step, type Action, type StepResult } from './machine.js';
import type { ClusterObservation, Observations } from './observations.js';
import { gatesBefore, stepWeights } from './plan.js';

const NOW = new Date('2025-01-01T12:00:00Z');
const t = (secondsAgo: number): string =>
  new Date(NOW.getTime() - secondsAgo * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

function spec(over: Partial<CanaryReleaseSpec> = {}): CanaryReleaseSpec {
  return {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    service: { port: 80, primarySuffix: '-primary', canarySuffix: '-canary' },
    strategy: 'canary',
    trafficRouting: { provider: 'gatewayAPI', gatewayAPI: { httpRoute: { name: 'web' } } },
    steps: { weights: [10, 50] },
    interval: '30s',
    analysis: {
      scoreThreshold: 0.95,
      failureLimit: 2,
      judge: 'threshold',
      confidence: 0.95,
      metrics: [
        { name: 'ok', query: 'vector(1)', weight: 1, onNoData: 'fail', thresholdRange: { min: 0.9 } },
      ],
    },
    skipAnalysis: false,
    gitWriteBack: { mode: 'none' },
    ...over,
  };
}

/** A cluster where everything is converged for `hash` with `canary`% routed and the target at `replicas`. */
function cluster(
  over: Partial<ClusterObservation> & { hash?: string; canary?: number; replicas?: number } = {},
): ClusterObservation {
  const { hash = 'h2', canary = 0, replicas = 2, ...rest } = over;
  return {
    name: 'm1',
    target: { hash, replicas, ready: true },
    primary: { hash: 'h1', ready: true },
    services: true,
    split: { primary: 100 - canary, canary },
    ...rest,
  };
}

function obs(clusters: ClusterObservation[], over: Partial<Observations> = {}): Observations {
  return { clusters, requests: {}, ...over };
}

const idleStatus: CanaryReleaseStatus = {
  phase: 'Succeeded',
  step: '0/2',
  canaryWeight: 0,
  templateHash: 'h1',
  revision: 'h1',
  lastPromotedTemplateHash: 'h1',
  lastPromotedRevision: 'h1',
  phaseSince: t(600),
};

const running = (over: Partial<CanaryReleaseStatus> = {}): CanaryReleaseStatus => ({
  ...idleStatus,
  phase: 'Progressing',
  templateHash: 'h2',
  revision: 'h2',
  step: '1/2',
  canaryWeight: 10,
  failedChecks: 0,
  stepSince: t(31),
  ...over,
});

const pass = { verdict: 'pass' as const, score: 1, measurements: [], message: 'all metrics pass' };
const fail = {
  verdict: 'fail' as const,
  score: 0,
  measurements: [
    {
      metric: 'ok',
      canaryWeight: 10,
      value: '0.5',
      threshold: '>= 0.9',
      outcome: 'Failed' as const,
      measuredAt: t(0),
    },
  ],
  failing: { metric: 'ok', value: '0.5', threshold: '>= 0.9' },
  message: 'ok = 0.5 below 0.9',
};
const hold = { verdict: 'hold' as const, score: 0, measurements: [], message: 'ok: no data' };

function run(s: CanaryReleaseSpec, status: CanaryReleaseStatus | undefined, o: Observations): StepResult {
  return step({ spec: s, status, generation: 3, observations: o, now: NOW });
}
const types = (r: StepResult): string[] =>
  r.actions.map(
    (a: Action) => `${a.type}:${'canary' in a ? a.canary : 'replicas' in a ? a.replicas : a.hash}`,
  );
const reasons = (r: StepResult): string[] => r.transitions.map((x) => x.reason);

describe('plan', () => {
  it.each<[string, Partial<CanaryReleaseSpec>, number[]]>([
    ['explicit weights', { steps: { weights: [5, 20, 50] } }, [5, 20, 50]],
    ['stepWeight up to maxWeight', { steps: { stepWeight: 20, maxWeight: 60 } }, [20, 40, 60]],
    [
      'stepWeight not dividing maxWeight ends at maxWeight',
      { steps: { stepWeight: 20, maxWeight: 50 } },
      [20, 40, 50],
    ],
    ['blue/green: one step at 0%', { strategy: 'blueGreen', steps: undefined }, [0]],
  ])('GIVEN %s THEN the step weights are %j', (_w, over, weights) => {
    expect(stepWeights(spec(over))).toEqual(weights);
  });

  it('GIVEN gates at every point THEN each move has its own gates, in order', () => {
    const s = spec({
      gates: [
        { name: 'pre', at: 'preRollout', type: 'manual' },
        { name: 'inc', at: 'confirmTrafficIncrease', type: 'manual' },
        { name: 'prom', at: 'confirmPromotion', type: 'manual' },
      ],
    });
    expect(gatesBefore(s, 0, 2).map((g) => g.name)).toEqual(['pre', 'inc']);
    expect(gatesBefore(s, 1, 2).map((g) => g.name)).toEqual(['inc']);
    expect(gatesBefore(s, 2, 2).map((g) => g.name)).toEqual(['prom']);
  });
});

describe('step: Initializing (first sighting)', () => {
  it.each<[string, ClusterObservation, string[], string | undefined]>([
    [
      'no primary yet',
      cluster({ hash: 'h1', primary: undefined, services: false }),
      ['applyPrimary:h1'],
      'Initializing',
    ],
    [
      'primary copied but not ready',
      cluster({ hash: 'h1', primary: { hash: 'h1', ready: false } }),
      [],
      'Initializing',
    ],
    [
      'primary ready, target still up and no route',
      cluster({ hash: 'h1', primary: { hash: 'h1', ready: true }, split: undefined }),
      ['scaleTarget:0', 'route:0'],
      'Initializing',
    ],
    [
      'everything converged',
      cluster({ hash: 'h1', primary: { hash: 'h1', ready: true }, replicas: 0 }),
      [],
      'Succeeded',
    ],
  ])('GIVEN %s WHEN stepped THEN actions %j and phase %s', (_w, c, actions, phase) => {
    const r = run(spec(), undefined, obs([c]));
    expect(types(r)).toEqual(actions);
    expect(r.status.phase).toBe(phase);
  });

  it('GIVEN a converged first sighting THEN Succeeded/Initialized records the promoted revision without analysis', () => {
    const r = run(
      spec({ deliveryRef: { name: 'd' } }),
      { phase: 'Initializing' },
      obs([cluster({ hash: 'h1', primary: { hash: 'h1', ready: true }, replicas: 0 })], {
        deliveryRevision: 'main@sha1:aa',
      }),
    );
    expect(r.status).toMatchObject({
      phase: 'Succeeded',
      lastPromotedTemplateHash: 'h1',
      lastPromotedRevision: 'main@sha1:aa',
    });
    expect(reasons(r)).toEqual(['Initialized']);
    expect(r.status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('GIVEN the target is missing THEN it waits, says so, and does nothing', () => {
    const r = run(spec(), { phase: 'Initializing' }, obs([cluster({ target: undefined })]));
    expect(r.actions).toEqual([]);
    expect(r.status.phase).toBe('Initializing');
    expect(r.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      /target Deployment web not found on m1/,
    );
  });

  it('GIVEN no cluster at all THEN it waits for the Delivery', () => {
    const r = run(spec(), undefined, obs([]));
    expect(r.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(/no cluster/);
  });
});

describe('step: idle phases', () => {
  it.each<[string, CanaryReleaseStatus, ClusterObservation, string | undefined, string[]]>([
    ['Succeeded, same template', idleStatus, cluster({ hash: 'h1', replicas: 0 }), 'Succeeded', []],
    [
      'Succeeded, target scaled up by someone',
      idleStatus,
      cluster({ hash: 'h1', replicas: 3 }),
      'Succeeded',
      ['scaleTarget:0'],
    ],
    [
      'Succeeded, traffic moved by someone',
      idleStatus,
      cluster({ hash: 'h1', replicas: 0, canary: 30 }),
      'Succeeded',
      ['route:0'],
    ],
    [
      'Succeeded, new template',
      idleStatus,
      cluster({ hash: 'h2', replicas: 0 }),
      'Progressing',
      ['scaleTarget:up'],
    ],
    [
      'RolledBack, still the bad template',
      { ...idleStatus, phase: 'RolledBack', templateHash: 'h2', rolledBackRevisions: ['h2'] },
      cluster({ hash: 'h2', replicas: 0 }),
      'RolledBack',
      [],
    ],
    [
      'RolledBack, reverted to the promoted template',
      { ...idleStatus, phase: 'RolledBack', templateHash: 'h2' },
      cluster({ hash: 'h1', replicas: 0 }),
      'RolledBack',
      [],
    ],
    [
      'RolledBack, a newer template',
      { ...idleStatus, phase: 'RolledBack', templateHash: 'h2' },
      cluster({ hash: 'h3', replicas: 0 }),
      'Progressing',
      ['scaleTarget:up'],
    ],
    [
      'Failed, a newer template',
      { ...idleStatus, phase: 'Failed', templateHash: 'h2' },
      cluster({ hash: 'h3', replicas: 0 }),
      'Progressing',
      ['scaleTarget:up'],
    ],
  ])('GIVEN %s WHEN stepped THEN phase %s, actions %j', (_w, status, c, phase, actions) => {
    const r = run(spec(), status, obs([c]));
    expect(r.status.phase).toBe(phase);
    expect(types(r)).toEqual(actions);
  });

  it('GIVEN two clusters that disagree on the template THEN no run starts', () => {
    const r = run(
      spec(),
      idleStatus,
      obs([cluster({ hash: 'h2', replicas: 0 }), cluster({ name: 'm2', hash: 'h1', replicas: 0 })]),
    );
    expect(r.status.phase).toBe('Succeeded');
    expect(r.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(/differs between clusters/);
  });

  it('GIVEN a new template WHEN the Delivery has not reported its revision yet THEN no run starts', () => {
    const s = spec({ deliveryRef: { name: 'd' } });
    const r = run(
      s,
      idleStatus,
      obs([cluster({ replicas: 0 })], {
        deliveryRevision: 'main@sha1:aa',
        deliveryPending: 'source at main@sha1:bb',
      }),
    );
    expect(r.status.phase).toBe('Succeeded');
    expect(r.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      /waiting for the Delivery: source at main@sha1:bb/,
    );
    const mid = run(
      s,
      running(),
      obs([cluster({ hash: 'h3', canary: 10 })], { deliveryPending: 'applying' }),
    );
    expect(mid.status.templateHash).toBe('h2');
  });

  it('GIVEN a new run THEN it starts at step 0/2 with the Delivery revision under test and a fresh count', () => {
    const r = run(
      spec({ deliveryRef: { name: 'd' } }),
      { ...idleStatus, failedChecks: 5, measurements: [fail.measurements[0]!] },
      obs([cluster({ replicas: 0 })], { deliveryRevision: 'main@sha1:bb' }),
    );
    expect(r.status).toMatchObject({
      phase: 'Progressing',
      step: '0/2',
      canaryWeight: 0,
      failedChecks: 0,
      revision: 'main@sha1:bb',
      templateHash: 'h2',
      measurements: [],
    });
    expect(reasons(r)).toEqual(['NewRevision']);
  });
});

describe('step: Progressing', () => {
  it('GIVEN step 0 and no gates WHEN the target is ready THEN the first weight is routed', () => {
    const r = run(spec(), running({ step: '0/2', canaryWeight: 0 }), obs([cluster()]));
    expect(r.status).toMatchObject({ phase: 'Progressing', step: '1/2', canaryWeight: 10 });
    expect(types(r)).toEqual(['route:10']);
    expect(reasons(r)).toEqual(['StepAdvanced']);
  });

  it('GIVEN step 0 WHEN the target is not ready THEN it waits without moving', () => {
    const r = run(
      spec(),
      running({ step: '0/2', canaryWeight: 0 }),
      obs([cluster({ target: { hash: 'h2', replicas: 2, ready: false } })]),
    );
    expect(r.status.step).toBe('0/2');
    expect(r.transitions).toEqual([]);
  });

  it('GIVEN step 0 and the target scaled to 0 THEN it is scaled up', () => {
    const r = run(spec(), running({ step: '0/2', canaryWeight: 0 }), obs([cluster({ replicas: 0 })]));
    expect(types(r)).toContain('scaleTarget:up');
  });

  it.each<[string, Observations['analysis'], Partial<CanaryReleaseStatus>, string, string[]]>([
    ['a pass', pass, { step: '2/2', canaryWeight: 50 }, 'Progressing', ['StepAdvanced']],
    ['a hold (no data)', hold, { step: '1/2', canaryWeight: 10, failedChecks: 0 }, 'Progressing', []],
    ['a first fail', fail, { step: '1/2', failedChecks: 1 }, 'Progressing', ['AnalysisFailed']],
  ])('GIVEN step 1/2 and %s THEN %j', (_w, analysis, expected, phase, rs) => {
    const r = run(spec(), running(), obs([cluster({ canary: 10 })], { analysis }));
    expect(r.status).toMatchObject({ ...expected, phase });
    expect(reasons(r)).toEqual(rs);
  });

  it('GIVEN a hold THEN the condition says why it is not promoted', () => {
    const r = run(spec(), running(), obs([cluster({ canary: 10 })], { analysis: hold }));
    expect(r.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      /held, not promoting: ok: no data/,
    );
  });

  it('GIVEN the failure limit reached THEN RollingBack with the failing metric, traffic to the primary at once', () => {
    const r = run(spec(), running({ failedChecks: 1 }), obs([cluster({ canary: 10 })], { analysis: fail }));
    expect(r.status.phase).toBe('RollingBack');
    expect(r.status.rollback).toMatchObject({
      reason: 'AnalysisFailed',
      step: '1/2',
      canaryWeight: 10,
      metric: 'ok',
      value: '0.5',
      threshold: '>= 0.9',
      revision: 'h2',
    });
    expect(r.status.rolledBackRevisions).toEqual(['h2']);
    // The target keeps its pods for scaleDownDelay: proxies may still be applying the route.
    expect(types(r)).toEqual(['route:0']);
    expect(r.status.primaryRoutedAt).toBeDefined();
    expect(r.status.measurements).toHaveLength(1);
  });

  it('GIVEN failureLimit 0 THEN the first failure rolls back', () => {
    const s = spec({ analysis: { ...spec().analysis, failureLimit: 0 } });
    expect(run(s, running(), obs([cluster({ canary: 10 })], { analysis: fail })).status.phase).toBe(
      'RollingBack',
    );
  });

  it('GIVEN the interval not over THEN no analysis is asked for and it requeues when it is', () => {
    const st = running({ stepSince: t(10) });
    expect(probesFor(spec(), st, obs([cluster({ canary: 10 })]), NOW).analysis).toBe(false);
    const r = run(spec(), st, obs([cluster({ canary: 10 })]));
    expect(r.requeueAfterMs).toBe(20_000);
    expect(r.transitions).toEqual([]);
  });

  it('GIVEN the interval over THEN the analysis is asked for', () => {
    expect(probesFor(spec(), running(), obs([cluster({ canary: 10 })]), NOW).analysis).toBe(true);
  });

  it('GIVEN the interval over but the analysis was not run THEN nothing moves', () => {
    const r = run(spec(), running(), obs([cluster({ canary: 10 })]));
    expect(r.status.step).toBe('1/2');
    expect(r.transitions).toEqual([]);
  });

  it('GIVEN skipAnalysis THEN steps advance on the interval without analysis', () => {
    const s = spec({ skipAnalysis: true });
    expect(probesFor(s, running(), obs([cluster({ canary: 10 })]), NOW).analysis).toBe(false);
    expect(run(s, running(), obs([cluster({ canary: 10 })])).status.step).toBe('2/2');
  });

  it('GIVEN the last step passes THEN Promoting', () => {
    const r = run(
      spec(),
      running({ step: '2/2', canaryWeight: 50 }),
      obs([cluster({ canary: 50 })], { analysis: pass }),
    );
    expect(r.status.phase).toBe('Promoting');
    expect(reasons(r)).toEqual(['AnalysisPassed']);
  });

  it('GIVEN the router drifted from the weight THEN it is routed again', () => {
    expect(types(run(spec(), running({ stepSince: t(1) }), obs([cluster({ canary: 0 })])))).toEqual([
      'route:10',
    ]);
  });

  it('GIVEN a newer template mid-run THEN the run starts again for it', () => {
    const r = run(spec(), running(), obs([cluster({ hash: 'h3', canary: 10 })], { analysis: pass }));
    expect(r.status).toMatchObject({ phase: 'Progressing', step: '0/2', templateHash: 'h3' });
    expect(reasons(r)).toEqual(['NewRevision']);
  });

  it('GIVEN the target deleted mid-run THEN it rolls back and ends Failed, without recording a bad revision', () => {
    const r = run(spec(), running(), obs([cluster({ target: undefined, canary: 10 })]));
    expect(r.status.phase).toBe('RollingBack');
    expect(r.status.rolledBackRevisions).toBeUndefined();
    const r2 = run(spec(), r.status, obs([cluster({ target: undefined })]));
    expect(r2.status.phase).toBe('Failed');
  });

  it('GIVEN an unreachable cluster THEN nothing advances and it says which', () => {
    const r = run(
      spec(),
      running(),
      obs([cluster({ canary: 10 }), { name: 'm2', error: 'connection refused', services: false }], {
        analysis: pass,
      }),
    );
    expect(r.status.step).toBe('1/2');
    expect(r.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      /m2 \(connection refused\)/,
    );
    expect(
      probesFor(spec(), running(), obs([{ name: 'm2', error: 'x', services: false }]), NOW).analysis,
    ).toBe(false);
  });

  it('GIVEN two clusters THEN weights are set on both (lockstep)', () => {
    const r = run(
      spec(),
      running({ step: '0/2', canaryWeight: 0 }),
      obs([cluster(), cluster({ name: 'm2' })]),
    );
    expect(r.actions).toEqual([
      { type: 'route', cluster: 'm1', canary: 10 },
      { type: 'route', cluster: 'm2', canary: 10 },
    ]);
  });
});

describe('step: the replica router', () => {
  const rs = spec({ trafficRouting: { provider: 'replicas' } });
  it('GIVEN a new template THEN the target is not scaled up (the router sizes it)', () => {
    expect(types(run(rs, idleStatus, obs([cluster({ replicas: 0 })])))).toEqual([]);
  });
  it('GIVEN step 0 with the target at 0 THEN the first weight is routed all the same', () => {
    const r = run(rs, running({ step: '0/2', canaryWeight: 0 }), obs([cluster({ replicas: 0 })]));
    expect(types(r)).toEqual(['route:10']);
  });
});

describe('step: gates', () => {
  const gated = spec({
    gates: [
      {
        name: 'pre',
        at: 'preRollout',
        type: 'webhook',
        webhook: { url: 'http://x', timeout: '1s', retries: 0 },
      },
      { name: 'more', at: 'confirmTrafficIncrease', type: 'manual' },
      {
        name: 'prom',
        at: 'confirmPromotion',
        type: 'webhook',
        webhook: { url: 'http://y', timeout: '1s', retries: 0 },
      },
      {
        name: 'rb',
        at: 'rollback',
        type: 'webhook',
        webhook: { url: 'http://z', timeout: '1s', retries: 0 },
      },
    ],
  });

  it('GIVEN step 0 with a preRollout gate THEN it waits at it and asks for it', () => {
    const r = run(gated, running({ step: '0/2', canaryWeight: 0 }), obs([cluster()]));
    expect(r.status.gate).toMatchObject({ name: 'pre', attempts: 0 });
    expect(reasons(r)).toEqual(['WaitingAtGate']);
    expect(probesFor(gated, r.status, obs([cluster()]), NOW).gate?.name).toBe('pre');
  });

  it('GIVEN the webhook gate closed THEN it keeps waiting and counts the attempts', () => {
    const st = running({ step: '0/2', canaryWeight: 0, gate: { name: 'pre', since: t(5), attempts: 1 } });
    const r = run(
      gated,
      st,
      obs([cluster()], { gate: { name: 'pre', open: false, attempts: 3, message: 'HTTP 403' } }),
    );
    expect(r.status.gate).toMatchObject({ name: 'pre', attempts: 4, message: 'HTTP 403' });
    expect(r.status.step).toBe('0/2');
  });

  it('GIVEN the webhook gate opens THEN it moves to the next gate of the same point', () => {
    const st = running({ step: '0/2', canaryWeight: 0, gate: { name: 'pre', since: t(5), attempts: 1 } });
    const r = run(
      gated,
      st,
      obs([cluster()], { gate: { name: 'pre', open: true, attempts: 1, message: '200' } }),
    );
    expect(r.status.gate?.name).toBe('more');
    expect(reasons(r)).toEqual(['GateOpened']);
  });

  it('GIVEN a manual gate THEN only sluice promote moves on (to Promoting, skipping the rest)', () => {
    const st = running({ step: '0/2', canaryWeight: 0, gate: { name: 'more', since: t(5), attempts: 0 } });
    const waiting = run(gated, st, obs([cluster()]));
    expect(waiting.status.gate?.name).toBe('more');
    expect(waiting.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(/sluice promote/);
    expect(probesFor(gated, st, obs([cluster()]), NOW).gate).toBeUndefined();
    const promoted = run(gated, st, obs([cluster()], { requests: { promote: 'r1' } }));
    expect(promoted.status.phase).toBe('Promoting');
  });

  it('GIVEN the last step passes with a confirmPromotion gate THEN WaitingPromotion until it opens', () => {
    const r = run(
      gated,
      running({ step: '2/2', canaryWeight: 50 }),
      obs([cluster({ canary: 50 })], { analysis: pass }),
    );
    expect(r.status).toMatchObject({ phase: 'WaitingPromotion', gate: { name: 'prom' } });
    const r2 = run(
      gated,
      r.status,
      obs([cluster({ canary: 50 })], { gate: { name: 'prom', open: true, attempts: 1, message: 'ok' } }),
    );
    expect(r2.status.phase).toBe('Promoting');
  });

  it('GIVEN WaitingPromotion and the analysis keeps failing THEN it rolls back', () => {
    const st = running({
      phase: 'WaitingPromotion',
      step: '2/2',
      canaryWeight: 50,
      failedChecks: 1,
      gate: { name: 'prom', since: t(100), attempts: 0 },
    });
    expect(probesFor(gated, st, obs([cluster({ canary: 50 })]), NOW).analysis).toBe(true);
    expect(run(gated, st, obs([cluster({ canary: 50 })], { analysis: fail })).status.phase).toBe(
      'RollingBack',
    );
  });

  it('GIVEN a rollback gate answering 2xx THEN it rolls back with reason RollbackGate', () => {
    expect(probesFor(gated, running(), obs([cluster()]), NOW).rollbackGates.map((g) => g.name)).toEqual([
      'rb',
    ]);
    const r = run(
      gated,
      running(),
      obs([cluster({ canary: 10 })], {
        rollbackGate: { name: 'rb', open: true, attempts: 1, message: 'HTTP 200' },
      }),
    );
    expect(r.status.rollback?.reason).toBe('RollbackGate');
    expect(probesFor(gated, idleStatus, obs([cluster()]), NOW).rollbackGates).toEqual([]);
  });
});

describe('step: Promoting', () => {
  const promoting = running({ phase: 'Promoting', step: '2/2', canaryWeight: 50 });
  it.each<[string, ClusterObservation, string[], string]>([
    ['primary still old', cluster({ canary: 50 }), ['applyPrimary:h2'], 'Promoting'],
    [
      'primary copied, not ready',
      cluster({ canary: 50, primary: { hash: 'h2', ready: false } }),
      [],
      'Promoting',
    ],
    [
      'primary ready',
      cluster({ canary: 50, primary: { hash: 'h2', ready: true } }),
      ['route:0'],
      'Promoting',
    ],
    [
      'all traffic on the primary, the target still up (scaled down later, after scaleDownDelay)',
      cluster({ canary: 0, primary: { hash: 'h2', ready: true } }),
      [],
      'Succeeded',
    ],
    [
      'all converged',
      cluster({ canary: 0, replicas: 0, primary: { hash: 'h2', ready: true } }),
      [],
      'Succeeded',
    ],
  ])('GIVEN %s THEN actions %j, phase %s', (_w, c, actions, phase) => {
    const r = run(spec(), promoting, obs([c]));
    expect(types(r)).toEqual(actions);
    expect(r.status.phase).toBe(phase);
  });

  it('GIVEN promotion done THEN the promoted revision is recorded', () => {
    const r = run(
      spec(),
      promoting,
      obs([cluster({ canary: 0, replicas: 0, primary: { hash: 'h2', ready: true } })]),
    );
    expect(r.status).toMatchObject({
      lastPromotedTemplateHash: 'h2',
      lastPromotedRevision: 'h2',
      canaryWeight: 0,
    });
    expect(reasons(r)).toEqual(['Promoted']);
  });

  it('GIVEN blue/green THEN all traffic switches to the canary while the primary is replaced', () => {
    const s = spec({ strategy: 'blueGreen', steps: undefined });
    const r = run(s, { ...promoting, step: '1/1', canaryWeight: 0 }, obs([cluster({ canary: 0 })]));
    expect(types(r)).toEqual(['route:100', 'applyPrimary:h2']);
  });

  it('GIVEN abort while Promoting THEN it is ignored and acknowledged', () => {
    const r = run(spec(), promoting, obs([cluster({ canary: 50 })], { requests: { abort: 'a1' } }));
    expect(r.status.phase).toBe('Promoting');
    expect(r.status.acknowledgedRequests).toEqual({ abort: 'a1' });
    expect(reasons(r)).toEqual(['RequestIgnored']);
  });
});

describe('step: RollingBack', () => {
  const rolling = running({
    phase: 'RollingBack',
    phaseSince: t(5),
    rollback: {
      at: t(5),
      step: '1/2',
      canaryWeight: 10,
      reason: 'AnalysisFailed',
      message: 'x',
      revision: 'h2',
      writeBack: { mode: 'none' },
    },
  });
  it.each<[string, ClusterObservation, string[], string]>([
    [
      'traffic still on the canary (killed before routing)',
      cluster({ canary: 10 }),
      ['route:0'],
      'RollingBack',
    ],
    ['routed, target up (scaled down after scaleDownDelay)', cluster({ canary: 0 }), [], 'RolledBack'],
    ['converged', cluster({ canary: 0, replicas: 0 }), [], 'RolledBack'],
  ])('GIVEN %s THEN actions %j, phase %s', (_w, c, actions, phase) => {
    const r = run(spec(), rolling, obs([c]));
    expect(types(r)).toEqual(actions);
    expect(r.status.phase).toBe(phase);
  });

  it('GIVEN 0% routed but the router objects mid-change (killed between two writes) THEN routed again, not done', () => {
    const r = run(spec(), rolling, obs([cluster({ canary: 0, replicas: 0, splitSettled: false })]));
    expect(types(r)).toEqual(['route:0']);
    expect(r.status.phase).toBe('RollingBack');
  });

  it('GIVEN RolledBack THEN Ready=False and Stalled names the reason', () => {
    const r = run(spec(), rolling, obs([cluster({ canary: 0, replicas: 0 })]));
    expect(r.status.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'RolledBack',
    });
  });

  it('GIVEN RollingBack longer than rollbackSLA THEN Stalled RollbackSLAExceeded', () => {
    const r = run(spec({ rollbackSLA: '2s' }), rolling, obs([cluster({ canary: 10 })]));
    expect(r.status.conditions?.find((c) => c.type === 'Stalled')?.reason).toBe('RollbackSLAExceeded');
    const r2 = run(spec({ rollbackSLA: '1m' }), rolling, obs([cluster({ canary: 10 })]));
    expect(r2.status.conditions?.find((c) => c.type === 'Reconciling')?.reason).toBe('RollingBack');
  });
});

describe('step: Git write-back', () => {
  const wbSpec = spec({ deliveryRef: { name: 'd' }, gitWriteBack: { mode: 'revert' } });
  const rolled = running({
    phase: 'RolledBack',
    rollback: {
      at: t(5),
      step: '1/2',
      canaryWeight: 10,
      reason: 'AnalysisFailed',
      message: 'x',
      revision: 'main@sha1:bb',
    },
  });

  it('GIVEN a rollback with mode revert not yet pushed THEN write-back is asked for', () => {
    expect(probesFor(wbSpec, rolled, obs([cluster()]), NOW).writeBack).toBe(true);
    expect(probesFor(spec(), rolled, obs([cluster()]), NOW).writeBack).toBe(false);
  });

  it('GIVEN the push succeeded THEN the commit is recorded and no more write-back is asked for', () => {
    const r = run(
      wbSpec,
      rolled,
      obs([cluster({ hash: 'h2', replicas: 0 })], {
        writeBack: { ok: true, method: 'revert', commit: 'c0ffee' },
      }),
    );
    expect(r.status.rollback?.writeBack).toMatchObject({
      mode: 'revert',
      method: 'revert',
      commit: 'c0ffee',
    });
    expect(reasons(r)).toEqual(['RevertPushed']);
    expect(probesFor(wbSpec, r.status, obs([cluster()]), NOW).writeBack).toBe(false);
  });

  it('GIVEN the push failed THEN the error is kept, one transition, and it is retried', () => {
    const r = run(
      wbSpec,
      rolled,
      obs([cluster({ hash: 'h2', replicas: 0 })], { writeBack: { ok: false, error: 'HTTP 500' } }),
    );
    expect(r.status.rollback?.writeBack).toEqual({ mode: 'revert', error: 'HTTP 500' });
    expect(reasons(r)).toEqual(['WriteBackFailed']);
    const again = run(
      wbSpec,
      r.status,
      obs([cluster({ hash: 'h2', replicas: 0 })], { writeBack: { ok: false, error: 'HTTP 500' } }),
    );
    expect(reasons(again)).toEqual([]);
    expect(probesFor(wbSpec, again.status, obs([cluster()]), NOW).writeBack).toBe(true);
  });
});

describe('step: operator requests', () => {
  it.each<[string, CanaryReleaseStatus, Observations['requests'], string, string[]]>([
    ['abort while Progressing', running(), { abort: 'a1' }, 'RollingBack', ['Aborted']],
    ['pause while Progressing', running({ stepSince: t(1) }), { pause: 'p1' }, 'Paused', ['Paused']],
    ['pause while Succeeded', idleStatus, { pause: 'p1' }, 'Paused', ['Paused']],
    [
      'resume while Paused',
      running({ phase: 'Paused', pausedFrom: 'Progressing', stepSince: t(1) }),
      { resume: 'r1' },
      'Progressing',
      ['Resumed'],
    ],
    [
      'abort while Paused in a run',
      running({ phase: 'Paused', pausedFrom: 'Progressing' }),
      { abort: 'a1' },
      'RollingBack',
      ['Aborted'],
    ],
    [
      'promote while Progressing',
      running({ stepSince: t(1) }),
      { promote: 'x' },
      'Promoting',
      ['PromotedByOperator'],
    ],
    [
      'retry while RolledBack',
      { ...idleStatus, phase: 'RolledBack', templateHash: 'h2', rolledBackRevisions: ['h2'] },
      { retry: 'r' },
      'Progressing',
      ['Retried'],
    ],
    [
      'resume while Progressing (ignored)',
      running({ stepSince: t(1) }),
      { resume: 'r1' },
      'Progressing',
      ['RequestIgnored'],
    ],
    ['abort while Succeeded (ignored)', idleStatus, { abort: 'a1' }, 'Succeeded', ['RequestIgnored']],
    ['retry while Succeeded (ignored)', idleStatus, { retry: 'r' }, 'Succeeded', ['RequestIgnored']],
    [
      'pause while RollingBack (ignored)',
      running({ phase: 'RollingBack' }),
      { pause: 'p' },
      'RollingBack',
      ['RequestIgnored'],
    ],
  ])('GIVEN %s THEN phase %s and transitions %j', (_w, status, requests, phase, rs) => {
    const c =
      status.phase === 'Succeeded'
        ? cluster({ hash: 'h1', replicas: 0 })
        : cluster({ canary: status.canaryWeight ?? 0 });
    const r = run(spec(), status, obs([c], { requests }));
    expect(r.status.phase).toBe(phase);
    expect(reasons(r)).toEqual(rs);
    for (const [a, v] of Object.entries(requests))
      expect(r.status.acknowledgedRequests?.[a as 'abort']).toBe(v);
  });

  it('GIVEN a request already acknowledged THEN it is not acted on again', () => {
    const r = run(
      spec(),
      running({ acknowledgedRequests: { abort: 'a1' } }),
      obs([cluster({ canary: 10 })], { requests: { abort: 'a1' } }),
    );
    expect(r.status.phase).toBe('Progressing');
  });

  it('GIVEN pause then resume requested together THEN they apply in the order of their values', () => {
    const r = run(
      spec(),
      running({ stepSince: t(1) }),
      obs([cluster({ canary: 10 })], {
        requests: { pause: '2025-01-01T11:00:00Z', resume: '2025-01-01T11:00:05Z' },
      }),
    );
    expect(reasons(r)).toEqual(['Paused', 'Resumed']);
    expect(r.status.phase).toBe('Progressing');
  });

  it('GIVEN Paused THEN the analysis is not asked for and nothing advances', () => {
    const st = running({ phase: 'Paused', pausedFrom: 'Progressing' });
    expect(probesFor(spec(), st, obs([cluster({ canary: 10 })]), NOW).analysis).toBe(false);
    const r = run(spec(), st, obs([cluster({ canary: 10 })], { analysis: pass }));
    expect(r.status.step).toBe('1/2');
  });

  it('GIVEN Paused from Succeeded THEN a new template does not start a run', () => {
    const r = run(
      spec(),
      { ...idleStatus, phase: 'Paused', pausedFrom: 'Succeeded' },
      obs([cluster({ replicas: 0 })]),
    );
    expect(r.status.phase).toBe('Paused');
  });

  it('GIVEN retry THEN the revision leaves rolledBackRevisions', () => {
    const r = run(
      spec(),
      { ...idleStatus, phase: 'RolledBack', templateHash: 'h2', rolledBackRevisions: ['h0', 'h2'] },
      obs([cluster({ replicas: 0 })], { requests: { retry: 'r' } }),
    );
    expect(r.status.rolledBackRevisions).toEqual(['h0']);
  });
});

describe('step: invariants', () => {
  it('GIVEN any tick THEN status stays bounded', () => {
    const many = Array.from({ length: 120 }, (_, i) => ({ ...fail.measurements[0]!, value: String(i) }));
    const r = run(
      spec(),
      running({
        transitions: Array.from({ length: 60 }, () => ({
          at: t(9),
          phase: 'Progressing' as const,
          canaryWeight: 0,
          reason: 'X',
          message: 'y',
        })),
      }),
      obs([cluster({ canary: 10 })], { analysis: { ...fail, measurements: many } }),
    );
    expect(r.status.measurements).toHaveLength(100);
    expect(r.status.transitions).toHaveLength(50);
  });

  it('GIVEN the same input twice THEN the same output (pure)', () => {
    const input = obs([cluster({ canary: 10 })], { analysis: fail });
    expect(run(spec(), running(), input)).toEqual(run(spec(), running(), input));
  });

  it('GIVEN blue/green with the replica router THEN Stalled InvalidSpec naming the field', () => {
    const r = run(
      spec({ strategy: 'blueGreen', steps: undefined, trafficRouting: { provider: 'replicas' } }),
      idleStatus,
      obs([cluster()]),
    );
    expect(r.actions).toEqual([]);
    expect(r.status.conditions?.find((c) => c.type === 'Stalled')?.message).toMatch(
      /^spec\.trafficRouting\.provider/,
    );
  });

  it('GIVEN a canary spec without weights THEN Stalled InvalidSpec and no action', () => {
    const r = run(spec({ steps: {} }), idleStatus, obs([cluster()]));
    expect(r.actions).toEqual([]);
    expect(r.status.conditions?.find((c) => c.type === 'Stalled')?.reason).toBe('InvalidSpec');
  });
});

describe('step: scale-down delay after traffic left the target', () => {
  const routedBack = (secondsAgo: number | undefined): CanaryReleaseStatus => ({
    ...idleStatus,
    templateHash: 'h2',
    revision: 'h2',
    lastPromotedTemplateHash: 'h2',
    ...(secondsAgo === undefined ? {} : { primaryRoutedAt: t(secondsAgo) }),
  });
  const up = cluster({ canary: 0, hash: 'h2', primary: { hash: 'h2', ready: true } });

  it('GIVEN traffic routed to the primary 10s ago (default 30s) THEN the target keeps its pods, a tick is asked for when the delay ends, and status says so', () => {
    const r = run(spec(), routedBack(10), obs([up]));
    expect(types(r)).toEqual([]);
    expect(r.requeueAfterMs).toBe(20_000);
    expect(r.status.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      /scaled down in 20s \(scaleDownDelay\)/,
    );
  });

  it.each<[string, Partial<CanaryReleaseSpec>, number | undefined]>([
    ['the default 30s passed', {}, 31],
    ['scaleDownDelay 5s passed', { scaleDownDelay: '5s' }, 6],
    ['scaleDownDelay 0s', { scaleDownDelay: '0s' }, 0],
    ['no record of when traffic moved (status from an older controller)', {}, undefined],
  ])('GIVEN %s THEN the target is scaled to 0', (_w, over, ago) => {
    const r = run(spec(over), routedBack(ago), obs([up]));
    expect(types(r)).toEqual(['scaleTarget:0']);
  });

  it('GIVEN the replicas router THEN rolling back scales the target in the same tick (its route is the scaling)', () => {
    const r = run(
      spec({ trafficRouting: { provider: 'replicas' } }),
      running({ failedChecks: 1 }),
      obs([cluster({ canary: 10 })], { analysis: fail }),
    );
    expect(types(r)).toEqual(['route:0', 'scaleTarget:0']);
  });

  it('GIVEN a new run starts THEN the record of the last switch is dropped', () => {
    const r = run(
      spec(),
      routedBack(10),
      obs([cluster({ canary: 0, hash: 'h3', primary: { hash: 'h2', ready: true } })]),
    );
    expect(r.status.phase).toBe('Progressing');
    expect(r.status.primaryRoutedAt).toBeUndefined();
  });
});
