import type { KubernetesObject } from '@kubernetes/client-node';
import type { GitSourceStatus } from '../api/git-source.js';
import { getCondition, kubeTime, markReady, markRetrying, markStalled } from '../kube/conditions.js';
import { GitError } from './errors.js';

/**
 * The annotation that asks for an immediate reconcile (`sluice reconcile source NAME`, the
 * push receiver): any new value triggers one, and `status.lastHandledReconcileAt` records the
 * value handled (Flux's `reconcile.fluxcd.io/requestedAt`).
 */
export { RECONCILE_REQUESTED_ANNOTATION } from '../api/reconcile-request.js';
import { RECONCILE_REQUESTED_ANNOTATION } from '../api/reconcile-request.js';

/** The condition reasons of a GitSource that failed (Flux's vocabulary). */
export type SourceFailureReason = 'AuthFailed' | 'RefNotFound' | 'FetchFailed' | 'ArtifactFailed';

/** Reason of `Ready=True`. */
export const SUCCEEDED_REASON = 'Succeeded';
/** Event reason when a new revision (or a new tree) is published. */
export const NEW_ARTIFACT_REASON = 'NewArtifact';
/** Event reason when a failing source works again without a new revision. */
export const RECOVERED_REASON = 'ArtifactUpToDate';

/** The result of one attempt to produce a source's artifact. */
export type SourceOutcome =
  | { readonly ok: true; readonly revision: string; readonly digest: string; readonly path: string }
  | {
      readonly ok: false;
      readonly reason: SourceFailureReason;
      readonly message: string;
      /** Retrying cannot help until the spec or a Secret changes: Stalled, not retried. */
      readonly terminal: boolean;
    };

/** An Event the status change calls for. */
export interface SourceEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/**
 * Maps a failure to the condition users see. `GitError` reasons map one to one, except
 * `Unreachable` (and the write-side `PushRejected`/`Conflict`, which a fetch never throws),
 * which become `FetchFailed` with the error's message (it says "unreachable"). Anything else
 * is `FetchFailed` with its message, retried.
 */
export function failureOutcome(err: unknown): Extract<SourceOutcome, { ok: false }> {
  if (err instanceof GitError) {
    const reason: SourceFailureReason =
      err.reason === 'AuthFailed' || err.reason === 'RefNotFound' || err.reason === 'ArtifactFailed'
        ? err.reason
        : 'FetchFailed';
    return { ok: false, reason, message: err.message, terminal: err.terminal };
  }
  return {
    ok: false,
    reason: 'FetchFailed',
    message: err instanceof Error ? err.message : String(err),
    terminal: false,
  };
}

/** The `Ready=True` message for `revision`. */
export function readyMessage(revision: string): string {
  return `stored artifact for revision ${revision}`;
}

/**
 * The next status of a GitSource for one outcome, and the Events to record. Pure.
 *
 * - success: `Ready=True` (`Succeeded`); `artifact` set, its `lastUpdateTime` moved only when
 *   the revision or digest changed; a `NewArtifact` Event when they changed, an
 *   `ArtifactUpToDate` Event when a failing source recovered on the same revision;
 * - failure: `Stalled` when terminal, else `Ready=False` + `Reconciling=ProgressingWithRetry`;
 *   the last good `artifact` is kept as it was (consumers keep applying it); a Warning Event
 *   only on a transition (from Ready, or to another reason), so a retry loop is not an Event
 *   storm;
 * - either way `observedGeneration = generation` and, when given, `lastHandledReconcileAt`.
 */
export function nextSourceStatus(
  previous: GitSourceStatus | undefined,
  generation: number,
  outcome: SourceOutcome,
  now: Date,
  handledReconcileAt?: string,
): { status: GitSourceStatus; events: SourceEvent[] } {
  const base: GitSourceStatus = { ...previous };
  if (handledReconcileAt !== undefined) base.lastHandledReconcileAt = handledReconcileAt;
  const ready = getCondition(previous?.conditions, 'Ready');
  const events: SourceEvent[] = [];

  if (outcome.ok) {
    const last = previous?.artifact;
    const changed = !last || last.revision !== outcome.revision || last.digest !== outcome.digest;
    base.artifact = {
      ...last,
      revision: outcome.revision,
      digest: outcome.digest,
      path: outcome.path,
      lastUpdateTime: changed ? kubeTime(now) : (last?.lastUpdateTime ?? kubeTime(now)),
    };
    const message = readyMessage(outcome.revision);
    if (changed) {
      events.push({ type: 'Normal', reason: NEW_ARTIFACT_REASON, message });
    } else if (ready && ready.status !== 'True') {
      events.push({ type: 'Normal', reason: RECOVERED_REASON, message: `recovered: ${message}` });
    }
    return { status: markReady(base, generation, SUCCEEDED_REASON, message, now), events };
  }

  const mark = outcome.terminal ? markStalled : markRetrying;
  const status = mark(base, generation, outcome.reason, outcome.message, now);
  if (!(ready?.status === 'False' && ready.reason === outcome.reason)) {
    events.push({ type: 'Warning', reason: outcome.reason, message: outcome.message });
  }
  return { status, events };
}

/**
 * `intervalMs` ± `fraction` (default 10%), so that many sources created together do not
 * poll their Git server in lock step. `random` returns a value in [0, 1).
 */
export function jitteredInterval(
  intervalMs: number,
  random: () => number = Math.random,
  fraction = 0.1,
): number {
  const r = Math.min(Math.max(random(), 0), 1);
  return Math.max(1, Math.round(intervalMs * (1 + fraction * (2 * r - 1))));
}

/**
 * Whether an update of a GitSource needs a reconcile: its spec changed (`generation`), an
 * immediate reconcile was requested (the annotation changed), or it is being deleted. Status
 * writes (our own included) and other metadata changes do not — they would cost a round
 * trip to the Git server each.
 */
export function updateNeedsReconcile(old: KubernetesObject, obj: KubernetesObject): boolean {
  const o = old.metadata ?? {};
  const n = obj.metadata ?? {};
  return (
    o.generation !== n.generation ||
    o.annotations?.[RECONCILE_REQUESTED_ANNOTATION] !== n.annotations?.[RECONCILE_REQUESTED_ANNOTATION] ||
    (n.deletionTimestamp !== undefined && o.deletionTimestamp === undefined) ||
    o.uid !== n.uid
  );
}
