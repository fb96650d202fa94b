import type { CanaryMetric, MetricComparison } from '../api/canary-release.js';
import { mannWhitney } from './mann-whitney.js';
import { measurement, type MeasurementContext } from './judge-threshold.js';
import { formatSampleValue } from './values.js';
import { combine, type MetricJudgement, type Verdict } from './verdict.js';

/**
 * The statistical judge (Kayenta's NetflixACAJudge / MannWhitneyClassifier): for each metric,
 * the canary's samples against the primary's over the same window.
 *
 * Per metric: NaN samples removed or replaced by 0 (`nanStrategy`; ±Inf are always removed,
 * they have no place in a location shift); identical or all-tied samples pass; otherwise the
 * Mann-Whitney test gives a confidence interval (at `analysis.confidence`) for the shift
 * canary − primary. The metric is
 * - `high` when worse-by-increase counts (`direction` increase|either), the interval lies
 *   entirely above 0 (a significant increase) and the effect size — the mean ratio
 *   canary/primary, as Kayenta — exceeds 1 + allowedIncrease/100;
 * - `low` symmetrically (decrease|either, interval below 0, ratio under 1 − allowedDecrease/100);
 * - `pass` otherwise.
 * high/low fail the metric; a failing `critical` metric fails the step whatever the score;
 * then the same weighted score as the threshold judge. Pure.
 */

/** What the range queries of one side produced. */
export type SampleObservation =
  | { readonly kind: 'values'; readonly values: readonly number[]; readonly warnings?: readonly string[] }
  | { readonly kind: 'noData'; readonly message?: string }
  | { readonly kind: 'error'; readonly message: string };

/** Kayenta's per-metric classification. */
export type Classification = 'pass' | 'high' | 'low';

const DEFAULT_COMPARISON: MetricComparison = {
  direction: 'increase',
  critical: false,
  nanStrategy: 'remove',
};

/** Applies the NaN strategy; ±Inf always dropped. Returns the cleaned samples and how many were dropped. */
export function cleanSamples(
  values: readonly number[],
  nanStrategy: MetricComparison['nanStrategy'],
): { values: number[]; dropped: number } {
  const out: number[] = [];
  for (const v of values) {
    if (Number.isNaN(v)) {
      if (nanStrategy === 'replace') out.push(0);
    } else if (Number.isFinite(v)) out.push(v);
  }
  return { values: out, dropped: values.length - out.length };
}

function mean(values: readonly number[]): number {
  return values.reduce((s, v) => s + v, 0) / values.length;
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Mean ratio canary/primary; a zero primary mean gives +Inf (canary above 0) or 1 (both 0). */
export function meanRatio(canary: readonly number[], primary: readonly number[]): number {
  const c = mean(canary);
  const p = mean(primary);
  if (p === 0) return c === 0 ? 1 : c > 0 ? Infinity : -Infinity;
  return c / p;
}

function fmt(v: number): string {
  return formatSampleValue(v);
}

/** The allowance as text: `allowed +10%/-5%`. */
function allowanceText(c: MetricComparison): string {
  const parts: string[] = [];
  if (c.direction !== 'decrease') parts.push(`+${c.allowedIncrease ?? 0}%`);
  if (c.direction !== 'increase') parts.push(`-${c.allowedDecrease ?? 0}%`);
  return `${c.direction} allowed ${parts.join('/')}`;
}

/** Judges one metric from both sides' samples. */
export function judgeMannWhitneyMetric(
  metric: CanaryMetric,
  canaryObs: SampleObservation,
  primaryObs: SampleObservation,
  confidence: number,
  ctx: MeasurementContext,
): MetricJudgement & { classification?: Classification } {
  const comparison = { ...DEFAULT_COMPARISON, ...metric.comparison };
  const weight = metric.weight ?? 1;
  const base = { metric: metric.name, weight, critical: comparison.critical };
  const pct = Math.round(confidence * 1000) / 10;

  const failed = (side: string, message: string): MetricJudgement => ({
    ...base,
    state: 'error',
    measurement: measurement(metric.name, ctx, { outcome: 'Error', message: `${side}: ${message}` }),
  });
  if (canaryObs.kind === 'error') return failed('canary', canaryObs.message);
  if (primaryObs.kind === 'error') return failed('primary', primaryObs.message);
  const noData = (why: string): MetricJudgement => {
    const hold = (metric.onNoData ?? 'fail') === 'hold';
    return {
      ...base,
      state: hold ? 'hold' : 'fail',
      measurement: measurement(metric.name, ctx, {
        outcome: hold ? 'Inconclusive' : 'Failed',
        message: `${why} (onNoData: ${hold ? 'hold' : 'fail'})`,
      }),
    };
  };
  if (canaryObs.kind === 'noData') return noData(`no canary data: ${canaryObs.message ?? 'no series'}`);
  if (primaryObs.kind === 'noData') return noData(`no primary data: ${primaryObs.message ?? 'no series'}`);

  const canary = cleanSamples(canaryObs.values, comparison.nanStrategy);
  const primary = cleanSamples(primaryObs.values, comparison.nanStrategy);
  if (canary.values.length === 0 || primary.values.length === 0)
    return noData(
      `no ${canary.values.length === 0 ? 'canary' : 'primary'} samples left after removing ${canary.values.length === 0 ? canary.dropped : primary.dropped} NaN/±Inf`,
    );

  const value = fmt(median(canary.values));
  const counts = `n=${canary.values.length}/${primary.values.length}${canary.dropped + primary.dropped ? `, ${canary.dropped + primary.dropped} NaN/±Inf ${comparison.nanStrategy === 'replace' ? 'handled' : 'removed'}` : ''}`;
  const sortedC = [...canary.values].sort((a, b) => a - b);
  const sortedP = [...primary.values].sort((a, b) => a - b);
  const identical = sortedC.length === sortedP.length && sortedC.every((v, i) => v === sortedP[i]);
  const allTied = new Set([...canary.values, ...primary.values]).size === 1;
  if (identical || allTied)
    return {
      ...base,
      state: 'pass',
      classification: 'pass',
      measurement: measurement(metric.name, ctx, {
        outcome: 'Successful',
        value,
        threshold: `primary median ${fmt(median(primary.values))}, ${allowanceText(comparison)}`,
        message: `canary and primary samples are ${identical ? 'identical' : 'all equal'} (${counts})`,
      }),
    };

  let test: ReturnType<typeof mannWhitney>;
  try {
    test = mannWhitney(canary.values, primary.values, confidence);
  } catch (err) {
    return failed('Mann-Whitney', err instanceof Error ? err.message : String(err));
  }
  const ratio = meanRatio(canary.values, primary.values);
  const up = comparison.direction !== 'decrease';
  const down = comparison.direction !== 'increase';
  let classification: Classification = 'pass';
  if (up && test.lower > 0 && ratio > 1 + (comparison.allowedIncrease ?? 0) / 100) classification = 'high';
  else if (down && test.upper < 0 && ratio < 1 - (comparison.allowedDecrease ?? 0) / 100)
    classification = 'low';

  const threshold = `Δ CI${pct}% [${fmt(test.lower)}, ${fmt(test.upper)}] vs primary ${fmt(median(primary.values))}, ${allowanceText(comparison)}`;
  const warnings = [...(canaryObs.warnings ?? []), ...(primaryObs.warnings ?? [])];
  const warned = warnings.length ? `; warnings: ${warnings.join('; ')}` : '';
  const detail = `Δ estimate ${fmt(test.estimate)}, mean ratio ${fmt(ratio)}, p=${fmt(test.pValue)}, ${counts}, ${test.method}`;
  const verdictText =
    classification === 'high'
      ? 'high: canary significantly higher than primary beyond the allowed increase'
      : classification === 'low'
        ? 'low: canary significantly lower than primary beyond the allowed decrease'
        : 'pass: no significant change beyond the allowance';
  return {
    ...base,
    state: classification === 'pass' ? 'pass' : 'fail',
    classification,
    measurement: measurement(metric.name, ctx, {
      outcome: classification === 'pass' ? 'Successful' : 'Failed',
      value,
      threshold,
      message: `${verdictText} (${detail})${warned}`,
    }),
  };
}

/** Judges every metric and combines them into the step verdict (critical metrics first). */
export function judgeMannWhitney(
  inputs: ReadonlyArray<{ metric: CanaryMetric; canary: SampleObservation; primary: SampleObservation }>,
  scoreThreshold: number,
  confidence: number,
  ctx: MeasurementContext,
): Verdict {
  return combine(
    inputs.map((i) => judgeMannWhitneyMetric(i.metric, i.canary, i.primary, confidence, ctx)),
    scoreThreshold,
  );
}
