/**
 * The shape of a run, derived from the spec alone: the canary weights of each step and the gates
 * that stand before each move. Pure; shared by the step function and `sluice status canary`.
 */
import type { CanaryGate, CanaryReleaseSpec, GatePoint } from '../api/canary-release.js';

/**
 * The canary weight of each step, in order. `steps.weights` as written; `stepWeight`/`maxWeight`
 * expand to stepWeight, 2·stepWeight, … up to maxWeight (maxWeight itself is the last step even
 * when it is not a multiple, as Flagger's `maxWeight`). Blue/green has one step at weight 0: the
 * canary is analysed through its own Service while the primary keeps all traffic.
 */
export function stepWeights(spec: Pick<CanaryReleaseSpec, 'strategy' | 'steps'>): number[] {
  if (spec.strategy === 'blueGreen') return [0];
  const s = spec.steps ?? {};
  if (s.weights && s.weights.length > 0) return [...s.weights];
  const step = s.stepWeight ?? 0;
  const max = s.maxWeight ?? 0;
  if (step <= 0 || max <= 0) return [];
  const out: number[] = [];
  for (let w = step; w < max; w += step) out.push(w);
  out.push(max);
  return out;
}

/** The gates of `point`, in spec order. */
export function gatesAt(spec: Pick<CanaryReleaseSpec, 'gates'>, point: GatePoint): CanaryGate[] {
  return (spec.gates ?? []).filter((g) => g.at === point);
}

/**
 * The gates that must open, in order, before the run moves on from step `k` of `n`:
 * before the first traffic shift (k = 0) the preRollout gates then the confirmTrafficIncrease
 * ones; before each further increase the confirmTrafficIncrease ones; after the last step
 * (k = n) the confirmPromotion ones. Blue/green has no traffic increase: preRollout before
 * its analysis starts, confirmPromotion before the switch.
 */
export function gatesBefore(
  spec: Pick<CanaryReleaseSpec, 'gates' | 'strategy'>,
  k: number,
  n: number,
): CanaryGate[] {
  if (k >= n) return gatesAt(spec, 'confirmPromotion');
  if (spec.strategy === 'blueGreen') return k === 0 ? gatesAt(spec, 'preRollout') : [];
  return k === 0
    ? [...gatesAt(spec, 'preRollout'), ...gatesAt(spec, 'confirmTrafficIncrease')]
    : gatesAt(spec, 'confirmTrafficIncrease');
}

/** `3/5` → {k: 3, n: 5}; anything else → k 0. */
export function parseStep(step: string | undefined, n: number): number {
  const m = /^(\d+)\/(\d+)$/.exec(step ?? '');
  const k = m ? Number(m[1]) : 0;
  return Math.min(Math.max(0, k), n);
}

/** `k/n` as the printer column shows it. */
export function formatStep(k: number, n: number): string {
  return `${k}/${n}`;
}
