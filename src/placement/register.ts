import type { KubernetesObject } from '@kubernetes/client-node';
import type { Cluster } from '../api/cluster.js';
import { API_VERSION } from '../api/common.js';
import { EventRecorder } from '../kube/events.js';
import { Informer } from '../kube/informer.js';
import type { Manager } from '../kube/manager.js';
import { ClusterReconciler, clustersUsingSecret } from './cluster-reconciler.js';
import { MemberClients } from './member-clients.js';

export interface PlacementControllersOptions {
  probeIntervalMs: number;
  workers?: number;
}

/**
 * Registers the `Cluster` controller on `manager`: it watches Clusters and the Secrets
 * their kubeconfigs live in, and returns the member-client cache the other controllers
 * share (one client per member cluster).
 */
export function registerPlacementControllers(
  manager: Manager,
  opts: PlacementControllersOptions,
): { members: MemberClients } {
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
  return { members };
}
