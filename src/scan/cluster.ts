/**
 * `sluice scan --kubeconfig`: a live cluster. A cluster stores each object once and serves it
 * through every version it still serves, so listing an old version tells nothing about how the
 * object was written. What does:
 *  - `metadata.managedFields[].apiVersion`: the version each writer (kubectl, helm, a controller,
 *    server-side apply) used for its last write — a client that still writes through a deprecated
 *    version shows up here, whatever tool it is;
 *  - the `kubectl.kubernetes.io/last-applied-configuration` annotation (what kubent reads): the
 *    manifest `kubectl apply` was last given — the version the source in Git still has.
 * Each object of every kind in the removal table is listed once, through a version the cluster
 * serves (the newest), and judged by those two. Discovery also shows which deprecated versions
 * the cluster still serves (a notice). Events and review kinds are not listed (transient,
 * or never stored). Objects written through a version the cluster no longer serves cannot exist.
 *
 * Helm releases are read too (Secrets of type `helm.sh/release.v1`, the deployed revision of
 * each): `helm upgrade` diffs against the stored release manifest, so an apiVersion the cluster
 * no longer serves there breaks the next upgrade even when the live objects are fine.
 */
import { gunzipSync } from 'node:zlib';
import type { ClusterClient } from '../kube/clients.js';
import { scanText } from './documents.js';
import { fetchServedApis, type ServedApis } from './discovery.js';
import { judge, type Finding, type Notice, type ScanReport } from './findings.js';
import { API_REMOVALS, removalApiVersion, removalStatusAt } from './removals.js';

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const SKIPPED_KINDS = new Set(['Event']);

interface ListedObject {
  metadata?: {
    name?: string;
    namespace?: string;
    annotations?: Record<string, string>;
    managedFields?: { manager?: string; apiVersion?: string; operation?: string }[];
  };
}

/** Pure: the findings for one live object read through `servedAs`. */
export function judgeLiveObject(
  obj: ListedObject,
  kind: string,
  cluster: string,
  targetVersion: string,
): Finding[] {
  const m = obj.metadata ?? {};
  const location = {
    cluster,
    ...(m.namespace ? { namespace: m.namespace } : {}),
    ...(m.name ? { name: m.name } : {}),
  };
  const out: Finding[] = [];
  const seen = new Set<string>();
  const add = (apiVersion: string, detail: string): void => {
    const f = judge({ apiVersion, kind, ...(m.name ? { name: m.name } : {}) }, targetVersion, {
      location,
      source: 'cluster',
      detail,
    });
    if (f && !seen.has(apiVersion)) {
      seen.add(apiVersion);
      out.push(f);
    }
  };
  const lastApplied = m.annotations?.[LAST_APPLIED];
  if (lastApplied) {
    try {
      const v = (JSON.parse(lastApplied) as { apiVersion?: unknown }).apiVersion;
      if (typeof v === 'string') add(v, `${LAST_APPLIED} (the manifest last given to kubectl apply)`);
    } catch {
      // An unparseable annotation says nothing about the version; managedFields still may.
    }
  }
  for (const mf of m.managedFields ?? []) {
    if (mf.apiVersion)
      add(
        mf.apiVersion,
        `managedFields: last ${mf.operation ?? 'write'} by "${mf.manager ?? '?'}" used ${mf.apiVersion}`,
      );
  }
  return out;
}

/** Scans a live cluster. Throws when the cluster cannot be reached. */
export async function scanCluster(
  client: ClusterClient,
  cluster: string,
  targetVersion: string,
  apis?: ServedApis,
): Promise<ScanReport> {
  const served = apis ?? (await fetchServedApis(client));
  const findings: Finding[] = [];
  const notices: Notice[] = [];
  let scanned = 0;

  // Deprecated versions the cluster still serves.
  for (const row of API_REMOVALS) {
    const gv = removalApiVersion(row);
    if (!(served.groupVersions.get(gv) ?? []).some((r) => r.kind === row.kind)) continue;
    const status = removalStatusAt(row, targetVersion);
    if (status !== 'ok') {
      notices.push({
        path: `cluster ${cluster}`,
        level: 'info',
        message: `serves ${gv} ${row.kind}, ${status} at ${targetVersion}${row.replacement ? `; clients should use ${row.replacement.apiVersion}` : ''}`,
      });
    }
  }

  // Each kind of the table once, through its newest served version.
  const kinds = new Map<string, { group: string; kind: string }>();
  for (const r of API_REMOVALS) if (!SKIPPED_KINDS.has(r.kind)) kinds.set(`${r.group}/${r.kind}`, r);
  for (const { group, kind } of kinds.values()) {
    const candidates = [...served.groupVersions.entries()]
      .filter(([gv]) => (gv.includes('/') ? gv.slice(0, gv.lastIndexOf('/')) : '') === group)
      .flatMap(([gv, resources]) =>
        resources.filter((r) => r.kind === kind && r.verbs.includes('list')).map((r) => ({ gv, r })),
      )
      .sort((a, b) => rankVersion(b.gv) - rankVersion(a.gv));
    const pick = candidates[0];
    if (!pick) continue;
    const base = pick.gv.includes('/') ? `/apis/${pick.gv}` : `/api/${pick.gv}`;
    for (const item of await listAll<ListedObject>(client, `${base}/${pick.r.plural}`)) {
      scanned += 1;
      findings.push(...judgeLiveObject(item, kind, cluster, targetVersion));
    }
  }
  for (const secret of await listAll<HelmSecret>(client, '/api/v1/secrets', 'owner=helm')) {
    if (secret.type !== 'helm.sh/release.v1' || secret.metadata?.labels?.status !== 'deployed') continue;
    const release = decodeHelmRelease(secret.data?.release);
    const where = `${secret.metadata?.namespace ?? ''}/${secret.metadata?.name ?? ''}`;
    if (!release) {
      notices.push({
        path: `cluster ${cluster} Secret ${where}`,
        level: 'info',
        message: 'Helm release data unreadable; not judged',
      });
      continue;
    }
    findings.push(...judgeHelmRelease(release, cluster, targetVersion));
    scanned += 1;
  }
  return { targetVersion, findings, notices, scanned };
}

interface HelmSecret {
  type?: string;
  metadata?: { name?: string; namespace?: string; labels?: Record<string, string> };
  data?: { release?: string };
}

/** A Helm 3 release as stored: the Secret value is base64(base64(gzip(JSON))). */
export interface HelmRelease {
  readonly name: string;
  readonly namespace: string;
  readonly version: number;
  readonly manifest: string;
}

/** Decodes a Helm 3 release Secret's `release` value; undefined when it is not one. */
export function decodeHelmRelease(data: string | undefined): HelmRelease | undefined {
  if (!data) return undefined;
  try {
    const inner = Buffer.from(Buffer.from(data, 'base64').toString('utf8'), 'base64');
    const json =
      inner[0] === 0x1f && inner[1] === 0x8b ? gunzipSync(inner).toString('utf8') : inner.toString('utf8');
    const r = JSON.parse(json) as Partial<HelmRelease>;
    if (typeof r.name !== 'string' || typeof r.manifest !== 'string') return undefined;
    return {
      name: r.name,
      namespace: r.namespace ?? '',
      version: Number(r.version ?? 0),
      manifest: r.manifest,
    };
  } catch {
    return undefined;
  }
}

/** Pure: the findings for the objects of one release manifest. */
export function judgeHelmRelease(release: HelmRelease, cluster: string, targetVersion: string): Finding[] {
  const out: Finding[] = [];
  for (const o of scanText(release.manifest).objects) {
    const f = judge(o, targetVersion, {
      location: {
        cluster,
        namespace: release.namespace,
        name: `helm release ${release.name} (revision ${release.version})`,
      },
      source: 'cluster',
      detail: `stored Helm release manifest: helm upgrade of ${release.name} fails once ${o.apiVersion} is not served (rewrite the release with the helm mapkubeapis plugin, then fix the chart)`,
    });
    if (f) out.push(f);
  }
  return out;
}

async function listAll<T>(client: ClusterClient, path: string, labelSelector?: string): Promise<T[]> {
  const out: T[] = [];
  let continueToken: string | undefined;
  do {
    const page = await client.raw.request<{ items?: T[]; metadata?: { continue?: string } }>({
      method: 'GET',
      path,
      query: { limit: 500, continue: continueToken, labelSelector },
    });
    out.push(...(page.items ?? []));
    continueToken = page.metadata?.continue || undefined;
  } while (continueToken);
  return out;
}

/** v1 > v1beta2 > v1beta1 > v1alpha1: the stable version first. */
function rankVersion(gv: string): number {
  const v = gv.slice(gv.lastIndexOf('/') + 1);
  const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
  if (!m) return -1;
  const stage = m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2;
  return Number(m[1]) * 1000 + stage * 100 + Number(m[3] ?? 0);
}
