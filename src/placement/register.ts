import type { KubernetesObject } from '@kubernetes/client-node';
import type { Cluster } from '../api/cluster.js';
import { API_VERSION } from '../api/common.js';
import type { PlacementRule } from '../api/placement-rule.js';
import { EventRecorder } from '../kube/events.js';
import { Informer } from '../kube/informer.js';
import type { Manager } from '../kube/manager.js';
import { ClusterReconciler, clustersUsingSecret } from './cluster-reconciler.js';
import { MemberClients } from './member-clients.js';
import {
  allPlacementRules,
  DEFAULT_PLACEMENT_DEBOUNCE_MS,
  PlacementReconciler,
} from './placement-reconciler.js';

export { DEFAULT_PLACEMENT_DEBOUNCE_MS } from './placement-reconciler.js';

export interface PlacementControllersOptions {
  probeIntervalMs: number;
  workers?: number;
  /**
   * How long a decided cluster may fail a PlacementRule's `clusterConditions` before it is
   * evicted (the flap debounce). Default {@link DEFAULT_PLACEMENT_DEBOUNCE_MS}.
   */
  placementDebounceMs?: number;
}

/**
 * Registers the `Cluster` controller on `manager`: it watches Clusters and the Secrets
 * their kubeconfigs live in, and returns the member-client cache the other controllers
 * share (one client per member cluster). Registers the `PlacementRule` controller too: it
 * watches PlacementRules, and every Cluster change re-evaluates every rule.
 */
export function registerPlacementControllers(
  manager: Manager,
  opts: PlacementControllersOptions,
): { members: MemberClients; clusters: Informer<Cluster>; rules: Informer<PlacementRule> } {
  const logger = manager.logger;
  const clusters = new Informer<Cluster>(
    manager.client,
    { apiVersion: API_VERSION, kind: 'Cluster', plural: 'clusters' },
    { logger },
  );
  const secrets = new Informer<KubernetesObject>(
    manager.client,
    { apiVersion: 'v1', kind: 'Secret', plural: 'secrets' },
    { logger },
  );
  const members = new MemberClients();
  const events = new EventRecorder(manager.client, { logger });
  manager.addController({
    name: 'cluster',
    workers: opts.workers ?? 4,
    reconciler: new ClusterReconciler({
      hub: manager.client,
      clusters,
      members,
      events,
      logger,
      probeIntervalMs: opts.probeIntervalMs,
      retryIntervalMs: Math.min(opts.probeIntervalMs, 10_000),
    }),
    watches: [
      { informer: clusters },
      { informer: secrets, map: (s: KubernetesObject) => clustersUsingSecret(clusters, s) },
    ],
  });

  const rules = new Informer<PlacementRule>(
    manager.client,
    { apiVersion: API_VERSION, kind: 'PlacementRule', plural: 'placementrules' },
    { logger },
  );
  manager.addController({
    name: 'placementrule',
    workers: opts.workers ?? 4,
    reconciler: new PlacementReconciler({
      hub: manager.client,
      rules,
      clusters,
      events,
      debounceMs: opts.placementDebounceMs ?? DEFAULT_PLACEMENT_DEBOUNCE_MS,
    }),
    // Any Cluster change (labels, conditions, deletion) may change any rule's decisions; a
    // Cluster probe that changed nothing costs each rule one in-memory decide and no API call.
    watches: [{ informer: rules }, { informer: clusters, map: () => allPlacementRules(rules) }],
  });
  return { members, clusters, rules };
}
