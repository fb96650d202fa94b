import type { CanaryMetric } from '../api/canary-release.js';
import { judgeThreshold, judgeThresholdMetric, thresholdText, type Observation } from './judge-threshold.js';

const ctx = { cluster: 'member-1', canaryWeight: 20, measuredAt: '2026-01-01T00:00:00.000Z' };
const metric = (name: string, extra: Partial<CanaryMetric> = {}): CanaryMetric => ({
  name,
  query: 'x',
  weight: 1,
  onNoData: 'fail',
  thresholdRange: { min: 0.99 },
  ...extra,
});
const value = (v: number): Observation => ({ kind: 'value', value: v });

describe('thresholdText', () => {
  it.each([
    [{ min: 0.99 }, '>= 0.99'],
    [{ max: 500 }, '<= 500'],
    [{ min: 0.1, max: 0.9 }, '0.1..0.9'],
  ])('GIVEN %p THEN %p', (range, text) => expect(thresholdText(range)).toBe(text));
});

describe('judgeThresholdMetric', () => {
  it.each<[string, number, 'pass' | 'fail', string | undefined]>([
    ['inside', 0.995, 'pass', undefined],
    ['at the minimum', 0.99, 'pass', undefined],
    ['below', 0.5, 'fail', '0.5 is below the minimum 0.99'],
    ['NaN', NaN, 'fail', 'value is NaN, which no threshold accepts'],
    ['+Inf', Infinity, 'fail', 'value is +Inf, which no threshold accepts'],
    ['-Inf', -Infinity, 'fail', 'value is -Inf'],
  ])('GIVEN a value %s WHEN judged against >= 0.99 THEN %s', (_what, v, state, message) => {
    const j = judgeThresholdMetric(metric('success'), value(v), ctx);
    expect(j.state).toBe(state);
    expect(j.measurement).toMatchObject({
      metric: 'success',
      cluster: 'member-1',
      canaryWeight: 20,
      threshold: '>= 0.99',
      outcome: state === 'pass' ? 'Successful' : 'Failed',
    });
    if (message) expect(j.measurement.message).toContain(message);
  });

  it('GIVEN +Inf with only a min WHEN judged THEN it still fails (not a number to trust)', () => {
    expect(
      judgeThresholdMetric(metric('m', { thresholdRange: { min: 0 } }), value(Infinity), ctx).state,
    ).toBe('fail');
  });

  it('GIVEN ±Inf and NaN WHEN measured THEN their value texts stay distinct', () => {
    const texts = [NaN, Infinity, -Infinity].map(
      (v) => judgeThresholdMetric(metric('m'), value(v), ctx).measurement.value,
    );
    expect(texts).toEqual(['NaN', '+Inf', '-Inf']);
  });

  it('GIVEN above the max WHEN judged THEN it fails saying so', () => {
    const j = judgeThresholdMetric(metric('latency', { thresholdRange: { max: 500 } }), value(730), ctx);
    expect(j.measurement.message).toBe('730 is above the maximum 500');
  });

  it('GIVEN no data WHEN onNoData is fail THEN the metric fails; hold THEN it is inconclusive', () => {
    const noData: Observation = { kind: 'noData' };
    expect(judgeThresholdMetric(metric('m'), noData, ctx)).toMatchObject({
      state: 'fail',
      measurement: { outcome: 'Failed' },
    });
    expect(judgeThresholdMetric(metric('m', { onNoData: 'hold' }), noData, ctx)).toMatchObject({
      state: 'hold',
      measurement: { outcome: 'Inconclusive' },
    });
  });

  it('GIVEN warnings WHEN judged THEN they are in the message', () => {
    const j = judgeThresholdMetric(
      metric('m'),
      { kind: 'value', value: 1, warnings: ['partial response'] },
      ctx,
    );
    expect(j.measurement.message).toContain('warnings: partial response');
  });
});

describe('judgeThreshold: the weighted score', () => {
  it('GIVEN every metric passing WHEN judged THEN pass with score 1', () => {
    const r = judgeThreshold([{ metric: metric('a'), observation: value(1) }], 0.95, ctx);
    expect(r).toMatchObject({ verdict: 'pass', score: 1, message: 'score 1.00 >= 0.95' });
  });

  it('GIVEN error-rate (weight 3) failing and latency (2) passing WHEN judged THEN score 0.40 and error-rate explains the fail', () => {
    const r = judgeThreshold(
      [
        {
          metric: metric('error-rate', { weight: 3, thresholdRange: { max: 0.05 } }),
          observation: value(0.2),
        },
        { metric: metric('latency', { weight: 2, thresholdRange: { max: 500 } }), observation: value(120) },
      ],
      0.95,
      ctx,
    );
    expect(r.verdict).toBe('fail');
    expect(r.score).toBeCloseTo(0.4);
    expect(r.failing).toEqual({ metric: 'error-rate', value: '0.2', threshold: '<= 0.05' });
    expect(r.message).toBe('score 0.40 < 0.95: error-rate 0.2 (<= 0.05) failed');
    expect(r.measurements).toHaveLength(2);
  });

  it('GIVEN a score threshold of 0.5 and one of two equal metrics failing WHEN judged THEN pass (0.50 >= 0.5)', () => {
    const r = judgeThreshold(
      [
        { metric: metric('a'), observation: value(0) },
        { metric: metric('b'), observation: value(1) },
      ],
      0.5,
      ctx,
    );
    expect(r.verdict).toBe('pass');
  });

  it('GIVEN a weight-0 metric failing WHEN judged THEN it is recorded but not scored', () => {
    const r = judgeThreshold(
      [
        { metric: metric('a'), observation: value(1) },
        { metric: metric('info', { weight: 0 }), observation: value(0) },
      ],
      0.95,
      ctx,
    );
    expect(r.verdict).toBe('pass');
    expect(r.measurements.map((m) => m.outcome)).toEqual(['Successful', 'Failed']);
  });

  it('GIVEN no data with onNoData fail WHEN judged THEN a fail, never a pass', () => {
    const r = judgeThreshold([{ metric: metric('a'), observation: { kind: 'noData' } }], 0.95, ctx);
    expect(r.verdict).toBe('fail');
    expect(r.failing).toEqual({ metric: 'a', threshold: '>= 0.99' });
  });

  it('GIVEN no data with onNoData hold WHEN judged THEN the whole verdict holds', () => {
    const r = judgeThreshold(
      [
        { metric: metric('a', { onNoData: 'hold' }), observation: { kind: 'noData' } },
        { metric: metric('b'), observation: value(1) },
      ],
      0.95,
      ctx,
    );
    expect(r).toMatchObject({ verdict: 'hold', message: 'hold: a has no data (onNoData: hold)' });
  });

  it('GIVEN a query error and another metric failing WHEN judged THEN hold: a Prometheus problem decides nothing', () => {
    const r = judgeThreshold(
      [
        { metric: metric('a'), observation: { kind: 'error', message: 'QueryError: connect ECONNREFUSED' } },
        { metric: metric('b'), observation: value(0) },
      ],
      0.95,
      ctx,
    );
    expect(r.verdict).toBe('hold');
    expect(r.message).toBe('hold: a could not be measured: QueryError: connect ECONNREFUSED');
    expect(r.measurements[0]!.outcome).toBe('Error');
  });

  it('GIVEN a very long error WHEN measured THEN the message fits the status schema', () => {
    const r = judgeThreshold(
      [{ metric: metric('a'), observation: { kind: 'error', message: 'x'.repeat(5000) } }],
      0.95,
      ctx,
    );
    expect(r.measurements[0]!.message!.length).toBeLessThanOrEqual(1024);
  });
});
