/**
 * Connection reuse for client-node. Its `KubeConfig.createAgent` (1.4) builds a new
 * `https.Agent` for every request, so every API call opens a new TCP connection, does a full TLS
 * handshake and builds a new secure context from the kubeconfig's CA and client certificate —
 * on both ends. At a few hundred calls a second that is most of the controller's CPU and, through
 * native allocations outside the JS heap, most of its RSS (measured with bench/rollout.ts).
 *
 * `shareConnections` makes a KubeConfig hand out one keep-alive agent per distinct server and TLS
 * options instead, as Go's client-go shares one transport. Proxy agents are left as they were.
 */
import http from 'node:http';
import https from 'node:https';
import type { KubeConfig } from '@kubernetes/client-node';

type Cluster = ReturnType<KubeConfig['getCurrentCluster']>;
type CreateAgent = (cluster: Cluster, options: https.AgentOptions) => http.Agent;

/** Node's own default for its global agent: idle sockets are closed after 5 s. */
const IDLE_SOCKET_TIMEOUT_MS = 5000;

const shared = new WeakSet<KubeConfig>();

/** The options that make two agents interchangeable. */
function agentKey(cluster: Cluster, o: https.AgentOptions): string {
  return JSON.stringify([
    cluster?.server ?? '',
    o.ca,
    o.cert,
    o.key,
    o.pfx,
    o.passphrase,
    o.rejectUnauthorized,
    o.servername,
  ]);
}

/** Makes `kc` reuse one keep-alive agent per server and TLS options (idempotent). */
export function shareConnections(kc: KubeConfig): KubeConfig {
  if (shared.has(kc)) return kc;
  shared.add(kc);
  const target = kc as unknown as { createAgent: CreateAgent };
  const original = target.createAgent.bind(kc);
  const agents = new Map<string, http.Agent>();
  target.createAgent = (cluster, options) => {
    if (cluster?.proxyUrl) return original(cluster, options);
    const key = agentKey(cluster, options);
    const existing = agents.get(key);
    if (existing) return existing;
    // The original decides the kind (and refuses plain HTTP without skipTLSVerify).
    const made = original(cluster, { ...options });
    made.destroy();
    const keepAlive = { keepAlive: true, scheduling: 'lifo' as const, timeout: IDLE_SOCKET_TIMEOUT_MS };
    const agent =
      made instanceof https.Agent
        ? new https.Agent({ ...options, ...keepAlive })
        : new http.Agent({ ...options, ...keepAlive });
    agents.set(key, agent);
    return agent;
  };
  return kc;
}
