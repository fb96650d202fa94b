import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Cluster } from '../api/cluster.js';
import { kindInfo } from '../api/crds.js';
import type { PlacementRule } from '../api/placement-rule.js';
import type { ClusterClient } from '../kube/clients.js';
import type { ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import type { EventRecorder } from '../kube/events.js';
import { objectKey, type Informer } from '../kube/informer.js';
import { writeStatus } from '../kube/status.js';
import { clusterFacts, decide } from './decide.js';
import { nextPlacementStatus, type PlacementOutcome } from './placement-status.js';

/** How long a decided cluster may fail `clusterConditions` before it is evicted, unless configured. */
export const DEFAULT_PLACEMENT_DEBOUNCE_MS = 30_000;

export interface PlacementReconcilerOptions {
  hub: ClusterClient;
  rules: Informer<PlacementRule>;
  clusters: Informer<Cluster>;
  events: EventRecorder;
  /** See {@link DEFAULT_PLACEMENT_DEBOUNCE_MS}. */
  debounceMs: number;
  now?: () => Date;
}

/**
 * Keeps each `PlacementRule`'s `status.decisions` equal to what {@link decide} says for the
 * Clusters the hub has now: one status write per reconcile (none when nothing changed), an
 * Event when the set of decided clusters changes, and a requeue when a flap debounce ends.
 * The debounce clock (`failingSince`) lives in status, so a restarted controller keeps it.
 */
export class PlacementReconciler implements Reconciler {
  readonly #o: PlacementReconcilerOptions;

  constructor(opts: PlacementReconcilerOptions) {
    this.#o = opts;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const cached = this.#o.rules.get(key);
    if (!cached) return;
    let outcome = this.#outcome(cached);
    // Common case (a Cluster probe changed nothing that matters): no API call at all. The
    // cache may lag our own last write; its watch event enqueues the rule again.
    if (isDeepStrictEqual(stripUndefined(outcome.status), cached.status ?? {})) {
      return outcome.requeueAfterMs === undefined ? undefined : { requeueAfterMs: outcome.requeueAfterMs };
    }
    // Something changed: decide again from the stored status, not a cache that may lag our
    // last write, so that a `failingSince` is never lost and an Event never repeated.
    let fresh: PlacementRule;
    try {
      fresh = await this.#o.hub.raw.getRaw<PlacementRule>(cached as KubernetesObject);
    } catch (err) {
      if (isNotFound(err)) return; // deleted meanwhile
      throw err;
    }
    outcome = this.#outcome(fresh);
    const info = kindInfo('PlacementRule');
    let written: boolean;
    try {
      written = await writeStatus(
        this.#o.hub,
        {
          apiVersion: info.apiVersion,
          kind: 'PlacementRule',
          plural: info.plural,
          namespace: fresh.metadata.namespace,
          name: fresh.metadata.name ?? '',
        },
        outcome.status,
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    // After the write: a controller killed in between repeats the write, not the Event.
    if (written && outcome.event) {
      const { type, reason, message } = outcome.event;
      await this.#o.events.record(fresh as KubernetesObject, type, reason, message);
    }
    return outcome.requeueAfterMs === undefined ? undefined : { requeueAfterMs: outcome.requeueAfterMs };
  }

  #outcome(rule: PlacementRule): PlacementOutcome {
    const now = (this.#o.now ?? (() => new Date()))();
    const clusters = this.#o.clusters.list();
    const result = decide(
      {
        spec: rule.spec ?? {},
        clusters: clusters.map(clusterFacts),
        previousDecisions: rule.status?.decisions ?? [],
        debounceMs: this.#o.debounceMs,
      },
      now,
    );
    return nextPlacementStatus(rule.status, rule.metadata.generation ?? 0, result, clusters.length, now);
  }
}

/** As the server stores it: a JSON round trip drops `undefined` fields. */
function stripUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

/** Every PlacementRule's key: a change to any Cluster's labels or conditions may change any rule. */
export function allPlacementRules(rules: Informer<PlacementRule>): string[] {
  return rules.list().map(objectKey);
}
