/**
 * The pre-sync API gate: before anything is applied to a cluster, every rendered object's
 * apiVersion/kind is checked against what that cluster serves. An object whose kind the cluster
 * serves only at other versions (`extensions/v1beta1` Ingress on a 1.22+ cluster), or whose
 * apiVersion the removal table knows as removed or not yet served there, stops the whole cluster:
 * nothing is applied to it, and its status names the file, kind, apiVersion, the replacement
 * and the `sluice fix` command. Kinds the cluster does not serve at any version (a custom
 * resource whose CRD is missing) are left to the dry-run, which reports them as before.
 * Kinds defined by a CRD in the same render are served once that CRD is applied, so they pass.
 */
import type { ClusterClient } from '../kube/clients.js';
import { DiscoveryCache, serves, servedVersionsOf, type ServedApis } from '../scan/discovery.js';
import { fixCommand, servedSince } from '../scan/findings.js';
import { compareKubeVersions, findRemoval, parseKubeVersion, replacementAt } from '../scan/removals.js';
import { splitApiVersion, type RenderedObject } from './objects.js';
import { formatLocation } from './render-error.js';

/** One object a cluster does not serve. */
export interface NotServed {
  /** `deploy/ingress.yaml:3:1`. */
  readonly where: string;
  readonly file: string;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** What to use on this cluster; null when nothing replaces it (or it is unknown). */
  readonly replacement: { apiVersion: string; kind: string } | null;
  /** The versions of this kind the cluster does serve. */
  readonly servedVersions: readonly string[];
}

/** `group/Kind` → versions defined by CRDs in the render. */
function renderedCrdVersions(objects: readonly RenderedObject[]): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const { object } of objects) {
    if (object.kind !== 'CustomResourceDefinition') continue;
    const spec = (object.spec ?? {}) as {
      group?: string;
      names?: { kind?: string };
      version?: string;
      versions?: { name?: string }[];
    };
    if (!spec.group || !spec.names?.kind) continue;
    const versions = new Set<string>();
    if (spec.version) versions.add(spec.version);
    for (const v of spec.versions ?? []) if (v.name) versions.add(v.name);
    out.set(`${spec.group}/${spec.names.kind}`, versions);
  }
  return out;
}

/**
 * Pure: the objects `served` does not serve and the gate stops on, in render order.
 * `clusterVersion` (from /version) lets the removal table name a replacement the cluster serves.
 */
export function checkServed(
  objects: readonly RenderedObject[],
  served: ServedApis,
  clusterVersion?: string,
): NotServed[] {
  const fromRender = renderedCrdVersions(objects);
  const out: NotServed[] = [];
  for (const { object, origin } of objects) {
    const { apiVersion, kind } = object;
    if (serves(served, apiVersion, kind)) continue;
    const { group, version } = splitApiVersion(apiVersion);
    if (fromRender.get(`${group}/${kind}`)?.has(version)) continue;
    const servedVersions = servedVersionsOf(served, group, kind);
    const row = findRemoval(apiVersion, kind);
    // A version newer than the cluster (policy/v1 on 1.20) is not served yet: the same refusal.
    const since = servedSince(apiVersion, kind);
    const notYet =
      since !== undefined && clusterVersion !== undefined && compareKubeVersions(clusterVersion, since) < 0;
    if (!row && servedVersions.length === 0 && !notYet) continue;
    let replacement: { apiVersion: string; kind: string } | null = null;
    if (row) replacement = clusterVersion ? replacementAt(row, clusterVersion) : row.replacement;
    // The cluster's own answer beats the table: prefer a version it serves.
    if (!replacement || !serves(served, replacement.apiVersion, replacement.kind)) {
      const stable = [...servedVersions].sort(byStability)[0];
      if (stable) replacement = { apiVersion: stable, kind };
    }
    out.push({
      where: formatLocation(origin),
      file: origin.file,
      apiVersion,
      kind,
      name: object.metadata.name,
      replacement,
      servedVersions,
    });
  }
  return out;
}

function byStability(a: string, b: string): number {
  const rank = (gv: string): number => {
    const m = /v(\d+)(?:(alpha|beta)(\d+))?$/.exec(gv);
    if (!m) return -1;
    return Number(m[1]) * 1000 + (m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 100 : 200) + Number(m[3] ?? 0);
  };
  return rank(b) - rank(a);
}

const MAX_LISTED = 3;

/**
 * The status message for a refused cluster: each object (at most three, then a count) with
 * file:line, kind, name, apiVersion and the replacement, then the `sluice fix` command(s).
 */
export function apiGateMessage(notServed: readonly NotServed[], clusterVersion: string | undefined): string {
  const target = clusterVersion ? /^v?(\d+\.\d+)/.exec(clusterVersion)?.[1] : undefined;
  const items = notServed.slice(0, MAX_LISTED).map((n) => {
    const use = n.replacement
      ? `use ${n.replacement.apiVersion}`
      : n.servedVersions.length
        ? `served: ${n.servedVersions.join(', ')}`
        : 'no replacement';
    return `${n.where}: ${n.kind} ${n.name} uses ${n.apiVersion}, not served by this cluster${clusterVersion ? ` (${clusterVersion})` : ''}; ${use}`;
  });
  const more = notServed.length > MAX_LISTED ? [`and ${notServed.length - MAX_LISTED} more`] : [];
  const files = [...new Set(notServed.map((n) => n.file))];
  const fixes = files
    .slice(0, 2)
    .map((f) => fixCommand(f, target ?? '<cluster version>'))
    .join('; ');
  return `API versions not served, nothing applied to this cluster: ${[...items, ...more].join('; ')}; fix with: ${fixes}${files.length > 2 ? ` (and ${files.length - 2} more files)` : ''}`;
}

const caches = new WeakMap<ClusterClient, DiscoveryCache>();

/**
 * Executor: reads the cluster's discovery (cached per client for 30 s; read again before a
 * refusal) and returns the refusal message, or undefined when every object is served. Throws
 * when the cluster cannot be asked.
 */
export async function apiGate(
  client: ClusterClient,
  objects: readonly RenderedObject[],
): Promise<string | undefined> {
  let cache = caches.get(client);
  if (!cache) {
    cache = new DiscoveryCache();
    caches.set(client, cache);
  }
  let served = await cache.get(client);
  // A distribution's odd /version (or none) must not stop deliveries: judge by discovery alone.
  let notServed = checkServed(objects, served, parseableVersion(served.gitVersion));
  if (notServed.length > 0) {
    // Refuse only on fresh discovery: a CRD version added since the cache was filled is served.
    cache.invalidate(client.name);
    served = await cache.get(client);
    notServed = checkServed(objects, served, parseableVersion(served.gitVersion));
  }
  return notServed.length ? apiGateMessage(notServed, parseableVersion(served.gitVersion)) : undefined;
}

function parseableVersion(v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  try {
    parseKubeVersion(v);
    return v;
  } catch {
    return undefined;
  }
}
