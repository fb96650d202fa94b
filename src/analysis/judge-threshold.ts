import type { CanaryMetric, Measurement, ThresholdRange } from '../api/canary-release.js';
import { formatSampleValue } from './values.js';
import { combine, type MetricJudgement, type Verdict } from './verdict.js';

/**
 * The threshold judge (Flagger's model): each metric's one value against its
 * `thresholdRange`, then the weighted score (verdict.ts). Pure.
 */

/** What querying one metric produced. */
export type Observation =
  | { readonly kind: 'value'; readonly value: number; readonly warnings?: readonly string[] }
  | { readonly kind: 'noData'; readonly message?: string }
  | { readonly kind: 'error'; readonly message: string };

/** Where and when measurements are taken. */
export interface MeasurementContext {
  readonly cluster?: string;
  readonly canaryWeight: number;
  readonly measuredAt: string;
}

const MAX_MESSAGE = 1024;
const MAX_VALUE = 64;
const MAX_THRESHOLD = 128;

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** The range as on-call reads it: `>= 0.99`, `<= 500`, `0.1..0.9`. */
export function thresholdText(range: ThresholdRange | undefined): string | undefined {
  if (!range) return undefined;
  const { min, max } = range;
  if (min !== undefined && max !== undefined) return `${min}..${max}`;
  if (min !== undefined) return `>= ${min}`;
  if (max !== undefined) return `<= ${max}`;
  return undefined;
}

/** Why a non-finite value fails, for the measurement message. */
export function nonFiniteReason(value: number): string {
  if (Number.isNaN(value))
    return 'value is NaN, which no threshold accepts (often 0/0: a ratio over a window without requests)';
  return `value is ${formatSampleValue(value)}, which no threshold accepts (e.g. a ratio divided by 0, or a quantile in the +Inf bucket)`;
}

/** Builds a measurement, keeping every text within the status schema's limits. */
export function measurement(
  metric: string,
  ctx: MeasurementContext,
  fields: Pick<Measurement, 'outcome'> & Partial<Pick<Measurement, 'value' | 'threshold' | 'message'>>,
): Measurement {
  return {
    metric,
    ...(ctx.cluster !== undefined ? { cluster: ctx.cluster } : {}),
    canaryWeight: ctx.canaryWeight,
    ...(fields.value !== undefined ? { value: clip(fields.value, MAX_VALUE) } : {}),
    ...(fields.threshold !== undefined ? { threshold: clip(fields.threshold, MAX_THRESHOLD) } : {}),
    outcome: fields.outcome,
    measuredAt: ctx.measuredAt,
    ...(fields.message !== undefined ? { message: clip(fields.message, MAX_MESSAGE) } : {}),
  };
}

/** Judges one metric's observation against its range. */
export function judgeThresholdMetric(
  metric: CanaryMetric,
  observation: Observation,
  ctx: MeasurementContext,
): MetricJudgement {
  const threshold = thresholdText(metric.thresholdRange);
  const weight = metric.weight ?? 1;
  const base = { metric: metric.name, weight };
  const withThreshold = threshold !== undefined ? { threshold } : {};

  if (observation.kind === 'error')
    return {
      ...base,
      state: 'error',
      measurement: measurement(metric.name, ctx, {
        outcome: 'Error',
        ...withThreshold,
        message: observation.message,
      }),
    };
  if (observation.kind === 'noData') {
    const hold = (metric.onNoData ?? 'fail') === 'hold';
    const why = observation.message ?? 'no data: the query matched no series';
    return {
      ...base,
      state: hold ? 'hold' : 'fail',
      measurement: measurement(metric.name, ctx, {
        outcome: hold ? 'Inconclusive' : 'Failed',
        ...withThreshold,
        message: `${why} (onNoData: ${hold ? 'hold' : 'fail'})`,
      }),
    };
  }

  const { value } = observation;
  const text = formatSampleValue(value);
  const warnings = observation.warnings?.length ? `; warnings: ${observation.warnings.join('; ')}` : '';
  if (!metric.thresholdRange)
    return {
      ...base,
      state: 'error',
      measurement: measurement(metric.name, ctx, {
        outcome: 'Error',
        value: text,
        message: 'metric has no thresholdRange, which the threshold judge needs',
      }),
    };
  let problem: string | undefined;
  if (!Number.isFinite(value)) problem = nonFiniteReason(value);
  else if (metric.thresholdRange.min !== undefined && value < metric.thresholdRange.min)
    problem = `${text} is below the minimum ${metric.thresholdRange.min}`;
  else if (metric.thresholdRange.max !== undefined && value > metric.thresholdRange.max)
    problem = `${text} is above the maximum ${metric.thresholdRange.max}`;
  return {
    ...base,
    state: problem ? 'fail' : 'pass',
    measurement: measurement(metric.name, ctx, {
      outcome: problem ? 'Failed' : 'Successful',
      value: text,
      ...withThreshold,
      ...(problem || warnings ? { message: `${problem ?? 'within range'}${warnings}` } : {}),
    }),
  };
}

/** Judges every metric and combines them into the step verdict. */
export function judgeThreshold(
  inputs: ReadonlyArray<{ metric: CanaryMetric; observation: Observation }>,
  scoreThreshold: number,
  ctx: MeasurementContext,
): Verdict {
  return combine(
    inputs.map(({ metric, observation }) => judgeThresholdMetric(metric, observation, ctx)),
    scoreThreshold,
  );
}
