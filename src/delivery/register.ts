import type { Delivery } from '../api/delivery.js';
import type { GitSource } from '../api/git-source.js';
import type { PlacementRule } from '../api/placement-rule.js';
import { kindInfo } from '../api/crds.js';
import type { ArtifactStore } from '../git/artifact.js';
import { updateNeedsReconcile } from '../git/source-status.js';
import type { Controller } from '../kube/controller.js';
import { EventRecorder } from '../kube/events.js';
import { Informer, objectKey, type InformerOptions } from '../kube/informer.js';
import type { Manager } from '../kube/manager.js';
import type { KustomizeRunner } from './render.js';
import { DeliveryReconciler, deliveriesReferencing, type MemberClientLookup } from './reconciler.js';

/** What the Delivery controller needs from the rest of the controller process. */
export interface DeliveryControllersOptions {
  /** One client per member cluster (`registerPlacementControllers(...).members`). */
  members: MemberClientLookup;
  /** Where the GitSource controller stores artifacts (the same root it writes to). */
  artifacts: ArtifactStore;
  /** Renders kustomizations; without it a kustomization is a BuildFailed `NeedsKustomize`. */
  kustomize?: KustomizeRunner;
  /** Deliveries reconciled at once. Default 4. */
  workers?: number;
  /** Clusters applied at once per Delivery. Default 4. */
  clusterConcurrency?: number;
  /** Requests in flight per cluster. Default 16. */
  requestConcurrency?: number;
  /** Bound on one cluster's gate + apply + prune. Default 2 minutes. */
  applyTimeoutMs?: number;
  /** How often health is looked at again while waiting. Default 5 s. */
  healthPollMs?: number;
  /** Retry delay for a missing artifact, a pending or unreachable cluster. Default 10 s. */
  retryMs?: number;
  /** Informer tuning (tests shorten periods). */
  informer?: InformerOptions;
}

/**
 * Registers the `delivery` controller on `manager`. It watches Deliveries, and GitSources and
 * PlacementRules mapped to the Deliveries in their namespace that reference them, so a new
 * artifact or a new decision is applied at once. Deliveries are reconciled on a spec change, a
 * new `sluice.dev/reconcile-requested-at` value (`sluice reconcile delivery`) or a deletion —
 * not on status writes — and every `spec.interval` to correct drift.
 */
export function registerDeliveryControllers(
  manager: Manager,
  opts: DeliveryControllersOptions,
): { controller: Controller; deliveries: Informer<Delivery> } {
  const logger = manager.logger;
  const informerOpts: InformerOptions = { logger, ...opts.informer };
  const resource = (kind: 'Delivery' | 'GitSource' | 'PlacementRule') => {
    const info = kindInfo(kind);
    return { apiVersion: info.apiVersion, kind, plural: info.plural };
  };
  const deliveries = new Informer<Delivery>(manager.client, resource('Delivery'), informerOpts);
  const sources = new Informer<GitSource>(manager.client, resource('GitSource'), informerOpts);
  const placements = new Informer<PlacementRule>(manager.client, resource('PlacementRule'), informerOpts);
  const events = new EventRecorder(manager.client, { logger });
  const controller = manager.addController({
    name: 'delivery',
    workers: opts.workers ?? 4,
    reconciler: new DeliveryReconciler({
      hub: manager.client,
      deliveries,
      sources,
      placements,
      members: opts.members,
      artifacts: opts.artifacts,
      events,
      logger,
      kustomize: opts.kustomize,
      clusterConcurrency: opts.clusterConcurrency,
      requestConcurrency: opts.requestConcurrency,
      applyTimeoutMs: opts.applyTimeoutMs,
      healthPollMs: opts.healthPollMs,
      retryMs: opts.retryMs,
    }),
    watches: [
      // The manager starts and syncs this informer; the handlers below decide what to enqueue.
      { informer: deliveries, map: () => undefined },
      { informer: sources, map: (s: GitSource) => deliveriesReferencing(deliveries, s, 'sourceRef') },
      {
        informer: placements,
        map: (p: PlacementRule) => deliveriesReferencing(deliveries, p, 'placementRef'),
      },
    ],
  });
  // Not on status writes (our own included): only a spec change, a reconcile request or a
  // deletion needs a sync before the next requeue.
  deliveries
    .onAdd((d) => controller.enqueue(objectKey(d)))
    .onDelete((d) => controller.enqueue(objectKey(d)))
    .onUpdate((d, old) => {
      if (updateNeedsReconcile(old, d)) controller.enqueue(objectKey(d));
    });
  return { controller, deliveries };
}
