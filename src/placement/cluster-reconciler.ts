import type { KubernetesObject } from '@kubernetes/client-node';
import type { Cluster } from '../api/cluster.js';
import { kindInfo } from '../api/crds.js';
import type { ClusterClient } from '../kube/clients.js';
import type { ReconcileResult, Reconciler } from '../kube/controller.js';
import {
  isNotFound,
  isUnauthorized,
  isForbidden,
  isUnreachable,
  normalizeKubeError,
} from '../kube/errors.js';
import type { EventRecorder } from '../kube/events.js';
import type { Informer } from '../kube/informer.js';
import { writeStatus } from '../kube/status.js';
import type { Logger } from '../log.js';
import { probeCluster } from './cluster-probe.js';
import { nextClusterStatus, type ClusterProbeOutcome } from './cluster-status.js';
import { memberClientFromSecret, type MemberClients } from './member-clients.js';

export interface ClusterReconcilerOptions {
  hub: ClusterClient;
  clusters: Informer<Cluster>;
  members: MemberClients;
  events: EventRecorder;
  logger: Logger;
  /** How often an Available cluster is probed again. */
  probeIntervalMs: number;
  /** How often an unavailable cluster is retried (bounded by `probeIntervalMs`). */
  retryIntervalMs?: number;
  /** Bound on one probe. */
  probeTimeoutMs?: number;
  now?: () => Date;
}

/**
 * Keeps each `Cluster`'s `Available` condition true to what its API server answers:
 * reads the kubeconfig from the referenced Secret (or uses the hub for `inCluster`),
 * probes version, API groups and node capacity, writes status once, records an Event
 * only when availability changes, and probes again on an interval — so a cluster that
 * comes back recovers without anyone touching it.
 */
export class ClusterReconciler implements Reconciler {
  readonly #o: ClusterReconcilerOptions;

  constructor(opts: ClusterReconcilerOptions) {
    this.#o = opts;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const cluster = this.#o.clusters.get(key);
    if (!cluster) {
      this.#o.members.forget(key);
      return;
    }
    const outcome = await this.#probe(cluster);
    const generation = cluster.metadata?.generation ?? 0;
    const { status, transition } = nextClusterStatus(
      cluster.status,
      generation,
      outcome,
      (this.#o.now ?? (() => new Date()))(),
    );
    const info = kindInfo('Cluster');
    try {
      await writeStatus(
        this.#o.hub,
        { apiVersion: info.apiVersion, kind: 'Cluster', plural: info.plural, name: key },
        status,
      );
    } catch (err) {
      if (isNotFound(err)) return; // deleted meanwhile
      throw err;
    }
    // After the status write: a controller killed in between repeats the write, not the Event.
    if (transition)
      await this.#o.events.record(
        cluster as KubernetesObject,
        transition.type,
        transition.reason,
        transition.message,
      );
    const retry = Math.min(this.#o.retryIntervalMs ?? 10_000, this.#o.probeIntervalMs);
    return { requeueAfterMs: outcome.ok ? this.#o.probeIntervalMs : retry };
  }

  async #probe(cluster: Cluster): Promise<ClusterProbeOutcome> {
    const name = cluster.metadata?.name ?? '';
    let client: ClusterClient;
    if (cluster.spec.inCluster) {
      client = this.#o.hub;
      this.#o.members.set(name, client);
    } else {
      const loaded = await memberClientFromSecret(this.#o.hub, cluster, (n, yaml) =>
        this.#o.members.forKubeconfig(n, yaml),
      );
      if (!loaded.ok) return loaded;
      client = loaded.client;
    }
    try {
      return { ok: true, facts: await probeCluster(client, this.#o.probeTimeoutMs ?? 10_000) };
    } catch (err) {
      const e = normalizeKubeError(err);
      if (isUnauthorized(e) || isForbidden(e))
        return { ok: false, reason: 'Unauthorized', message: e.message };
      if (isUnreachable(e)) return { ok: false, reason: 'Unreachable', message: e.message };
      return { ok: false, reason: 'ProbeFailed', message: e.message };
    }
  }
}

/** Maps a Secret to the Clusters that reference it, so that fixing a Secret re-probes them at once. */
export function clustersUsingSecret(clusters: Informer<Cluster>, secret: KubernetesObject): string[] {
  const ns = secret.metadata?.namespace;
  const name = secret.metadata?.name;
  return clusters
    .list()
    .filter(
      (c) => c.spec?.kubeconfigSecretRef?.namespace === ns && c.spec?.kubeconfigSecretRef?.name === name,
    )
    .map((c) => c.metadata?.name ?? '')
    .filter(Boolean);
}
