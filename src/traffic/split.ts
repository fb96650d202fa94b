/**
 * Pure arithmetic on traffic splits, shared by every router: validation, and reading a split
 * back from the raw weights an object carries (which need not add up to 100).
 */
import { InvalidSplitError } from './errors.js';
import type { TrafficSplit } from './router.js';

/** Throws {@link InvalidSplitError} unless `split` is two whole percentages adding up to 100. */
export function checkSplit(split: TrafficSplit): TrafficSplit {
  const { primary, canary } = split;
  const whole = (n: number) => Number.isInteger(n) && n >= 0 && n <= 100;
  if (!whole(primary) || !whole(canary) || primary + canary !== 100) {
    throw new InvalidSplitError(
      `traffic split must be whole percentages adding up to 100, got primary ${primary} canary ${canary}`,
    );
  }
  return split;
}

/**
 * The split that raw weights route (Gateway API and SMI weights are proportions, not percent):
 * the canary's share rounded to a whole percent. Undefined when both are 0 — no traffic goes to
 * either, which is no split at all.
 */
export function splitFromWeights(primaryWeight: number, canaryWeight: number): TrafficSplit | undefined {
  const total = primaryWeight + canaryWeight;
  if (!(total > 0)) return undefined;
  const canary = Math.round((100 * canaryWeight) / total);
  return { primary: 100 - canary, canary };
}
