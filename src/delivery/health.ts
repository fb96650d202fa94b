/**
 * kstatus-style health of applied objects (the rules of sigs.k8s.io/cli-utils/pkg/kstatus, which
 * Flux's health checks use), and the wait-or-give-up decision over a set of them. Pure: the
 * executor fetches the live objects and the clock.
 */
import { formatDuration } from '../api/duration.js';

/**
 * `Current`: the object is what was asked for. `InProgress`: it is getting there. `Failed`: it
 * will not get there without a change (a rollout past its deadline, a failed Job). `Unknown`:
 * the object is missing or its status cannot be read.
 */
export type HealthStatus = 'Current' | 'InProgress' | 'Failed' | 'Unknown';

/** The health of one object, with a message a person can act on. */
export interface Health {
  readonly status: HealthStatus;
  readonly message: string;
}

/** A live object as the API server returns it; only the fields health reads are typed. */
export interface LiveObject {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: {
    readonly generation?: number;
    readonly deletionTimestamp?: string;
    readonly [k: string]: unknown;
  };
  readonly spec?: unknown;
  readonly status?: unknown;
}

interface Cond {
  readonly type: string;
  readonly status: string;
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration?: number;
}

type Fields = Readonly<Record<string, unknown>>;

const fields = (v: unknown): Fields =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Fields) : {};
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function conditionsOf(status: Fields): Cond[] {
  const list = Array.isArray(status.conditions) ? status.conditions : [];
  return list.map(fields).map((c) => ({
    type: str(c.type),
    status: str(c.status),
    reason: str(c.reason),
    message: str(c.message),
    observedGeneration: num(c.observedGeneration),
  }));
}

const current = (message: string): Health => ({ status: 'Current', message });
const inProgress = (message: string): Health => ({ status: 'InProgress', message });
const failed = (message: string): Health => ({ status: 'Failed', message });

const why = (c: Cond): string => [c.reason, c.message].filter(Boolean).join(': ');

/**
 * The health of one live object. `undefined`/`null` (not found) is `Unknown`. Before any
 * kind-specific rule: an object being deleted is `InProgress`, and so is one whose controller
 * has not observed its latest generation (`status.observedGeneration < metadata.generation`).
 * Then: Deployment, StatefulSet, DaemonSet, Job, CustomResourceDefinition, Namespace,
 * PersistentVolumeClaim and Pod by their own status fields; anything else by the kstatus
 * conditions (`Stalled=True` → Failed, `Reconciling=True` → InProgress, `Ready`), and an object
 * with no conditions (Service, ConfigMap, Secret, …) is `Current` as soon as it exists.
 */
export function objectHealth(live: LiveObject | null | undefined): Health {
  if (!live) return { status: 'Unknown', message: 'object not found' };
  const meta = fields(live.metadata);
  if (meta.deletionTimestamp) return inProgress('object is being deleted');
  const status = fields(live.status);
  const generation = num(meta.generation);
  const observed = num(status.observedGeneration);
  if (generation !== undefined && observed !== undefined && observed < generation) {
    return inProgress(
      `waiting for the controller to observe generation ${generation} (observed ${observed})`,
    );
  }
  const apiVersion = str(live.apiVersion);
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.lastIndexOf('/')) : '';
  const spec = fields(live.spec);
  switch (`${group}/${str(live.kind)}`) {
    case 'apps/Deployment':
      return deploymentHealth(spec, status);
    case 'apps/StatefulSet':
      return statefulSetHealth(spec, status);
    case 'apps/DaemonSet':
      return daemonSetHealth(status);
    case 'batch/Job':
      return jobHealth(spec, status);
    case 'apiextensions.k8s.io/CustomResourceDefinition':
      return crdHealth(status);
    case '/Namespace':
      return status.phase === 'Terminating'
        ? inProgress('namespace is terminating')
        : current('namespace is active');
    case '/PersistentVolumeClaim':
      return pvcHealth(status);
    case '/Pod':
      return podHealth(status);
    default:
      return conditionHealth(conditionsOf(status), generation);
  }
}

function deploymentHealth(spec: Fields, status: Fields): Health {
  const replicas = num(spec.replicas) ?? 1;
  const conditions = conditionsOf(status);
  const progressing = conditions.find((c) => c.type === 'Progressing');
  if (progressing?.reason === 'ProgressDeadlineExceeded') {
    return failed(`progress deadline exceeded${progressing.message ? `: ${progressing.message}` : ''}`);
  }
  const updated = num(status.updatedReplicas) ?? 0;
  const total = num(status.replicas) ?? 0;
  const available = num(status.availableReplicas) ?? 0;
  const ready = num(status.readyReplicas) ?? 0;
  if (updated < replicas) return inProgress(`updated replicas: ${updated}/${replicas}`);
  if (total > updated) return inProgress(`pending termination: ${total - updated} old replicas`);
  if (available < replicas) return inProgress(`available replicas: ${available}/${replicas}`);
  if (ready < replicas) return inProgress(`ready replicas: ${ready}/${replicas}`);
  const availableCond = conditions.find((c) => c.type === 'Available');
  if (availableCond?.status === 'False') return inProgress(`Available=False: ${why(availableCond)}`);
  return current(`deployment is available: ${replicas} replicas`);
}

function statefulSetHealth(spec: Fields, status: Fields): Health {
  const strategy = fields(spec.updateStrategy);
  // OnDelete rollouts only finish when someone deletes pods; waiting for them would hang.
  if (strategy.type === 'OnDelete') return current('statefulset uses the OnDelete update strategy');
  const replicas = num(spec.replicas) ?? 1;
  const ready = num(status.readyReplicas) ?? 0;
  const updated = num(status.updatedReplicas) ?? 0;
  const partition = num(fields(strategy.rollingUpdate).partition) ?? 0;
  if (partition > 0) {
    const expected = Math.max(replicas - partition, 0);
    if (updated < expected)
      return inProgress(`updated replicas: ${updated}/${expected} (partition ${partition})`);
    if (ready < replicas) return inProgress(`ready replicas: ${ready}/${replicas}`);
    return current(`partitioned rollout complete: ${updated} updated`);
  }
  const total = num(status.replicas) ?? 0;
  if (total > replicas) return inProgress(`pending termination: ${total - replicas} replicas`);
  if (ready < replicas) return inProgress(`ready replicas: ${ready}/${replicas}`);
  if (updated < replicas) return inProgress(`updated replicas: ${updated}/${replicas}`);
  const currentRevision = str(status.currentRevision);
  const updateRevision = str(status.updateRevision);
  if (updateRevision && currentRevision !== updateRevision) {
    return inProgress(`waiting for revision ${updateRevision} (current ${currentRevision || 'none'})`);
  }
  return current(`statefulset is ready: ${replicas} replicas`);
}

function daemonSetHealth(status: Fields): Health {
  const desired = num(status.desiredNumberScheduled);
  if (desired === undefined) return inProgress('waiting for status.desiredNumberScheduled');
  const updated = num(status.updatedNumberScheduled) ?? 0;
  const available = num(status.numberAvailable) ?? 0;
  const ready = num(status.numberReady) ?? 0;
  if (updated < desired) return inProgress(`updated pods: ${updated}/${desired}`);
  if (available < desired) return inProgress(`available pods: ${available}/${desired}`);
  if (ready < desired) return inProgress(`ready pods: ${ready}/${desired}`);
  return current(`daemonset is ready: ${desired} pods`);
}

function jobHealth(spec: Fields, status: Fields): Health {
  const conditions = conditionsOf(status);
  const failedCond = conditions.find((c) => c.type === 'Failed' && c.status === 'True');
  if (failedCond) return failed(`job failed${why(failedCond) ? `: ${why(failedCond)}` : ''}`);
  const succeeded = num(status.succeeded) ?? 0;
  if (conditions.some((c) => c.type === 'Complete' && c.status === 'True')) {
    return current(`job completed: ${succeeded} succeeded`);
  }
  // A suspended Job waits for whoever suspended it (a queue controller); not for Sluice.
  if (spec.suspend === true) return current('job is suspended');
  const active = num(status.active) ?? 0;
  const failedPods = num(status.failed) ?? 0;
  return inProgress(`job running: ${active} active, ${succeeded} succeeded, ${failedPods} failed`);
}

function crdHealth(status: Fields): Health {
  const conditions = conditionsOf(status);
  const names = conditions.find((c) => c.type === 'NamesAccepted');
  if (names?.status === 'False') return failed(`names not accepted: ${why(names)}`);
  if (conditions.some((c) => c.type === 'Established' && c.status === 'True'))
    return current('CRD is established');
  return inProgress('waiting for the CRD to be established');
}

function pvcHealth(status: Fields): Health {
  const phase = str(status.phase) || 'Pending';
  if (phase === 'Bound') return current('claim is bound');
  if (phase === 'Lost') return failed('claim lost its volume');
  return inProgress(`claim is ${phase}`);
}

function podHealth(status: Fields): Health {
  const phase = str(status.phase);
  if (phase === 'Succeeded') return current('pod succeeded');
  if (phase === 'Failed') return failed(`pod failed${status.reason ? `: ${str(status.reason)}` : ''}`);
  const ready = conditionsOf(status).find((c) => c.type === 'Ready');
  if (ready?.status === 'True') return current('pod is ready');
  return inProgress(`pod is ${phase || 'Pending'}${ready && why(ready) ? `: ${why(ready)}` : ''}`);
}

function conditionHealth(conditions: readonly Cond[], generation: number | undefined): Health {
  const stalled = conditions.find((c) => c.type === 'Stalled' && c.status === 'True');
  if (stalled) return failed(`Stalled${why(stalled) ? `: ${why(stalled)}` : ''}`);
  const reconciling = conditions.find((c) => c.type === 'Reconciling' && c.status === 'True');
  if (reconciling) return inProgress(`Reconciling${why(reconciling) ? `: ${why(reconciling)}` : ''}`);
  const ready = conditions.find((c) => c.type === 'Ready');
  if (!ready) return current('no readiness to wait for');
  if (
    generation !== undefined &&
    ready.observedGeneration !== undefined &&
    ready.observedGeneration < generation
  ) {
    return inProgress(`Ready describes generation ${ready.observedGeneration}, not ${generation}`);
  }
  if (ready.status === 'True') return current(`Ready${why(ready) ? `: ${why(ready)}` : ''}`);
  return inProgress(`Ready=${ready.status || 'Unknown'}${why(ready) ? `: ${why(ready)}` : ''}`);
}

// ---------------------------------------------------------------------------------------------
// Sets of objects

/** The health of one object in a set, by its object id. */
export interface ObjectHealth {
  readonly id: string;
  readonly health: Health;
}

/** The health of a set and how many objects are in each state. */
export interface AggregateHealth {
  readonly status: HealthStatus;
  readonly message: string;
  readonly counts: Readonly<Record<HealthStatus, number>>;
}

const LISTED = 5;

/**
 * The health of a set, as kstatus aggregates it: Failed if any object failed, else Unknown if
 * any is unknown, else InProgress if any is not current, else Current (an empty set is Current).
 * The message names the first few objects holding the set back, failed ones first, so a
 * condition message says what to look at.
 */
export function aggregateHealth(items: readonly ObjectHealth[]): AggregateHealth {
  const counts: Record<HealthStatus, number> = { Current: 0, InProgress: 0, Failed: 0, Unknown: 0 };
  for (const i of items) counts[i.health.status] += 1;
  const status: HealthStatus =
    counts.Failed > 0
      ? 'Failed'
      : counts.Unknown > 0
        ? 'Unknown'
        : counts.InProgress > 0
          ? 'InProgress'
          : 'Current';
  if (status === 'Current') return { status, counts, message: `all ${items.length} objects are current` };
  const rank: Record<HealthStatus, number> = { Failed: 0, Unknown: 1, InProgress: 2, Current: 3 };
  const notCurrent = items
    .filter((i) => i.health.status !== 'Current')
    .sort((a, b) => rank[a.health.status] - rank[b.health.status]);
  const listed = notCurrent.slice(0, LISTED).map((i) => `${i.id}: ${i.health.status}: ${i.health.message}`);
  const more = notCurrent.length > LISTED ? `; and ${notCurrent.length - LISTED} more` : '';
  return {
    status,
    counts,
    message: `${notCurrent.length}/${items.length} objects not current: ${listed.join('; ')}${more}`,
  };
}

/** What to do after looking at a set's health. */
export type HealthVerdict =
  | { readonly kind: 'Healthy'; readonly message: string }
  /** Some object is Failed: waiting longer will not help, so fail now. */
  | { readonly kind: 'Failed'; readonly message: string }
  | { readonly kind: 'TimedOut'; readonly message: string }
  | { readonly kind: 'Waiting'; readonly message: string; readonly requeueAfterMs: number };

/** The clock and limits of one wait; times are epoch milliseconds. */
export interface HealthWait {
  /** When the wait began (persisted in status, so a restarted controller keeps the deadline). */
  readonly startedAt: number;
  readonly now: number;
  readonly timeoutMs: number;
  /** How often to look again while waiting; 5 s by default. */
  readonly pollMs?: number;
}

/**
 * Decides whether a health wait is over: Healthy when Current; Failed at once when any object
 * Failed; TimedOut once `timeoutMs` has passed since `startedAt` without becoming Current
 * (Unknown and InProgress alike); otherwise Waiting, to look again after `pollMs` or at the
 * deadline, whichever comes first.
 */
export function healthVerdict(agg: AggregateHealth, wait: HealthWait): HealthVerdict {
  if (agg.status === 'Current') return { kind: 'Healthy', message: agg.message };
  if (agg.status === 'Failed') return { kind: 'Failed', message: agg.message };
  const elapsed = wait.now - wait.startedAt;
  if (elapsed >= wait.timeoutMs) {
    return {
      kind: 'TimedOut',
      message: `health check timed out after ${formatDuration(wait.timeoutMs)}: ${agg.message}`,
    };
  }
  const remaining = wait.timeoutMs - elapsed;
  return { kind: 'Waiting', message: agg.message, requeueAfterMs: Math.min(wait.pollMs ?? 5000, remaining) };
}
