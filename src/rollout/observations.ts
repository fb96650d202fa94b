/**
 * What the reconciler observed this tick, as plain data: the input of the pure step function.
 * Everything the decision depends on is here or in the status, never in memory.
 */
import type { CanaryGate, Measurement, OperatorAction } from '../api/canary-release.js';
import type { TrafficSplit } from '../traffic/router.js';

/** The target Deployment on one cluster. */
export interface TargetObservation {
  /** Hash of the pod template and the data of the ConfigMaps and Secrets it references. */
  readonly hash: string;
  /** `spec.replicas` (0 when scaled down). */
  readonly replicas: number;
  /** Rolled out: the controller saw the current generation and every desired replica is updated and ready. */
  readonly ready: boolean;
}

/** The primary Deployment Sluice maintains on one cluster. */
export interface PrimaryObservation {
  /** The template hash it was last copied at (its `sluice.dev/template-hash` annotation). */
  readonly hash?: string;
  readonly ready: boolean;
}

/** One cluster the release acts on. */
export interface ClusterObservation {
  readonly name: string;
  /** Why the cluster could not be observed (unreachable, no client yet); nothing else is known. */
  readonly error?: string;
  /** Absent: the target Deployment does not exist there. */
  readonly target?: TargetObservation;
  /** Absent: the primary Deployment does not exist yet. */
  readonly primary?: PrimaryObservation;
  /** The apex, primary and canary Services exist. */
  readonly services: boolean;
  /** What the router routes now; absent when its object does not exist (yet). */
  readonly split?: TrafficSplit;
  /**
   * False when the router's objects are between two writes of one change (the replica router's
   * sizes not yet what `split` needs, its total still recorded): route again even if `split`
   * looks right.
   */
  readonly splitSettled?: boolean;
}

/** The combined verdict of one analysis on every cluster (any failing cluster fails it). */
export interface AnalysisOutcome {
  readonly verdict: 'pass' | 'fail' | 'hold';
  readonly score: number;
  readonly measurements: readonly Measurement[];
  readonly failing?: { readonly metric: string; readonly value?: string; readonly threshold?: string };
  readonly message: string;
}

/** A webhook gate's answer this tick. */
export interface GateAnswer {
  readonly name: string;
  readonly open: boolean;
  readonly attempts: number;
  readonly message: string;
}

/** What Git write-back did this tick. */
export type WriteBackOutcome =
  | {
      readonly ok: true;
      readonly method?: 'revert' | 'restore' | 'alreadyDone';
      readonly commit?: string;
      readonly pullRequestURL?: string;
    }
  | { readonly ok: false; readonly error: string };

/** Everything one tick observed. */
export interface Observations {
  readonly clusters: readonly ClusterObservation[];
  /** With a deliveryRef: the Git revision the Delivery applied to every cluster. */
  readonly deliveryRevision?: string;
  /**
   * With a deliveryRef: why the Delivery is not settled (its source has a newer artifact than it
   * reports applied, or its clusters differ). While set, no run starts: the template seen on the
   * clusters may belong to a revision the Delivery has not reported yet.
   */
  readonly deliveryPending?: string;
  /** The operator annotations `sluice.dev/<action>` present on the object. */
  readonly requests: Readonly<Partial<Record<OperatorAction, string>>>;
  /** Present when the analysis was run this tick (see `probesFor`). */
  readonly analysis?: AnalysisOutcome;
  /** The answer of the webhook gate the release waits at, when it was called this tick. */
  readonly gate?: GateAnswer;
  /** A rollback gate that answered 2xx this tick. */
  readonly rollbackGate?: GateAnswer;
  /** Present when Git write-back was attempted this tick. */
  readonly writeBack?: WriteBackOutcome;
}

/** The I/O the reconciler must do before calling `step`: each result goes into `Observations`. */
export interface Probes {
  readonly analysis: boolean;
  /** The webhook gate to call (the one the release waits at). */
  readonly gate?: CanaryGate;
  /** Rollback gates to call: a 2xx from any rolls the release back. */
  readonly rollbackGates: readonly CanaryGate[];
  readonly writeBack: boolean;
}
