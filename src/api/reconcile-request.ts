/**
 * Operator intent "reconcile now" (Flux's `reconcile.fluxcd.io/requestedAt`): `sluice
 * reconcile` and the push receiver set this annotation to the time of the request; a
 * controller that sees a value it has not handled yet reconciles at once and records the
 * value in `status.lastHandledReconcileAt`. An annotation, not spec: it must not look like
 * Git drift.
 */
export const RECONCILE_REQUESTED_ANNOTATION = 'sluice.dev/reconcile-requested-at';

/** The merge patch that asks for a reconcile at `at`. Pure. */
export function reconcileRequestPatch(at: Date): { metadata: { annotations: Record<string, string> } } {
  // Millisecond precision: two requests within one second must still differ, or the second
  // would look already handled.
  return { metadata: { annotations: { [RECONCILE_REQUESTED_ANNOTATION]: at.toISOString() } } };
}
