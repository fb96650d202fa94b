/**
 * Replica-ratio router, for clusters without a mesh or gateway: the apex Service selects the
 * pods of both Deployments, so the share of requests each version gets is its share of the
 * ready pods. `set` sizes the target (canary) and the primary Deployment so that
 * canary / (canary + primary) ≈ the canary weight, out of a fixed total, with at least one
 * canary pod whenever the weight is above 0.
 *
 * The total is the workload's size when all traffic is on the primary: the primary's replicas
 * plus the target's (0 at rest, Flagger's model). A release moves replicas between the two, and
 * a controller killed between the two writes leaves a sum that is no longer the total, so while
 * a split is in force the total is recorded on the primary ({@link TOTAL_ANNOTATION}, written in
 * the same apply as its replicas, before the target is touched) and dropped again at 0% canary,
 * when the primary holds every replica again.
 *
 * Writes are applies as `sluice-rollout` of `spec.replicas` (and that annotation) only, with
 * `force`: the target's replicas come from Git (`sluice-delivery`); taking them over is what
 * makes the Delivery yield them, as it yields an autoscaler's. Server-side apply gives a manager
 * exactly the fields of its last apply, so whatever writes the primary's pod template must do so
 * under another field manager than `sluice-rollout`, or this replicas-only apply would drop it.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterClient } from '../kube/clients.js';
import type { ReleaseNames } from '../rollout/names.js';
import { TrafficRouteError } from './errors.js';
import { applyAsRollout, probe, readOptional, where } from './kube.js';
import type { RouterCheck, RouterContext, TrafficRouter, TrafficSplit } from './router.js';
import { checkSplit, splitFromWeights } from './split.js';

/** On the primary while a split is in force: the total number of replicas being divided. */
export const TOTAL_ANNOTATION = 'sluice.dev/replica-total';

export interface Deployment extends KubernetesObject {
  spec?: { replicas?: number; [field: string]: unknown };
}

/** The two Deployments as they are. */
export interface ReplicaState {
  readonly target: Deployment;
  readonly primary: Deployment;
}

/** `spec.replicas`, defaulted as the API server defaults it. */
const replicasOf = (d: Deployment): number => d.spec?.replicas ?? 1;

/** The total being divided: the recorded one while a split is in force, else both sizes added. */
export function replicaTotal(state: ReplicaState): number {
  const recorded = Number(state.primary.metadata?.annotations?.[TOTAL_ANNOTATION]);
  if (Number.isInteger(recorded) && recorded > 0) return recorded;
  return replicasOf(state.target) + replicasOf(state.primary);
}

/**
 * How many replicas each side gets for `split` out of `total`: every one to the side with
 * 100%; else at least one each (a 1-replica workload gets one of each, 2 pods), and the
 * canary's share rounded, the primary the rest.
 */
export function replicaCounts(split: TrafficSplit, total: number): { canary: number; primary: number } {
  checkSplit(split);
  const t = Math.max(1, Math.round(total));
  if (split.canary === 0) return { canary: 0, primary: t };
  if (split.primary === 0) return { canary: t, primary: 0 };
  if (t === 1) return { canary: 1, primary: 1 };
  const canary = Math.min(t - 1, Math.max(1, Math.round((t * split.canary) / 100)));
  return { canary, primary: t - canary };
}

function replicasBody(name: string, namespace: string, replicas: number, total?: number): Deployment {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name,
      namespace,
      ...(total !== undefined ? { annotations: { [TOTAL_ANNOTATION]: String(total) } } : {}),
    },
    spec: { replicas },
  };
}

/**
 * The applies that route `split`, in the order to send them; empty when the Deployments already
 * have those sizes (and the total is recorded as it should be). Order: the primary first when
 * it records the total (before anything moves; the first step may so lose a pod of capacity
 * for a moment), the canary first when returning to 0% (so the record is dropped last);
 * otherwise the side that grows first, so capacity never dips.
 */
export function desiredReplicas(
  split: TrafficSplit,
  names: ReleaseNames,
  current: ReplicaState,
): Deployment[] {
  const total = replicaTotal(current);
  const want = replicaCounts(split, total);
  const atRest = split.canary === 0;
  const recorded = current.primary.metadata?.annotations?.[TOTAL_ANNOTATION];
  const recordOk = atRest ? recorded === undefined : recorded === String(total);
  const target =
    replicasOf(current.target) === want.canary && current.target.spec?.replicas !== undefined
      ? undefined
      : replicasBody(names.target, names.namespace, want.canary);
  const primary =
    replicasOf(current.primary) === want.primary && current.primary.spec?.replicas !== undefined && recordOk
      ? undefined
      : replicasBody(names.primary, names.namespace, want.primary, atRest ? undefined : total);
  if (!target) return primary ? [primary] : [];
  if (!primary) return [target];
  const primaryFirst = atRest ? false : recorded === undefined || want.primary > replicasOf(current.primary);
  return primaryFirst ? [primary, target] : [target, primary];
}

/** The split the replica counts give: the canary's share of the pods. */
export function replicaSplit(state: ReplicaState): TrafficSplit | undefined {
  return splitFromWeights(replicasOf(state.primary), replicasOf(state.target));
}

interface ManagedEntry {
  manager?: string;
  subresource?: string;
  fieldsV1?: { 'f:spec'?: { 'f:replicas'?: unknown } };
}

/** What keeps the ratio from being set; empty when nothing does. */
export function replicaProblems(state: ReplicaState, names: ReleaseNames): string[] {
  const problems: string[] = [];
  const total = replicaTotal(state);
  if (total < 2) {
    problems.push(
      `${where('Deployment', names.namespace, names.primary)} spec.replicas: ${total} replica cannot be split; the replica ratio needs at least 2`,
    );
  }
  for (const [d, name] of [
    [state.target, names.target],
    [state.primary, names.primary],
  ] as const) {
    const entries = (d.metadata?.managedFields ?? []) as ManagedEntry[];
    const scaler = entries.find(
      (e) => e.subresource === 'scale' && e.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined,
    );
    if (scaler) {
      problems.push(
        `${where('Deployment', names.namespace, name)} spec.replicas: owned by ${scaler.manager ?? '?'} through the scale subresource (an autoscaler); a replica ratio would fight it`,
      );
    }
  }
  return problems;
}

/** {@link TrafficRouter} that splits by replica counts of the target and primary Deployments. */
export class ReplicasRouter implements TrafficRouter {
  readonly provider = 'replicas' as const;
  readonly #client: ClusterClient;
  readonly #names: ReleaseNames;

  constructor(ctx: RouterContext) {
    this.#client = ctx.client;
    this.#names = ctx.names;
  }

  async #read(): Promise<{ state?: ReplicaState; missing: string[] }> {
    const { namespace, target, primary } = this.#names;
    const [t, p] = await Promise.all([
      readOptional<Deployment>(this.#client, probe('apps/v1', 'Deployment', namespace, target)),
      readOptional<Deployment>(this.#client, probe('apps/v1', 'Deployment', namespace, primary)),
    ]);
    const missing: string[] = [];
    if (!t) missing.push(`spec.targetRef.name: ${where('Deployment', namespace, target)} not found`);
    if (!p) {
      missing.push(
        `spec.targetRef.name: primary ${where('Deployment', namespace, primary)} not found (the release creates it when it initializes)`,
      );
    }
    return t && p ? { state: { target: t, primary: p }, missing } : { missing };
  }

  /** Reads both Deployments first and applies only the ones whose size (or record) differs. */
  async set(split: TrafficSplit): Promise<void> {
    checkSplit(split);
    const { state, missing } = await this.#read();
    if (!state) throw new TrafficRouteError(missing);
    for (const body of desiredReplicas(split, this.#names, state)) {
      await applyAsRollout(this.#client, body, { force: true });
    }
  }

  async get(): Promise<TrafficSplit | undefined> {
    const { state } = await this.#read();
    return state && replicaSplit(state);
  }

  async verify(): Promise<RouterCheck> {
    const { state, missing } = await this.#read();
    const problems = state ? replicaProblems(state, this.#names) : missing;
    return problems.length > 0 ? { ok: false, problems } : { ok: true };
  }
}
