import { describe, expect, it } from '@jest/globals';
import type { CanaryRelease } from '../api/canary-release.js';
import type { AnalysisOutcome } from './observations.js';
import { FeatureGates } from '../features.js';
import { combineAnalyses, gatedProblems } from './reconciler.js';
import { releaseUpdateNeedsTick } from './register.js';

const outcome = (verdict: AnalysisOutcome['verdict'], score: number, message: string): AnalysisOutcome => ({
  verdict,
  score,
  measurements: [
    { metric: 'm', canaryWeight: 10, outcome: 'Successful', measuredAt: '2025-01-01T00:00:00Z' },
  ],
  message,
  ...(verdict === 'fail' ? { failing: { metric: 'm', value: '0.5', threshold: '>= 0.9' } } : {}),
});

describe('combineAnalyses (lockstep)', () => {
  it.each<[string, AnalysisOutcome['verdict'][], AnalysisOutcome['verdict']]>([
    ['every cluster passes', ['pass', 'pass'], 'pass'],
    ['one cluster holds', ['pass', 'hold'], 'hold'],
    ['one cluster fails, another holds', ['hold', 'fail'], 'fail'],
  ])('GIVEN %s THEN %s', (_w, verdicts, expected) => {
    const r = combineAnalyses(
      verdicts.map((v, i) => ({ cluster: `m${i}`, result: outcome(v, i === 0 ? 1 : 0.5, `${v} here`) })),
    );
    expect(r.verdict).toBe(expected);
    expect(r.measurements).toHaveLength(verdicts.length);
    expect(r.score).toBe(0.5);
  });

  it('GIVEN a failing cluster THEN its failing metric and a message naming it are kept', () => {
    const r = combineAnalyses([
      { cluster: 'm1', result: outcome('pass', 1, 'fine') },
      { cluster: 'm2', result: outcome('fail', 0, 'm = 0.5 below 0.9') },
    ]);
    expect(r.failing).toEqual({ metric: 'm', value: '0.5', threshold: '>= 0.9' });
    expect(r.message).toBe('m2: m = 0.5 below 0.9');
  });
});

describe('releaseUpdateNeedsTick', () => {
  const rel = (generation: number, annotations: Record<string, string> = {}) =>
    ({ metadata: { generation, annotations, uid: 'u' } }) as unknown as CanaryRelease;
  it.each<[string, CanaryRelease, CanaryRelease, boolean]>([
    ['a status write only', rel(1), rel(1), false],
    ['a spec change', rel(1), rel(2), true],
    ['an operator request', rel(1), rel(1, { 'sluice.dev/abort': 't1' }), true],
    ['another annotation', rel(1), rel(1, { note: 'x' }), false],
  ])('GIVEN %s THEN %s', (_w, old, now, expected) => {
    expect(releaseUpdateNeedsTick(old, now)).toBe(expected);
  });
});

describe('gatedProblems (feature gates)', () => {
  const withJudge = (judge: 'threshold' | 'mannWhitney') =>
    ({ metadata: { name: 'r' }, spec: { analysis: { judge } } }) as unknown as CanaryRelease;

  it('GIVEN judge mannWhitney and StatisticalJudge off THEN one problem at spec.analysis.judge naming the gate', () => {
    const problems = gatedProblems(withJudge('mannWhitney'), FeatureGates.parse(''));
    expect(problems).toEqual([
      {
        field: 'spec.analysis.judge',
        message: expect.stringContaining('--feature-gates=StatisticalJudge=true'),
      },
    ]);
  });

  it('GIVEN judge mannWhitney and StatisticalJudge on THEN no problem', () => {
    expect(gatedProblems(withJudge('mannWhitney'), FeatureGates.parse('StatisticalJudge=true'))).toEqual([]);
  });

  it('GIVEN the threshold judge THEN no problem whatever the gates', () => {
    expect(gatedProblems(withJudge('threshold'), FeatureGates.parse(''))).toEqual([]);
  });
});
