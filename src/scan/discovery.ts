/**
 * What a cluster serves: every group/version and the kinds (with plural, scope and verbs) under
 * it, read with aggregated discovery (one request for `/api`, one for `/apis`; Kubernetes 1.27+)
 * and the per-group-version documents as a fallback. Cached per cluster for a short TTL so the
 * Delivery gate can ask on every sync without a discovery storm.
 */
import type { ClusterClient } from '../kube/clients.js';

/** One served kind. */
export interface ServedResource {
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
}

/** Everything a cluster serves, keyed by apiVersion (`apps/v1`, `v1`). */
export interface ServedApis {
  readonly gitVersion?: string;
  readonly groupVersions: ReadonlyMap<string, readonly ServedResource[]>;
}

/** True when the cluster serves `kind` at `apiVersion`. */
export function serves(apis: ServedApis, apiVersion: string, kind: string): boolean {
  return (apis.groupVersions.get(apiVersion) ?? []).some((r) => r.kind === kind);
}

/** The apiVersions under which the cluster serves `kind` in `group`. */
export function servedVersionsOf(apis: ServedApis, group: string, kind: string): string[] {
  const out: string[] = [];
  for (const [gv, resources] of apis.groupVersions) {
    const slash = gv.lastIndexOf('/');
    const g = slash < 0 ? '' : gv.slice(0, slash);
    if (g === group && resources.some((r) => r.kind === kind)) out.push(gv);
  }
  return out;
}

const AGGREGATED = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

interface AggregatedList {
  kind?: string;
  items?: {
    metadata?: { name?: string };
    versions?: {
      version: string;
      resources?: {
        resource: string;
        responseKind?: { kind?: string };
        scope?: string;
        verbs?: string[];
      }[];
    }[];
  }[];
  groups?: { name: string; versions: { groupVersion: string }[] }[];
  versions?: string[];
}

interface ResourceList {
  resources?: { name: string; kind: string; namespaced: boolean; verbs?: string[] }[];
}

/** Reads the cluster's discovery (and `/version`). Throws the client's error when unreachable. */
export async function fetchServedApis(client: ClusterClient): Promise<ServedApis> {
  const raw = client.raw;
  const get = async <T>(path: string, accept = 'application/json'): Promise<T> =>
    JSON.parse(await raw.requestText({ method: 'GET', path }, accept)) as T;
  const groupVersions = new Map<string, ServedResource[]>();
  const legacy: string[] = [];
  for (const root of ['/api', '/apis']) {
    const doc = await get<AggregatedList>(root, AGGREGATED);
    if (doc.kind === 'APIGroupDiscoveryList') {
      for (const g of doc.items ?? []) {
        const group = g.metadata?.name ?? '';
        for (const v of g.versions ?? []) {
          const gv = group ? `${group}/${v.version}` : v.version;
          groupVersions.set(
            gv,
            (v.resources ?? []).map((r) => ({
              kind: r.responseKind?.kind ?? '',
              plural: r.resource,
              namespaced: r.scope === 'Namespaced',
              verbs: r.verbs ?? [],
            })),
          );
        }
      }
    } else if (root === '/api') {
      legacy.push(...(doc.versions ?? []));
    } else {
      for (const g of doc.groups ?? []) legacy.push(...g.versions.map((v) => v.groupVersion));
    }
  }
  await Promise.all(
    legacy.map(async (gv) => {
      const list = await get<ResourceList>(gv.includes('/') ? `/apis/${gv}` : `/api/${gv}`);
      groupVersions.set(
        gv,
        (list.resources ?? [])
          .filter((r) => !r.name.includes('/'))
          .map((r) => ({ kind: r.kind, plural: r.name, namespaced: r.namespaced, verbs: r.verbs ?? [] })),
      );
    }),
  );
  let gitVersion: string | undefined;
  try {
    gitVersion = (await get<{ gitVersion?: string }>('/version')).gitVersion;
  } catch {
    // /version is optional for the verdict; the caller falls back to its own target.
  }
  return { ...(gitVersion ? { gitVersion } : {}), groupVersions };
}

/**
 * Discovery per cluster, reused for `ttlMs` (default 30 s): long enough that a Delivery resync
 * does not re-read it, short enough that a CRD installed by another Delivery shows up soon.
 * Concurrent callers for one cluster share one request.
 */
export class DiscoveryCache {
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #entries = new Map<string, { at: number; value: Promise<ServedApis> }>();

  constructor(opts: { ttlMs?: number; now?: () => number } = {}) {
    this.#ttlMs = opts.ttlMs ?? 30_000;
    this.#now = opts.now ?? Date.now;
  }

  get(
    client: ClusterClient,
    fetch: (c: ClusterClient) => Promise<ServedApis> = fetchServedApis,
  ): Promise<ServedApis> {
    const hit = this.#entries.get(client.name);
    if (hit && this.#now() - hit.at < this.#ttlMs) return hit.value;
    const value = fetch(client);
    this.#entries.set(client.name, { at: this.#now(), value });
    // A failure is not cached: the next sync asks again.
    value.catch(() => {
      if (this.#entries.get(client.name)?.value === value) this.#entries.delete(client.name);
    });
    return value;
  }

  /** Forget a cluster (its client was replaced). */
  invalidate(cluster: string): void {
    this.#entries.delete(cluster);
  }
}
