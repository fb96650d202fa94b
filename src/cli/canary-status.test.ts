import { describe, expect, it } from '@jest/globals';
import type { CanaryRelease, CanaryReleaseStatus } from '../api/canary-release.js';
import { canaryColumns, formatCanaryStatus } from './canary-status.js';
import { formatTable } from './table.js';

const SHA_BAD = 'b'.repeat(40);

function release(status: CanaryReleaseStatus | undefined): CanaryRelease {
  return {
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: {
      namespace: 'shop',
      name: 'web',
      creationTimestamp: '2026-11-30T11:50:00Z' as unknown as Date,
    },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      service: { port: 80, primarySuffix: '-primary', canarySuffix: '-canary' },
      strategy: 'canary',
      trafficRouting: { provider: 'gatewayAPI', gatewayAPI: { httpRoute: { name: 'web' } } },
      steps: { weights: [5, 20, 50] },
      interval: '30s',
      analysis: { scoreThreshold: 0.95, failureLimit: 2, judge: 'threshold', confidence: 0.95 },
      skipAnalysis: false,
      gitWriteBack: { mode: 'revert' },
    },
    ...(status ? { status } : {}),
  } as CanaryRelease;
}

const rolledBack: CanaryReleaseStatus = {
  phase: 'RolledBack',
  phaseSince: '2026-11-30T12:02:10.123Z',
  canaryWeight: 0,
  step: '2/3',
  failedChecks: 2,
  lastScore: 0.5,
  revision: `main@sha1:${SHA_BAD}`,
  lastPromotedRevision: `main@sha1:${'a'.repeat(40)}`,
  clusters: ['member-1', 'member-2'],
  transitions: [
    {
      at: '2026-11-30T12:00:00Z',
      phase: 'Progressing',
      canaryWeight: 5,
      step: '1/3',
      reason: 'Started',
      message: 'new revision main@sha1:bbbbbbb',
    },
    {
      at: '2026-11-30T12:01:00Z',
      phase: 'Progressing',
      canaryWeight: 20,
      step: '2/3',
      reason: 'StepAdvanced',
      message: 'score 1.00 >= 0.95',
    },
    {
      at: '2026-11-30T12:02:10Z',
      phase: 'RolledBack',
      canaryWeight: 0,
      step: '2/3',
      reason: 'AnalysisFailed',
      message: 'failed checks 2 of 2',
    },
  ],
  measurements: [
    {
      metric: 'error-rate',
      cluster: 'member-2',
      canaryWeight: 5,
      value: '0.001',
      threshold: '<= 0.01',
      outcome: 'Successful',
      measuredAt: '2026-11-30T12:00:30Z',
    },
    {
      metric: 'error-rate',
      cluster: 'member-1',
      canaryWeight: 5,
      value: '0.002',
      threshold: '<= 0.01',
      outcome: 'Successful',
      measuredAt: '2026-11-30T12:00:30Z',
    },
    {
      metric: 'error-rate',
      cluster: 'member-1',
      canaryWeight: 20,
      value: '0.2',
      threshold: '<= 0.01',
      outcome: 'Failed',
      measuredAt: '2026-11-30T12:01:30Z',
      message: 'above 0.01',
    },
    {
      metric: 'latency-p99',
      cluster: 'member-1',
      canaryWeight: 20,
      threshold: '<= 500',
      outcome: 'Inconclusive',
      measuredAt: '2026-11-30T12:01:30Z',
      message: 'no data',
    },
  ],
  rollback: {
    at: '2026-11-30T12:02:10Z',
    step: '2/3',
    canaryWeight: 20,
    reason: 'AnalysisFailed',
    message: 'score 0.50 below 0.95',
    metric: 'error-rate',
    value: '0.2',
    threshold: '<= 0.01',
    revision: `main@sha1:${SHA_BAD}`,
    writeBack: {
      mode: 'revert',
      method: 'revert',
      commit: 'c0ffee1234567890c0ffee1234567890c0ffee12',
      pushedAt: '2026-11-30T12:02:12Z',
    },
  },
  conditions: [
    {
      type: 'Ready',
      status: 'False',
      reason: 'RolledBack',
      message: 'rolled back at step 2/3',
      lastTransitionTime: '2026-11-30T12:02:10Z',
    },
  ],
} as CanaryReleaseStatus;

describe('formatCanaryStatus', () => {
  it('GIVEN a rolled-back release THEN the rollback, the timeline and the measurements grouped by weight/step and cluster (golden)', () => {
    expect(formatCanaryStatus(release(rolledBack))).toBe(
      `CanaryRelease shop/web
Phase:          RolledBack since 2026-11-30T12:02:10Z
Step:           2/3
Canary weight:  0%
Score:          0.50 (threshold 0.95)
Failed checks:  2 (limit 2)
Revision:       main@sha1:${SHA_BAD}
Last promoted:  main@sha1:${'a'.repeat(40)}
Clusters:       member-1, member-2
Ready:          False (RolledBack): rolled back at step 2/3

Rollback:
  At:             2026-11-30T12:02:10Z, step 2/3, canary weight 20%
  Reason:         AnalysisFailed: score 0.50 below 0.95
  Failing metric: error-rate = 0.2 (threshold <= 0.01)
  Rolled back:    main@sha1:${SHA_BAD} (the Delivery will not apply it again)
  Git:            reverted in commit c0ffee1234567890c0ffee1234567890c0ffee12, pushed 2026-11-30T12:02:12Z

Timeline:
  TIME                   PHASE         WEIGHT   STEP   REASON           MESSAGE
  2026-11-30T12:00:00Z   Progressing   5        1/3    Started          new revision main@sha1:bbbbbbb
  2026-11-30T12:01:00Z   Progressing   20       2/3    StepAdvanced     score 1.00 >= 0.95
  2026-11-30T12:02:10Z   RolledBack    0        2/3    AnalysisFailed   failed checks 2 of 2

Measurements:
  weight 5% (step 1/3):
    CLUSTER    METRIC       VALUE   THRESHOLD   RESULT       MEASURED               MESSAGE
    member-1   error-rate   0.002   <= 0.01     Successful   2026-11-30T12:00:30Z
    member-2   error-rate   0.001   <= 0.01     Successful   2026-11-30T12:00:30Z
  weight 20% (step 2/3):
    CLUSTER    METRIC        VALUE     THRESHOLD   RESULT         MEASURED               MESSAGE
    member-1   error-rate    0.2       <= 0.01     Failed         2026-11-30T12:01:30Z   above 0.01
    member-1   latency-p99   no data   <= 500      Inconclusive   2026-11-30T12:01:30Z   no data
`,
    );
  });

  it('GIVEN a pull-request write-back THEN the PR URL; GIVEN a failed one THEN its error; GIVEN mode none THEN that Git was left alone', () => {
    const withWriteBack = (writeBack: NonNullable<CanaryReleaseStatus['rollback']>['writeBack']) =>
      formatCanaryStatus(release({ ...rolledBack, rollback: { ...rolledBack.rollback!, writeBack } }));
    expect(
      withWriteBack({
        mode: 'pullRequest',
        pullRequestURL: 'https://github.example/acme/shop/pull/7',
        commit: 'abc',
      }),
    ).toContain('  Git:            pull request https://github.example/acme/shop/pull/7 (commit abc)\n');
    expect(withWriteBack({ mode: 'revert', error: 'push rejected: branch protected' })).toContain(
      '  Git:            failed, retrying: push rejected: branch protected\n',
    );
    expect(withWriteBack({ mode: 'revert', method: 'restore', commit: 'abc' })).toContain(
      '  Git:            restored the last promoted files in commit abc\n',
    );
    expect(withWriteBack({ mode: 'pullRequest', commit: 'abc' })).toContain(
      '  Git:            already on the base branch in commit abc\n',
    );
    expect(withWriteBack({ mode: 'none' })).toContain('Git still holds the rolled-back revision');
  });

  it('GIVEN a release not started yet THEN says so, with empty timeline and measurements', () => {
    expect(formatCanaryStatus(release(undefined))).toBe(
      `CanaryRelease shop/web
Phase:          not started

Timeline:
  (no transitions yet)

Measurements:
  (none yet)
`,
    );
  });

  it('GIVEN a release paused at a gate THEN the paused-from phase and the gate with its last answer', () => {
    const out = formatCanaryStatus(
      release({
        phase: 'Paused',
        pausedFrom: 'Progressing',
        gate: { name: 'load-test', since: '2026-11-30T12:00:00Z', attempts: 3, message: 'HTTP 503' },
      }),
    );
    expect(out).toContain('Paused from:    Progressing\n');
    expect(out).toContain(
      'Gate:           waiting at load-test since 2026-11-30T12:00:00Z, 3 call(s): HTTP 503\n',
    );
  });
});

describe('canaryColumns', () => {
  it('GIVEN releases THEN NAME PHASE STEP WEIGHT SCORE AGE', () => {
    const rows = [
      release(rolledBack),
      { ...release(undefined), metadata: { ...release(undefined).metadata, name: 'api' } },
    ];
    expect(formatTable(canaryColumns(new Date('2026-11-30T12:00:00Z')), rows)).toBe(
      [
        'NAME   PHASE        STEP   WEIGHT   SCORE   AGE',
        'web    RolledBack   2/3    0        0.50    10m',
        'api                                         10m',
        '',
      ].join('\n'),
    );
  });
});
