/**
 * PlacementRule decisions with Open Cluster Management semantics, as one pure function of the
 * rule, the clusters, the previous decisions and the clock.
 */
import type { Cluster } from '../api/cluster.js';
import type { PlacementDecision, PlacementRuleSpec } from '../api/placement-rule.js';
import { formatDuration } from '../api/duration.js';
import { kubeTime } from '../kube/conditions.js';
import { FieldError, invalid, notSupported, required } from './field-error.js';
import { InvalidQuantityError, parseQuantity } from './quantity.js';
import { matchesLabelSelector, validateLabelSelector } from './selector.js';

/** What placement needs to know about one member cluster. */
export interface ClusterFacts {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly conditions?: readonly { readonly type: string; readonly status: string }[];
  /** Allocatable capacity as Kubernetes quantities (`7500m`, `31Gi`). */
  readonly allocatable?: { readonly cpu?: string; readonly memory?: string };
}

/** The facts placement reads from a `Cluster` resource. */
export function clusterFacts(cluster: Cluster): ClusterFacts {
  return {
    name: cluster.metadata.name ?? '',
    labels: cluster.metadata.labels ?? {},
    conditions: cluster.status?.conditions ?? [],
    allocatable: cluster.status?.allocatable ?? {},
  };
}

/**
 * A decision as stored in `status.decisions`. `failingSince` (RFC 3339) is set while a decided
 * cluster fails the rule's clusterConditions but is kept for the debounce; it lives in status so
 * that a restarted controller keeps counting from the first failure.
 */
export interface Decision extends PlacementDecision {
  readonly clusterName: string;
  readonly reason: string;
  readonly failingSince?: string;
}

/** Everything a decision depends on except the clock. */
export interface DecideInput {
  readonly spec: PlacementRuleSpec;
  readonly clusters: readonly ClusterFacts[];
  /** `status.decisions` from the last reconcile (with their `failingSince`). */
  readonly previousDecisions?: readonly Pick<Decision, 'clusterName' | 'failingSince'>[];
  /** How long a decided cluster may fail clusterConditions before it is evicted. */
  readonly debounceMs: number;
}

/**
 * Either the decisions (sorted by cluster name, each with why), when to look again if a
 * debounce is running, and notes for events/conditions; or every spec error, which is terminal.
 */
export type DecideResult =
  | {
      readonly ok: true;
      readonly decisions: readonly Decision[];
      /** Set while a failing cluster is kept by the debounce: when its debounce ends. */
      readonly requeueAfterMs?: number;
      readonly messages: readonly string[];
    }
  | { readonly ok: false; readonly errors: readonly FieldError[] };

const CONDITION_STATUSES: readonly string[] = ['True', 'False', 'Unknown'];
const RESOURCE_TYPES: readonly string[] = ['cpu', 'memory'];
const ORDERS: readonly string[] = ['Asc', 'Desc'];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every problem with a PlacementRule spec taken as untrusted input (the CRD schema may be older
 * than the object, or bypassed), at its field path, in the API server's words.
 */
export function validatePlacementSpec(spec: unknown): FieldError[] {
  if (!isObject(spec)) return [required('spec')];
  const errors: FieldError[] = [...validateLabelSelector(spec.clusterSelector, 'spec.clusterSelector')];

  const { clusters, clusterConditions, clusterReplicas, resourceHint } = spec;
  if (clusters !== undefined && clusters !== null) {
    if (!Array.isArray(clusters)) errors.push(invalid('spec.clusters', clusters, 'must be a list'));
    else {
      const seen = new Set<string>();
      clusters.forEach((c: unknown, i) => {
        const name = isObject(c) ? c.name : undefined;
        if (typeof name !== 'string' || name === '') errors.push(required(`spec.clusters[${i}].name`));
        else if (seen.has(name))
          errors.push(new FieldError(`spec.clusters[${i}].name`, `Duplicate value: ${JSON.stringify(name)}`));
        else seen.add(name);
      });
    }
  }

  if (clusterConditions !== undefined && clusterConditions !== null) {
    if (!Array.isArray(clusterConditions)) {
      errors.push(invalid('spec.clusterConditions', clusterConditions, 'must be a list'));
    } else {
      clusterConditions.forEach((c: unknown, i) => {
        const at = `spec.clusterConditions[${i}]`;
        const { type, status } = isObject(c) ? c : {};
        if (typeof type !== 'string' || type === '') errors.push(required(`${at}.type`));
        if (status === undefined || status === null || status === '') errors.push(required(`${at}.status`));
        else if (typeof status !== 'string' || !CONDITION_STATUSES.includes(status)) {
          errors.push(notSupported(`${at}.status`, status, CONDITION_STATUSES));
        }
      });
    }
  }

  if (clusterReplicas !== undefined && clusterReplicas !== null) {
    if (typeof clusterReplicas !== 'number' || !Number.isInteger(clusterReplicas)) {
      errors.push(invalid('spec.clusterReplicas', clusterReplicas, 'must be an integer'));
    } else if (clusterReplicas < 0) {
      errors.push(invalid('spec.clusterReplicas', clusterReplicas, 'must be greater than or equal to 0'));
    }
  }

  if (resourceHint !== undefined && resourceHint !== null) {
    if (!isObject(resourceHint)) errors.push(invalid('spec.resourceHint', resourceHint, 'must be an object'));
    else {
      const { type, order } = resourceHint;
      if (type === undefined || type === null || type === '') errors.push(required('spec.resourceHint.type'));
      else if (typeof type !== 'string' || !RESOURCE_TYPES.includes(type)) {
        errors.push(notSupported('spec.resourceHint.type', type, RESOURCE_TYPES));
      }
      if (order !== undefined && order !== null && (typeof order !== 'string' || !ORDERS.includes(order))) {
        errors.push(notSupported('spec.resourceHint.order', order, ORDERS));
      }
    }
  }
  return errors;
}

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

interface Candidate {
  readonly cluster: ClusterFacts;
  /** e.g. `matches clusterSelector; Available=True`. */
  readonly why: string;
}

/**
 * Decides which clusters a PlacementRule places on, with OCM PlacementRule semantics:
 * 1. selection — a non-empty `clusters` list replaces the selector (names that match no cluster
 *    are reported); otherwise `clusterSelector`, where absent and `{}` both select every cluster;
 * 2. `clusterConditions` — a cluster must have every listed condition with the listed status;
 * 3. `clusterReplicas` caps the count. Previous decisions are sticky: still-eligible ones come
 *    first, then decided clusters kept by the debounce, then new ones ordered by `resourceHint`
 *    (allocatable cpu/memory, `Desc` by default; clusters without a readable value last), else
 *    by name.
 * A decided cluster that starts failing its conditions is kept until it has failed for
 * `debounceMs` (from its `failingSince`), so a flapping cluster does not move workloads;
 * `requeueAfterMs` says when the earliest debounce ends. A decided cluster that no longer
 * matches the selection, or no longer exists, is dropped at once. Spec errors are returned,
 * never thrown. `now` is the only clock.
 */
export function decide(input: DecideInput, now: Date): DecideResult {
  const errors = validatePlacementSpec(input.spec);
  if (errors.length > 0) return { ok: false, errors };
  const { spec } = input;
  const messages: string[] = [];
  const nowMs = now.getTime();

  // 1. Selection.
  const named = (spec.clusters ?? []).map((c) => c.name);
  let selected: Candidate[];
  if (named.length > 0) {
    const known = new Set(input.clusters.map((c) => c.name));
    for (const n of named)
      if (!known.has(n)) messages.push(`spec.clusters names cluster ${n}, which does not exist`);
    const wanted = new Set(named);
    selected = input.clusters
      .filter((c) => wanted.has(c.name))
      .map((cluster) => ({ cluster, why: 'named in spec.clusters' }));
  } else {
    const sel = spec.clusterSelector;
    const empty =
      !sel || (Object.keys(sel.matchLabels ?? {}).length === 0 && (sel.matchExpressions ?? []).length === 0);
    const why = !sel
      ? 'no clusterSelector: every cluster'
      : empty
        ? 'empty clusterSelector: every cluster'
        : 'matches clusterSelector';
    selected = input.clusters
      .filter((c) => matchesLabelSelector(sel, c.labels ?? {}))
      .map((cluster) => ({ cluster, why }));
  }

  // 2. Conditions.
  const filters = spec.clusterConditions ?? [];
  const unmet = (c: ClusterFacts): string | undefined => {
    for (const f of filters) {
      const actual = c.conditions?.find((x) => x.type === f.type);
      if (actual?.status !== f.status) return actual ? `${f.type}=${actual.status}` : `${f.type} absent`;
    }
    return undefined;
  };
  const condText = filters.map((f) => `${f.type}=${f.status}`).join(', ');

  const previous = new Map((input.previousDecisions ?? []).map((d) => [d.clusterName, d]));
  const selectedNames = new Set(selected.map((s) => s.cluster.name));
  const existing = new Set(input.clusters.map((c) => c.name));
  for (const name of [...previous.keys()].sort(byCodePoint)) {
    if (!existing.has(name)) messages.push(`dropped ${name}: the cluster no longer exists`);
    else if (!selectedNames.has(name)) messages.push(`dropped ${name}: no longer selected by the rule`);
  }

  const stickyHealthy: Candidate[] = [];
  const stickyFailing: Candidate[] = [];
  const debounce = new Map<string, { failingSince: string; remainingMs: number }>();
  const fresh: Candidate[] = [];
  for (const cand of selected) {
    const failing = unmet(cand.cluster);
    const prev = previous.get(cand.cluster.name);
    const why = filters.length > 0 && !failing ? `${cand.why}; ${condText}` : cand.why;
    if (!failing) {
      (prev ? stickyHealthy : fresh).push({ cluster: cand.cluster, why });
      continue;
    }
    if (!prev) continue;
    // Debounce: count from the first failure recorded in status; if none (or unreadable), from now.
    let sinceMs = prev.failingSince === undefined ? NaN : Date.parse(prev.failingSince);
    if (prev.failingSince !== undefined && Number.isNaN(sinceMs)) {
      messages.push(
        `${cand.cluster.name}: failingSince ${JSON.stringify(prev.failingSince)} is not a time; restarting the debounce`,
      );
    }
    if (Number.isNaN(sinceMs) || sinceMs > nowMs) sinceMs = Date.parse(kubeTime(now));
    const failedFor = Math.max(0, nowMs - sinceMs);
    const span = `${failing} for ${formatDuration(failedFor)}`;
    if (failedFor < input.debounceMs) {
      // No elapsed time in the reason: it must not change between reconciles, or every
      // reconcile during a debounce would rewrite status.
      stickyFailing.push({
        cluster: cand.cluster,
        why: `kept: ${failing} since ${kubeTime(new Date(sinceMs))}, within the ${formatDuration(input.debounceMs)} debounce`,
      });
      debounce.set(cand.cluster.name, {
        failingSince: kubeTime(new Date(sinceMs)),
        remainingMs: input.debounceMs - failedFor,
      });
    } else {
      messages.push(`evicted ${cand.cluster.name}: ${span} ≥ ${formatDuration(input.debounceMs)} debounce`);
    }
  }

  // 3. Order and cap.
  const order = rankBy(spec, messages);
  const ranked = [
    ...order(stickyHealthy).map(kept),
    ...order(stickyFailing),
    ...order(fresh).map(hinted(spec)),
  ];
  const cap = spec.clusterReplicas ?? ranked.length;
  const chosen = ranked.slice(0, cap);
  const left = ranked.slice(cap).map((c) => c.cluster.name);
  if (left.length > 0) messages.push(`not chosen (clusterReplicas ${cap} reached): ${left.join(', ')}`);

  const decisions: Decision[] = chosen
    .map((c): Decision => {
      const d = debounce.get(c.cluster.name);
      return d
        ? { clusterName: c.cluster.name, reason: c.why, failingSince: d.failingSince }
        : { clusterName: c.cluster.name, reason: c.why };
    })
    .sort((a, b) => byCodePoint(a.clusterName, b.clusterName));
  const waits = chosen.flatMap((c) => {
    const d = debounce.get(c.cluster.name);
    return d ? [d.remainingMs] : [];
  });
  return waits.length > 0
    ? { ok: true, decisions, messages, requeueAfterMs: Math.min(...waits) }
    : { ok: true, decisions, messages };
}

const kept = (c: Candidate): Candidate => ({ ...c, why: `${c.why}; kept from previous decisions` });

/** Adds the capacity that ranked a new cluster, when a cap and a hint make it matter. */
function hinted(spec: PlacementRuleSpec): (c: Candidate) => Candidate {
  const type = spec.resourceHint?.type;
  if (!type || spec.clusterReplicas === undefined) return (c) => c;
  return (c) => ({
    ...c,
    why: `${c.why}; allocatable ${type} ${c.cluster.allocatable?.[type] ?? 'unknown'}`,
  });
}

/**
 * Orders candidates by the resource hint (or by name without one). Unreadable quantities are
 * reported once per cluster and ranked with the clusters that report none.
 */
function rankBy(spec: PlacementRuleSpec, messages: string[]): (list: readonly Candidate[]) => Candidate[] {
  const hint = spec.resourceHint;
  if (!hint?.type) return (list) => [...list].sort((a, b) => byCodePoint(a.cluster.name, b.cluster.name));
  const type = hint.type;
  const sign = hint.order === 'Asc' ? 1 : -1;
  const valueOf = (c: ClusterFacts): number | undefined => {
    const text = c.allocatable?.[type];
    if (text === undefined) return undefined;
    try {
      return parseQuantity(text);
    } catch (err) {
      if (!(err instanceof InvalidQuantityError)) throw err;
      messages.push(`cluster ${c.name}: status.allocatable.${type}: ${err.message}`);
      return undefined;
    }
  };
  return (list) => {
    const values = new Map(list.map((c) => [c.cluster.name, valueOf(c.cluster)]));
    return [...list].sort((a, b) => {
      const va = values.get(a.cluster.name);
      const vb = values.get(b.cluster.name);
      if (va !== undefined && vb !== undefined && va !== vb) return sign * (va - vb);
      if (va === undefined && vb !== undefined) return 1;
      if (vb === undefined && va !== undefined) return -1;
      return byCodePoint(a.cluster.name, b.cluster.name);
    });
  };
}
