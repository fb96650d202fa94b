import type { V1Node } from '@kubernetes/client-node';
import type { ClusterAllocatable } from '../api/cluster.js';
import type { ClusterClient } from '../kube/clients.js';
import { normalizeKubeError } from '../kube/errors.js';
import { parseQuantity } from './quantity.js';

/** What one probe of a member cluster learned. */
export interface ClusterFacts {
  /** `gitVersion` of the API server, e.g. `v1.36.3`. */
  version: string;
  /** Every served group/version (`v1`, `apps/v1`, …), sorted. */
  groupVersions: string[];
  /** Summed over Ready, schedulable nodes. */
  allocatable: ClusterAllocatable;
  readyNodes: number;
}

interface ApiVersions {
  versions?: string[];
}
interface ApiGroupList {
  groups?: Array<{ versions?: Array<{ groupVersion: string }> }>;
}

/** Rejects with a `KubeError` (reason `Timeout`) when `promise` takes longer than `ms`. */
function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`${what}: no answer in ${ms} ms`), { code: 'ETIMEDOUT' })),
      ms,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Asks a member's API server for its version, served API groups and node capacity.
 * Bounded by `timeoutMs` in all (a hung server must not hold a worker). Rejects with a
 * normalised `KubeError`.
 */
export async function probeCluster(client: ClusterClient, timeoutMs: number): Promise<ClusterFacts> {
  try {
    return await withTimeout(probe(client), timeoutMs, `probe ${client.name}`);
  } catch (err) {
    throw normalizeKubeError(err, `cluster ${client.name}`);
  }
}

async function probe(client: ClusterClient): Promise<ClusterFacts> {
  const [version, core, groups, nodes] = await Promise.all([
    client.raw.request<{ gitVersion: string }>({ method: 'GET', path: '/version' }),
    client.raw.request<ApiVersions>({ method: 'GET', path: '/api' }),
    client.raw.request<ApiGroupList>({ method: 'GET', path: '/apis' }),
    client.raw.listRaw<V1Node>('v1', 'Node'),
  ]);
  const groupVersions = [
    ...(core.versions ?? []),
    ...(groups.groups ?? []).flatMap((g) => (g.versions ?? []).map((v) => v.groupVersion)),
  ].sort();
  return { version: version.gitVersion, groupVersions, ...sumAllocatable(nodes.items) };
}

/** Sums allocatable cpu, memory and pods over nodes that are Ready and schedulable. Pure. */
export function sumAllocatable(nodes: readonly V1Node[]): {
  allocatable: ClusterAllocatable;
  readyNodes: number;
} {
  let cpu = 0;
  let memory = 0;
  let pods = 0;
  let readyNodes = 0;
  for (const node of nodes) {
    const ready = node.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (!ready || node.spec?.unschedulable) continue;
    readyNodes++;
    const a = node.status?.allocatable ?? {};
    cpu += a.cpu ? parseQuantity(a.cpu) : 0;
    memory += a.memory ? parseQuantity(a.memory) : 0;
    pods += a.pods ? parseQuantity(a.pods) : 0;
  }
  return {
    readyNodes,
    allocatable: {
      cpu: Number.isInteger(cpu) ? String(cpu) : `${Math.round(cpu * 1000)}m`,
      memory:
        memory >= 1024 ** 3 && memory % 1024 ** 3 === 0
          ? `${memory / 1024 ** 3}Gi`
          : String(Math.round(memory)),
      pods: String(Math.round(pods)),
    },
  };
}
