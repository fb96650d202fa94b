import { createHash } from 'node:crypto';
import type { V1Secret } from '@kubernetes/client-node';
import type { Cluster } from '../api/cluster.js';
import { clusterClient, loadKubeConfig, type ClusterClient } from '../kube/clients.js';
import { isNotFound } from '../kube/errors.js';
import type { ClusterProbeOutcome } from './cluster-status.js';

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

/** A member client, or why the Cluster's kubeconfig Secret does not give one (a person must fix it). */
export type MemberClientResult =
  { readonly ok: true; readonly client: ClusterClient } | Extract<ClusterProbeOutcome, { ok: false }>;

/**
 * The client for `cluster` from the kubeconfig in the hub Secret its `spec.kubeconfigSecretRef`
 * names (key `kubeconfig` unless the ref says otherwise), built by `build` — the controller's
 * {@link MemberClients} cache, or a plain `clusterClient` for a one-shot CLI. Every problem with
 * the Secret or the kubeconfig is a result (`SecretNotFound`, `SecretKeyMissing`,
 * `KubeconfigInvalid`), naming the Secret and key and never a value; only a failure to read
 * from the hub itself is thrown. `inCluster` Clusters are the caller's to handle.
 */
export async function memberClientFromSecret(
  hub: ClusterClient,
  cluster: Cluster,
  build: (name: string, kubeconfigYaml: string) => ClusterClient,
): Promise<MemberClientResult> {
  const name = cluster.metadata?.name ?? '';
  const ref = cluster.spec.kubeconfigSecretRef;
  if (!ref)
    return {
      ok: false,
      reason: 'KubeconfigInvalid',
      message: 'spec sets neither kubeconfigSecretRef nor inCluster',
    };
  const where = `Secret ${ref.namespace}/${ref.name}`;
  let secret: V1Secret;
  try {
    secret = await hub.raw.getRaw<V1Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: ref.namespace, name: ref.name },
    });
  } catch (err) {
    if (isNotFound(err)) return { ok: false, reason: 'SecretNotFound', message: `${where} not found` };
    throw err; // the hub itself is unreachable: the caller retries or reports it
  }
  const key = ref.key || 'kubeconfig';
  const data = secret.data?.[key];
  if (data === undefined) {
    const keys = Object.keys(secret.data ?? {});
    return {
      ok: false,
      reason: 'SecretKeyMissing',
      message: `${where} has no key "${key}" (keys: ${keys.length ? keys.join(', ') : 'none'})`,
    };
  }
  const yaml = Buffer.from(data, 'base64').toString('utf8');
  try {
    return { ok: true, client: build(name, yaml) };
  } catch (err) {
    const detail = err instanceof Error ? err.message.split('\n')[0] : String(err);
    return {
      ok: false,
      reason: 'KubeconfigInvalid',
      message: `${where} key "${key}" is not a usable kubeconfig: ${detail}`,
    };
  }
}

/** A fresh client for `name` from kubeconfig YAML (no cache: for one-shot commands). */
export function memberClientFromKubeconfig(name: string, kubeconfigYaml: string): ClusterClient {
  return clusterClient(name, loadKubeConfig({ yaml: kubeconfigYaml }));
}
