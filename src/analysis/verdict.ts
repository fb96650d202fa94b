import type { Measurement } from '../api/canary-release.js';

/**
 * The weighted score both judges share: score = Σ weight·pass / Σ weight over the metrics
 * with a weight above 0 (weight 0 records a metric without scoring it). Pure.
 *
 * Verdict, in this order:
 * 1. a failed critical metric (statistical judge) → `fail`, whatever else happened;
 * 2. a scored metric that could not be judged → `hold`: a query/provider error (an outage of
 *    Prometheus must neither promote nor roll back by itself — the controller's failureLimit
 *    and rollbackSLA deal with trouble that persists) or no data with `onNoData: hold`;
 * 3. score ≥ scoreThreshold → `pass`, else `fail`. No data with `onNoData: fail` is a failed
 *    metric, so no data never promotes.
 */

/** How one metric came out. */
export type MetricState = 'pass' | 'fail' | 'hold' | 'error';

/** One metric's judgement, ready for the score. */
export interface MetricJudgement {
  readonly metric: string;
  readonly weight: number;
  readonly state: MetricState;
  readonly critical?: boolean;
  readonly measurement: Measurement;
}

/** The outcome of one analysis. */
export interface Verdict {
  readonly verdict: 'pass' | 'fail' | 'hold';
  readonly score: number;
  readonly measurements: Measurement[];
  readonly failing?: { metric: string; value?: string; threshold?: string };
  readonly message: string;
}

function describe(j: MetricJudgement): string {
  const m = j.measurement;
  const value = m.value ?? 'no data';
  return `${j.metric} ${value}${m.threshold ? ` (${m.threshold})` : ''}`;
}

function failingOf(j: MetricJudgement): NonNullable<Verdict['failing']> {
  return {
    metric: j.metric,
    ...(j.measurement.value !== undefined ? { value: j.measurement.value } : {}),
    ...(j.measurement.threshold !== undefined ? { threshold: j.measurement.threshold } : {}),
  };
}

/** Combines per-metric judgements into the step verdict. */
export function combine(judgements: readonly MetricJudgement[], scoreThreshold: number): Verdict {
  const measurements = judgements.map((j) => j.measurement);
  const scored = judgements.filter((j) => j.weight > 0);
  const total = scored.reduce((s, j) => s + j.weight, 0);
  const passed = scored.filter((j) => j.state === 'pass').reduce((s, j) => s + j.weight, 0);
  const score = total > 0 ? passed / total : 0;
  const scoreText = `score ${score.toFixed(2)}`;
  // Heaviest first: the metric that explains most of a fail.
  const byWeight = [...scored].sort((a, b) => b.weight - a.weight);

  const criticalFail = byWeight.find((j) => j.critical && j.state === 'fail');
  if (criticalFail)
    return {
      verdict: 'fail',
      score,
      measurements,
      failing: failingOf(criticalFail),
      message: `critical metric failed: ${describe(criticalFail)}${criticalFail.measurement.message ? `: ${criticalFail.measurement.message}` : ''}`,
    };

  if (total === 0)
    return {
      verdict: 'hold',
      score,
      measurements,
      message: 'hold: no metric has a weight above 0, so nothing can be scored',
    };

  const undecided = byWeight.filter((j) => j.state === 'hold' || j.state === 'error');
  if (undecided.length > 0) {
    const first = undecided[0]!;
    const why =
      first.state === 'error'
        ? `${first.metric} could not be measured: ${first.measurement.message ?? 'error'}`
        : `${first.metric} has no data (onNoData: hold)`;
    const more = undecided.length > 1 ? ` (and ${undecided.length - 1} more)` : '';
    return { verdict: 'hold', score, measurements, message: `hold: ${why}${more}` };
  }

  if (score >= scoreThreshold)
    return {
      verdict: 'pass',
      score,
      measurements,
      message: `${scoreText} >= ${scoreThreshold}`,
    };

  const failed = byWeight.filter((j) => j.state === 'fail');
  return {
    verdict: 'fail',
    score,
    measurements,
    ...(failed[0] ? { failing: failingOf(failed[0]) } : {}),
    message: `${scoreText} < ${scoreThreshold}: ${failed.map((j) => `${describe(j)} failed`).join(', ')}`,
  };
}
