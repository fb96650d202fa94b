/**
 * The Delivery's status as a pure function of what one reconcile found: the previous status, the
 * generation, the outcome (artifact, render, per-cluster apply) and the clock. The reconciler
 * writes the result once.
 */
import {
  getCondition,
  kubeTime,
  markReady,
  markReconciling,
  markRetrying,
  markStalled,
} from '../kube/conditions.js';
import {
  DELIVERY_HISTORY_LIMIT,
  type AppliedRevision,
  type DeliveryClusterStatus,
  type DeliveryPhase,
  type DeliveryStatus,
} from '../api/delivery.js';

/** Condition reasons of a Delivery (Flux's vocabulary). */
export const DeliveryReason = {
  ArtifactFailed: 'ArtifactFailed',
  BuildFailed: 'BuildFailed',
  ApplyFailed: 'ApplyFailed',
  APINotServed: 'APINotServed',
  HealthCheckFailed: 'HealthCheckFailed',
  PruneFailed: 'PruneFailed',
  PlacementNotFound: 'PlacementNotFound',
  RevisionRolledBack: 'RevisionRolledBack',
  Progressing: 'Progressing',
  ReconciliationSucceeded: 'ReconciliationSucceeded',
} as const;

/** Why one cluster is not Healthy, when it is a failure rather than a wait. */
export type ClusterFailure = 'ApplyFailed' | 'APINotServed' | 'HealthCheckFailed' | 'PruneFailed';

/** What one reconcile did on one placed cluster. */
export interface ClusterOutcome {
  readonly name: string;
  readonly phase: DeliveryPhase;
  /** The revision now applied there; absent when this reconcile applied nothing (kept from before). */
  readonly revision?: string;
  /** Objects in the inventory there; absent when unknown (kept from before). */
  readonly objects?: number;
  readonly message: string;
  /** Set for a Degraded cluster, and for an Unreachable one (`ApplyFailed`). */
  readonly failure?: ClusterFailure;
}

/** A cluster that left the decisions. */
export interface RemovedCluster {
  readonly name: string;
  /** True once its objects were pruned and its inventory deleted. */
  readonly done: boolean;
  readonly message: string;
}

/** What a reconcile found, in the order the reconciler gives up. */
export type DeliveryOutcome =
  | { readonly kind: 'ArtifactFailed'; readonly message: string }
  | { readonly kind: 'PlacementNotFound'; readonly message: string }
  | { readonly kind: 'BuildFailed'; readonly revision: string; readonly message: string }
  /** A CanaryRelease following this Delivery rolled the revision back: nothing applied or pruned. */
  | { readonly kind: 'RevisionRolledBack'; readonly revision: string; readonly message: string }
  | {
      readonly kind: 'Applied';
      readonly revision: string;
      readonly clusters: readonly ClusterOutcome[];
      readonly removed: readonly RemovedCluster[];
    };

const MAX_MESSAGE = 2048;
const MAX_CLUSTER_MESSAGE = 512;

/** `text` cut to `max` characters, marked when cut. Keeps status small whatever the inputs. */
export function truncate(text: string, max = MAX_MESSAGE): string {
  return text.length <= max ? text : `${text.slice(0, max - 3)}...`;
}

/**
 * `history` with `revision` first (applied at `at`), each revision once, at most
 * {@link DELIVERY_HISTORY_LIMIT}. An unchanged head returns the same entries, so an unchanged
 * reconcile leaves status deep-equal.
 */
export function pushHistory(
  history: readonly AppliedRevision[] | undefined,
  revision: string,
  at: Date,
): AppliedRevision[] {
  const list = history ?? [];
  if (list[0]?.revision === revision) return [...list];
  return [{ revision, appliedAt: kubeTime(at) }, ...list.filter((h) => h.revision !== revision)].slice(
    0,
    DELIVERY_HISTORY_LIMIT,
  );
}

/**
 * When the current health wait began: the time `Reconciling` last turned True, else `now`.
 * Persisted in status, so a restarted controller keeps the deadline.
 */
export function healthWaitStart(status: DeliveryStatus | undefined, now: Date): number {
  const c = getCondition(status?.conditions, 'Reconciling');
  const t = c?.status === 'True' ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isFinite(t) ? t : now.getTime();
}

const FAILURE_RANK: Record<ClusterFailure, number> = {
  ApplyFailed: 0,
  APINotServed: 0,
  PruneFailed: 1,
  HealthCheckFailed: 2,
};

function mergeCluster(prev: DeliveryClusterStatus | undefined, o: ClusterOutcome): DeliveryClusterStatus {
  const revision = o.revision ?? prev?.revision;
  const objects = o.objects ?? prev?.objects;
  return {
    name: o.name,
    ...(revision !== undefined ? { revision } : {}),
    phase: o.phase,
    ...(objects !== undefined ? { objects } : {}),
    ...(o.message ? { message: truncate(o.message, MAX_CLUSTER_MESSAGE) } : {}),
  };
}

const byName = (a: { name: string }, b: { name: string }): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

/**
 * The next status. Conditions (kstatus):
 * - `ArtifactFailed`, `PlacementNotFound`: Ready=False, Reconciling (retry) — the source or
 *   placement controller will fix it; clusters keep their last state;
 * - `BuildFailed`: Ready=False, Stalled — only a new commit helps; nothing was applied, so
 *   clusters keep their last revision and phase;
 * - applied: any failing cluster (Unreachable or Degraded) → Ready=False with its reason
 *   (`ApplyFailed` before `PruneFailed` before `HealthCheckFailed`), Stalled for a health check
 *   that failed or timed out, retrying otherwise; any cluster still Applying or Pending →
 *   Reconciling; else Ready=True `ReconciliationSucceeded`.
 * `lastAppliedRevision` and `history` move only when every placed cluster has the revision.
 * Clusters that left the decisions disappear once pruned; until then they stay listed with
 * a message saying the removal is pending. `handledReconcileAt` (the
 * `sluice.dev/reconcile-requested-at` value this run acted on) goes to `lastHandledReconcileAt`.
 */
export function nextDeliveryStatus(
  prev: DeliveryStatus | undefined,
  generation: number,
  outcome: DeliveryOutcome,
  now: Date,
  handledReconcileAt?: string,
): DeliveryStatus {
  const base: DeliveryStatus = { ...(prev ?? {}) };
  if (handledReconcileAt !== undefined) base.lastHandledReconcileAt = handledReconcileAt;
  switch (outcome.kind) {
    case 'ArtifactFailed':
      return markRetrying(base, generation, DeliveryReason.ArtifactFailed, truncate(outcome.message), now);
    case 'PlacementNotFound':
      return markRetrying(base, generation, DeliveryReason.PlacementNotFound, truncate(outcome.message), now);
    case 'BuildFailed':
      return markStalled(
        base,
        generation,
        DeliveryReason.BuildFailed,
        truncate(`revision ${outcome.revision}: ${outcome.message}; nothing was applied or pruned`),
        now,
      );
    case 'RevisionRolledBack':
      return markStalled(
        base,
        generation,
        DeliveryReason.RevisionRolledBack,
        truncate(
          `revision ${outcome.revision}: ${outcome.message}; what runs is kept, nothing was applied or pruned`,
        ),
        now,
      );
    case 'Applied':
      break;
  }

  const prevByName = new Map((prev?.clusters ?? []).map((c) => [c.name, c]));
  const clusters: DeliveryClusterStatus[] = outcome.clusters.map((o) =>
    mergeCluster(prevByName.get(o.name), o),
  );
  for (const r of outcome.removed) {
    if (r.done) continue;
    const p = prevByName.get(r.name);
    clusters.push({
      ...(p ?? { name: r.name }),
      name: r.name,
      phase: 'Unreachable',
      message: truncate(r.message, MAX_CLUSTER_MESSAGE),
    });
  }
  clusters.sort(byName);

  let next: DeliveryStatus = { ...base, clusters };
  const allApplied = outcome.clusters.every((c) => c.revision === outcome.revision);
  if (allApplied) {
    next = {
      ...next,
      lastAppliedRevision: outcome.revision,
      history: pushHistory(prev?.history, outcome.revision, now),
    };
  }

  const removedDone = outcome.removed.filter((r) => r.done);
  const removedNote = removedDone.length
    ? `; removed from ${removedDone.map((r) => `${r.name} (${r.message})`).join(', ')}`
    : '';
  const removedPending = outcome.removed.filter((r) => !r.done);

  const failing = outcome.clusters
    .filter((c) => c.failure !== undefined)
    .sort((a, b) => FAILURE_RANK[a.failure!] - FAILURE_RANK[b.failure!]);
  const worst = failing[0];
  if (worst?.failure) {
    const message = truncate(failing.map((c) => `${c.name}: ${c.message}`).join('; '));
    return worst.failure === 'HealthCheckFailed'
      ? markStalled(next, generation, worst.failure, message, now)
      : markRetrying(next, generation, worst.failure, message, now);
  }
  if (removedPending.length) {
    const message = truncate(removedPending.map((r) => `${r.name}: ${r.message}`).join('; '));
    return markRetrying(next, generation, DeliveryReason.PruneFailed, message, now);
  }
  const waiting = outcome.clusters.filter((c) => c.phase === 'Applying' || c.phase === 'Pending');
  if (waiting.length) {
    const message = truncate(waiting.map((c) => `${c.name}: ${c.message}`).join('; '));
    return markReconciling(next, generation, DeliveryReason.Progressing, message, now);
  }
  const n = outcome.clusters.length;
  return markReady(
    next,
    generation,
    DeliveryReason.ReconciliationSucceeded,
    truncate(
      `applied revision ${outcome.revision} to ${n} cluster${n === 1 ? '' : 's'}, all healthy${removedNote}`,
    ),
    now,
  );
}
