import { MAX_LISTED_GROUP_VERSIONS, type ClusterStatus } from '../api/cluster.js';
import { getCondition, markReady, markRetrying, markStalled, setCondition } from '../kube/conditions.js';
import type { ClusterFacts } from './cluster-probe.js';

/** Why a member cluster cannot be used. The first three need a change by a person (Stalled). */
export type ClusterFailureReason =
  | 'SecretNotFound'
  | 'SecretKeyMissing'
  | 'KubeconfigInvalid'
  | 'Unauthorized'
  | 'Unreachable'
  | 'ProbeFailed';

/** The result of one attempt to reach a member cluster. */
export type ClusterProbeOutcome =
  { ok: true; facts: ClusterFacts } | { ok: false; reason: ClusterFailureReason; message: string };

/** Reasons retrying cannot fix: the Secret or kubeconfig must change first. */
const NEEDS_A_PERSON: ReadonlySet<ClusterFailureReason> = new Set([
  'SecretNotFound',
  'SecretKeyMissing',
  'KubeconfigInvalid',
]);

/** An Event to record because availability changed. */
export interface AvailabilityTransition {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/**
 * The next `Cluster` status for one probe outcome, and the Event to record when
 * `Available` changed (none when it did not, so a restarted controller repeats nothing).
 * Pure: same inputs, same status.
 */
export function nextClusterStatus(
  previous: ClusterStatus | undefined,
  generation: number,
  outcome: ClusterProbeOutcome,
  now: Date,
): { status: ClusterStatus; transition?: AvailabilityTransition } {
  const before = getCondition(previous?.conditions, 'Available')?.status;
  let status: ClusterStatus;
  if (outcome.ok) {
    const { facts } = outcome;
    const message = `Kubernetes ${facts.version}, ${facts.groupVersions.length} API group/versions, ${facts.readyNodes} ready node(s)`;
    status = {
      ...previous,
      version: facts.version,
      apiGroups: {
        count: facts.groupVersions.length,
        groupVersions: facts.groupVersions.slice(0, MAX_LISTED_GROUP_VERSIONS),
      },
      allocatable: facts.allocatable,
    };
    status = markReady(status, generation, 'ClusterAvailable', message, now);
    status.conditions = setCondition(
      status.conditions,
      {
        type: 'Available',
        status: 'True',
        reason: 'ClusterAvailable',
        message,
        observedGeneration: generation,
      },
      now,
    );
    const transition =
      before === 'True' ? undefined : { type: 'Normal' as const, reason: 'ClusterAvailable', message };
    return { status, transition };
  }
  const mark = NEEDS_A_PERSON.has(outcome.reason) ? markStalled : markRetrying;
  status = mark({ ...previous }, generation, outcome.reason, outcome.message, now);
  status.conditions = setCondition(
    status.conditions,
    {
      type: 'Available',
      status: 'False',
      reason: outcome.reason,
      message: outcome.message,
      observedGeneration: generation,
    },
    now,
  );
  const previousReason = getCondition(previous?.conditions, 'Available')?.reason;
  const transition =
    before === 'False' && previousReason === outcome.reason
      ? undefined
      : { type: 'Warning' as const, reason: outcome.reason, message: outcome.message };
  return { status, transition };
}
