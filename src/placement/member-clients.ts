import { createHash } from 'node:crypto';
import { clusterClient, loadKubeConfig, type ClusterClient } from '../kube/clients.js';

/**
 * One `ClusterClient` per member cluster, rebuilt only when its kubeconfig changes:
 * each client holds a connection pool, and client-node caches exec-auth tokens per user
 * name (#429), so clients must be made once and kept.
 */
export class MemberClients {
  readonly #clients = new Map<string, { digest: string; client: ClusterClient }>();

  /** The client for `cluster` built from `kubeconfigYaml`; throws when the kubeconfig cannot be loaded. */
  forKubeconfig(cluster: string, kubeconfigYaml: string): ClusterClient {
    const digest = createHash('sha256').update(kubeconfigYaml).digest('hex');
    const cached = this.#clients.get(cluster);
    if (cached?.digest === digest) return cached.client;
    const client = clusterClient(cluster, loadKubeConfig({ yaml: kubeconfigYaml }));
    this.#clients.set(cluster, { digest, client });
    return client;
  }

  /** The client last built for `cluster`, if any (for other controllers: delivery, rollout). */
  get(cluster: string): ClusterClient | undefined {
    return this.#clients.get(cluster)?.client;
  }

  /** Registers a client made elsewhere (the hub itself, for `inCluster: true`). */
  set(cluster: string, client: ClusterClient): void {
    this.#clients.set(cluster, { digest: `client:${client.name}`, client });
  }

  forget(cluster: string): void {
    this.#clients.delete(cluster);
  }
}
