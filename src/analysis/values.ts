/**
 * Metric values as text. Status is JSON, which has no NaN or ±Inf, and on-call must tell
 * them apart: a NaN (0/0, no requests) is a different problem from +Inf (divided by zero,
 * a quantile in the +Inf bucket).
 */

/** Prometheus' JSON sample text → a number, keeping ±Inf (prometheus-query's parseFloat makes them NaN). */
export function parseSampleValue(text: string): number {
  if (text === '+Inf' || text === 'Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

/** A number as on-call reads it in status: `NaN`, `+Inf`, `-Inf` or at most 6 significant digits. */
export function formatSampleValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return '+Inf';
  if (value === -Infinity) return '-Inf';
  return String(Number(value.toPrecision(6)));
}
