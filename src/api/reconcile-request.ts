import type { ClusterClient } from '../kube/clients.js';

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

/** The object a reconcile is asked for. */
export interface ReconcileTarget {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/**
 * Asks the controllers to reconcile `target` now: one merge patch of the annotation (the
 * spec and generation are untouched), so it works from any replica or from the CLI.
 * Resolves with the value written; a failure is the client's error (normalise it).
 */
export async function requestReconcile(
  client: ClusterClient,
  target: ReconcileTarget,
  at = new Date(),
): Promise<string> {
  const { apiVersion, kind, namespace, name } = target;
  await client.raw.mergePatch({ apiVersion, kind, metadata: { namespace, name } }, reconcileRequestPatch(at));
  return at.toISOString();
}
