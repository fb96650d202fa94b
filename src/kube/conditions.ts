/** A condition's status, as Kubernetes spells it. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** A status condition (the shape of `metav1.Condition`). */
export interface Condition {
  type: string;
  status: ConditionStatus;
  /** CamelCase, machine-readable, e.g. `ArtifactFailed`. */
  reason: string;
  message: string;
  /** RFC 3339, second precision: when `status` last changed. */
  lastTransitionTime: string;
  observedGeneration?: number;
}

/** A condition to set: `lastTransitionTime` is worked out by `setCondition`. */
export type ConditionUpdate = Omit<Condition, 'lastTransitionTime'>;

/** The kstatus condition types Sluice sets on every resource. */
export const ConditionType = {
  Ready: 'Ready',
  Reconciling: 'Reconciling',
  Stalled: 'Stalled',
} as const;

/** The part of a status these helpers touch; other fields are carried over unchanged. */
export interface ConditionedStatus {
  observedGeneration?: number;
  conditions?: Condition[];
}

/** `date` as Kubernetes writes `metav1.Time`: RFC 3339 in UTC, whole seconds. */
export function kubeTime(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The condition of `type`, if present. */
export function getCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** True when the condition of `type` is present with status `True`. */
export function isConditionTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

/**
 * A new array with `cond` set: an existing condition of the same type is replaced in place,
 * otherwise `cond` is appended. `lastTransitionTime` is kept when the status did not change
 * (even if reason or message did) and is `now` when it did. When nothing changed at all the
 * existing entry is returned as is, so an unchanged status stays deep-equal (and
 * `writeStatus` skips the write). Never mutates its input.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  cond: ConditionUpdate,
  now: Date = new Date(),
): Condition[] {
  const list = conditions ?? [];
  const index = list.findIndex((c) => c.type === cond.type);
  const existing = index >= 0 ? list[index] : undefined;
  const lastTransitionTime =
    existing && existing.status === cond.status ? existing.lastTransitionTime : kubeTime(now);
  const next: Condition = { ...cond, lastTransitionTime };
  if (next.observedGeneration === undefined) delete next.observedGeneration;
  if (existing && sameCondition(existing, next)) return [...list];
  if (index < 0) return [...list, next];
  return list.map((c, i) => (i === index ? next : c));
}

/** A new array without the condition of `type`. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

function sameCondition(a: Condition, b: Condition): boolean {
  return (
    a.type === b.type &&
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.lastTransitionTime === b.lastTransitionTime &&
    a.observedGeneration === b.observedGeneration
  );
}

function withConditions<S extends ConditionedStatus>(
  status: S,
  generation: number,
  update: (conditions: Condition[]) => Condition[],
): S {
  return { ...status, observedGeneration: generation, conditions: update(status.conditions ?? []) };
}

/**
 * The resource reached its desired state for `generation`: `Ready=True`, `Reconciling` and
 * `Stalled` removed, `observedGeneration = generation` (kstatus: Current). Returns a new status.
 */
export function markReady<S extends ConditionedStatus>(
  status: S,
  generation: number,
  reason: string,
  message: string,
  now: Date = new Date(),
): S {
  return withConditions(status, generation, (cs) =>
    setCondition(
      removeCondition(removeCondition(cs, ConditionType.Reconciling), ConditionType.Stalled),
      { type: ConditionType.Ready, status: 'True', reason, message, observedGeneration: generation },
      now,
    ),
  );
}

/**
 * Sets the kstatus trio for a non-Ready state: `Ready` (with `ready` status, `reason` and
 * `message`), then either `Reconciling=True` (with `reconcilingReason`) and no `Stalled`, or
 * `Stalled=True` and no `Reconciling`. The one shape behind the three helpers below.
 */
function markNotReady<S extends ConditionedStatus>(
  status: S,
  generation: number,
  ready: 'Unknown' | 'False',
  progress: { type: 'Reconciling'; reason: string } | { type: 'Stalled' },
  reason: string,
  message: string,
  now: Date,
): S {
  const gone = progress.type === 'Reconciling' ? ConditionType.Stalled : ConditionType.Reconciling;
  const progressReason = progress.type === 'Reconciling' ? progress.reason : reason;
  return withConditions(status, generation, (cs) => {
    const base = removeCondition(cs, gone);
    const withProgress = setCondition(
      base,
      {
        type: progress.type,
        status: 'True',
        reason: progressReason,
        message,
        observedGeneration: generation,
      },
      now,
    );
    return setCondition(
      withProgress,
      { type: ConditionType.Ready, status: ready, reason, message, observedGeneration: generation },
      now,
    );
  });
}

/**
 * The controller is working towards `generation`: `Reconciling=True`, `Ready=Unknown` with
 * the same reason and message, `Stalled` removed, `observedGeneration = generation`
 * (kstatus: InProgress). Returns a new status.
 */
export function markReconciling<S extends ConditionedStatus>(
  status: S,
  generation: number,
  reason: string,
  message: string,
  now: Date = new Date(),
): S {
  return markNotReady(status, generation, 'Unknown', { type: 'Reconciling', reason }, reason, message, now);
}

/**
 * The controller cannot make progress on `generation` without a change from outside (an
 * invalid spec, a missing dependency): `Stalled=True`, `Ready=False` with the same reason and
 * message, `Reconciling` removed, `observedGeneration = generation` (kstatus: Failed).
 * Returns a new status.
 */
export function markStalled<S extends ConditionedStatus>(
  status: S,
  generation: number,
  reason: string,
  message: string,
  now: Date = new Date(),
): S {
  return markNotReady(status, generation, 'False', { type: 'Stalled' }, reason, message, now);
}

/**
 * A reconcile of `generation` failed in a way a retry may fix (the API server is away, a
 * dependency is not ready yet): `Ready=False` with `reason` and `message`,
 * `Reconciling=True` with reason `ProgressingWithRetry` (as Flux), `Stalled` removed,
 * `observedGeneration = generation` (kstatus: InProgress). Returns a new status.
 */
export function markRetrying<S extends ConditionedStatus>(
  status: S,
  generation: number,
  reason: string,
  message: string,
  now: Date = new Date(),
): S {
  return markNotReady(
    status,
    generation,
    'False',
    { type: 'Reconciling', reason: 'ProgressingWithRetry' },
    reason,
    message,
    now,
  );
}
