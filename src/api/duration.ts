/**
 * Durations as Kubernetes users write them (Go's `time.Duration` syntax, the units Flux
 * and Flagger accept): `500ms`, `30s`, `5m`, `1h30m`. One pattern for the CRD schemas,
 * one parser for specs and flags, one formatter for messages.
 */

/** The schema pattern of a duration field. */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';

const DURATION_RE = new RegExp(DURATION_PATTERN);
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `1h30m` → 5400000; `undefined` when the text is not a duration. */
export function parseDuration(value: string): number | undefined {
  if (!DURATION_RE.test(value)) return undefined;
  let total = 0;
  for (const [, n, unit] of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g))
    total += Number(n) * UNIT_MS[unit!]!;
  return total;
}

/**
 * Formats milliseconds the way Go prints a `time.Duration` and Kubernetes users read it
 * (`1h2m3s`, `1m30s`, `45s`, `250ms`), truncated to whole seconds above one second so messages
 * stay stable between requeues.
 */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  let s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}
