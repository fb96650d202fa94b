import type { CanaryMetric, MetricComparison } from '../api/canary-release.js';
import {
  cleanSamples,
  judgeMannWhitney,
  judgeMannWhitneyMetric,
  meanRatio,
  type SampleObservation,
} from './judge-mann-whitney.js';

const ctx = { cluster: 'member-1', canaryWeight: 20, measuredAt: '2026-01-01T00:00:00.000Z' };
const metric = (
  name: string,
  comparison: Partial<MetricComparison> = {},
  extra: Partial<CanaryMetric> = {},
): CanaryMetric => ({
  name,
  query: 'x',
  weight: 1,
  onNoData: 'fail',
  comparison: { direction: 'increase', critical: false, nanStrategy: 'remove', ...comparison },
  ...extra,
});
const samples = (...values: number[]): SampleObservation => ({ kind: 'values', values });
// Primary latencies around 100 ms; a canary 30% slower; one within noise.
const primary = samples(98, 101, 99, 103, 100, 97, 102, 104, 96, 100.5);
const slower = samples(128, 131, 129, 133, 130, 127, 132, 134, 126, 130.5);
const same = samples(99, 100, 98, 102, 101, 97, 103, 100.2, 96.5, 104.5);

describe('judgeMannWhitneyMetric', () => {
  it('GIVEN a canary 30% higher WHEN direction increase THEN high: failed with the interval as threshold', () => {
    const j = judgeMannWhitneyMetric(metric('latency'), slower, primary, 0.95, ctx);
    expect(j.classification).toBe('high');
    expect(j.state).toBe('fail');
    expect(j.measurement.outcome).toBe('Failed');
    expect(j.measurement.threshold).toMatch(
      /^Δ CI95% \[\d+(\.\d+)?, \d+(\.\d+)?\] vs primary 100.25, increase allowed \+0%$/,
    );
    expect(j.measurement.message).toMatch(/^high: .* exact\)$/);
  });

  it('GIVEN a canary 30% higher WHEN 50% increase is allowed THEN pass', () => {
    expect(
      judgeMannWhitneyMetric(metric('latency', { allowedIncrease: 50 }), slower, primary, 0.95, ctx)
        .classification,
    ).toBe('pass');
  });

  it('GIVEN a canary 30% higher WHEN direction decrease THEN pass (higher is not worse)', () => {
    expect(
      judgeMannWhitneyMetric(metric('m', { direction: 'decrease' }), slower, primary, 0.95, ctx)
        .classification,
    ).toBe('pass');
  });

  it('GIVEN a canary 30% lower WHEN direction either or decrease THEN low', () => {
    expect(
      judgeMannWhitneyMetric(metric('m', { direction: 'either' }), primary, slower, 0.95, ctx).classification,
    ).toBe('low');
    expect(
      judgeMannWhitneyMetric(
        metric('m', { direction: 'decrease', allowedDecrease: 10 }),
        primary,
        slower,
        0.95,
        ctx,
      ).classification,
    ).toBe('low');
    expect(
      judgeMannWhitneyMetric(
        metric('m', { direction: 'decrease', allowedDecrease: 30 }),
        primary,
        slower,
        0.95,
        ctx,
      ).classification,
    ).toBe('pass');
  });

  it('GIVEN samples within noise WHEN judged THEN pass', () => {
    expect(judgeMannWhitneyMetric(metric('m', { direction: 'either' }), same, primary, 0.95, ctx).state).toBe(
      'pass',
    );
  });

  it('GIVEN identical or all-equal samples WHEN judged THEN pass without a test', () => {
    expect(
      judgeMannWhitneyMetric(metric('m'), samples(1, 2, 3), samples(3, 2, 1), 0.95, ctx).measurement.message,
    ).toContain('identical');
    expect(judgeMannWhitneyMetric(metric('m'), samples(0, 0), samples(0, 0, 0), 0.95, ctx).state).toBe(
      'pass',
    );
  });

  it('GIVEN NaN samples WHEN nanStrategy remove THEN they are dropped; replace THEN counted as 0', () => {
    expect(cleanSamples([1, NaN, 2, Infinity], 'remove')).toEqual({ values: [1, 2], dropped: 2 });
    expect(cleanSamples([1, NaN, 2], 'replace')).toEqual({ values: [1, 0, 2], dropped: 0 });
    const nanCanary = samples(NaN, NaN, NaN, NaN, NaN, NaN, NaN, NaN, NaN, NaN);
    // Error rate: NaN = no requests; replaced by 0, a canary with no errors is not worse.
    expect(
      judgeMannWhitneyMetric(metric('m', { nanStrategy: 'replace' }), nanCanary, primary, 0.95, ctx).state,
    ).toBe('pass');
    const removed = judgeMannWhitneyMetric(metric('m'), nanCanary, primary, 0.95, ctx);
    expect(removed.state).toBe('fail');
    expect(removed.measurement.message).toContain(
      'no canary samples left after removing 10 NaN/±Inf (onNoData: fail)',
    );
  });

  it('GIVEN no primary data WHEN onNoData hold THEN hold; an error on either side THEN error', () => {
    expect(
      judgeMannWhitneyMetric(metric('m', {}, { onNoData: 'hold' }), slower, { kind: 'noData' }, 0.95, ctx)
        .state,
    ).toBe('hold');
    const e = judgeMannWhitneyMetric(
      metric('m'),
      { kind: 'error', message: 'QueryTimeoutError: no answer' },
      primary,
      0.95,
      ctx,
    );
    expect(e).toMatchObject({
      state: 'error',
      measurement: { outcome: 'Error', message: 'canary: QueryTimeoutError: no answer' },
    });
  });

  it('GIVEN a zero primary mean THEN the mean ratio is +Inf for a positive canary and 1 for zero', () => {
    expect(meanRatio([1], [0])).toBe(Infinity);
    expect(meanRatio([0], [0])).toBe(1);
  });
});

describe('judgeMannWhitney: critical metrics and the score', () => {
  it('GIVEN a failing critical metric of weight 1 and passing metrics of weight 10 WHEN judged THEN fail whatever the score', () => {
    const r = judgeMannWhitney(
      [
        { metric: metric('errors', { critical: true }, { weight: 1 }), canary: slower, primary },
        { metric: metric('latency', {}, { weight: 10 }), canary: same, primary },
      ],
      0.5,
      0.95,
      ctx,
    );
    expect(r.verdict).toBe('fail');
    expect(r.score).toBeCloseTo(10 / 11);
    expect(r.failing?.metric).toBe('errors');
    expect(r.message).toMatch(/^critical metric failed: errors /);
  });

  it('GIVEN a non-critical failure above the score threshold WHEN judged THEN pass', () => {
    const r = judgeMannWhitney(
      [
        { metric: metric('errors', {}, { weight: 1 }), canary: slower, primary },
        { metric: metric('latency', {}, { weight: 10 }), canary: same, primary },
      ],
      0.9,
      0.95,
      ctx,
    );
    expect(r.verdict).toBe('pass');
  });

  it('GIVEN warnings from the backend WHEN judged THEN they are in the message', () => {
    const warned: SampleObservation = {
      kind: 'values',
      values: [128, 131, 129, 133, 130],
      warnings: ['partial response'],
    };
    const j = judgeMannWhitney([{ metric: metric('m'), canary: warned, primary }], 0.95, 0.95, ctx);
    expect(j.measurements[0]!.message).toContain('; warnings: partial response');
  });
});
