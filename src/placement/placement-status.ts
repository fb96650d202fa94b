import type { PlacementDecision, PlacementRuleStatus } from '../api/placement-rule.js';
import { getCondition, markReady, markStalled } from '../kube/conditions.js';
import type { DecideResult } from './decide.js';

/** The Ready reason when the decisions are current. */
export const DECIDED_REASON = 'Decided';
/** The Ready/Stalled reason when the spec cannot be decided on (a retry cannot help). */
export const INVALID_SPEC_REASON = 'InvalidSpec';
/** The Event reason when the set of decided clusters changed. */
export const DECISIONS_CHANGED_REASON = 'DecisionsChanged';

/** An Event to record after the status was written. */
export interface PlacementEvent {
  readonly type: 'Normal' | 'Warning';
  readonly reason: string;
  readonly message: string;
}

/** What one reconcile of a PlacementRule writes, records and waits for. */
export interface PlacementOutcome {
  /** The whole next status (one write). */
  readonly status: PlacementRuleStatus;
  /** Recorded only when the decided set changed, or the rule became invalid. */
  readonly event?: PlacementEvent;
  /** When a debounce ends, so that the eviction is not left to the next Cluster event. */
  readonly requeueAfterMs?: number;
}

// decide() reports these only on the reconcile where they happen; they belong in the Event,
// not in the Ready message, which must stay the same while nothing changes.
const TRANSITION = /^(dropped|evicted) (\S+): (.*)$/;

/**
 * The next `PlacementRule` status for one `decide` result, and the Event to record. Pure.
 *
 * - decided: `status.decisions` (with each reason and `failingSince`), `Ready=True` with
 *   reason `Decided` and a message such as `2 of 3 clusters selected` followed by what the
 *   rule could not do (unknown names, clusters cut by `clusterReplicas`, clusters kept by the
 *   flap debounce); a `Normal` `DecisionsChanged` Event (`added member-2; removed member-3
 *   (no longer selected by the rule)`) when the set of names changed;
 * - invalid spec: `Stalled=True` / `Ready=False` with reason `InvalidSpec` and every field
 *   error; the previous decisions are kept (never destroy on doubt: a typo in a selector must
 *   not remove an application from every cluster), and a `Warning` Event when the message is new.
 */
export function nextPlacementStatus(
  previous: PlacementRuleStatus | undefined,
  generation: number,
  result: DecideResult,
  clusterCount: number,
  now: Date,
): PlacementOutcome {
  const base: PlacementRuleStatus = { ...previous };
  if (!result.ok) {
    const message = `invalid spec: ${result.errors.map((e) => e.message).join('; ')}`;
    const before = getCondition(previous?.conditions, 'Stalled');
    const status = markStalled(base, generation, INVALID_SPEC_REASON, message, now);
    const repeated = before?.status === 'True' && before.message === message;
    return {
      status,
      ...(repeated ? {} : { event: { type: 'Warning', reason: INVALID_SPEC_REASON, message } }),
    };
  }

  const decisions: PlacementDecision[] = result.decisions.map((d) => ({
    clusterName: d.clusterName,
    reason: d.reason,
    ...(d.failingSince === undefined ? {} : { failingSince: d.failingSince }),
  }));
  const notes: string[] = [];
  const transitions = new Map<string, string>();
  for (const m of result.messages) {
    const t = TRANSITION.exec(m);
    if (t) transitions.set(t[2]!, `${t[1]}: ${t[3]}`);
    else notes.push(m);
  }
  const kept = decisions.filter((d) => d.failingSince !== undefined);
  if (kept.length > 0) {
    notes.push(
      `kept during the flap debounce: ${kept.map((d) => `${d.clusterName} (failing since ${d.failingSince})`).join(', ')}`,
    );
  }
  const plural = clusterCount === 1 ? 'cluster' : 'clusters';
  const message = [`${decisions.length} of ${clusterCount} ${plural} selected`, ...notes].join('; ');
  const status = markReady({ ...base, decisions }, generation, DECIDED_REASON, message, now);

  const event = decisionChange(previous?.decisions ?? [], decisions, transitions);
  return {
    status,
    ...(event ? { event } : {}),
    ...(result.requeueAfterMs === undefined ? {} : { requeueAfterMs: result.requeueAfterMs }),
  };
}

function decisionChange(
  before: readonly PlacementDecision[],
  after: readonly PlacementDecision[],
  why: ReadonlyMap<string, string>,
): PlacementEvent | undefined {
  const was = new Set(before.map((d) => d.clusterName));
  const is = new Set(after.map((d) => d.clusterName));
  const added = [...is].filter((n) => !was.has(n)).sort();
  const removed = [...was].filter((n) => !is.has(n)).sort();
  if (added.length === 0 && removed.length === 0) return undefined;
  const parts: string[] = [];
  if (added.length > 0) parts.push(`added ${added.join(', ')}`);
  if (removed.length > 0) {
    parts.push(`removed ${removed.map((n) => (why.has(n) ? `${n} (${why.get(n)})` : n)).join(', ')}`);
  }
  return { type: 'Normal', reason: DECISIONS_CHANGED_REASON, message: parts.join('; ') };
}
