/**
 * What a scan reports and how it is judged: pure functions from an object's apiVersion/kind and
 * the target Kubernetes version to a finding, and from all findings to an exit code.
 */
import {
  API_REMOVALS,
  compareKubeVersions,
  findRemoval,
  removalApiVersion,
  removalStatusAt,
  replacementAt,
  type ApiRemoval,
} from './removals.js';

/**
 * `removed`: the target no longer serves it. `unavailable`: the target does not serve it *yet*
 * (a replacement newer than the target, as `helm template` picks offline). `deprecated`: served
 * but deprecated at the target.
 */
export type FindingStatus = 'removed' | 'unavailable' | 'deprecated';

/** Where a finding comes from: a file and line, or an object on a live cluster. */
export type FindingLocation =
  | { readonly file: string; readonly line: number; readonly itemPath?: string }
  | { readonly cluster: string; readonly namespace?: string; readonly name?: string };

/** How the document was read. */
export type FindingSource = 'file' | 'kustomize' | 'helm' | 'helm-pattern' | 'olm' | 'cluster';

/** One object whose apiVersion is a problem at the target version. */
export interface Finding {
  readonly location: FindingLocation;
  readonly source: FindingSource;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name?: string;
  readonly status: FindingStatus;
  readonly targetVersion: string;
  readonly deprecatedIn?: string;
  readonly removedIn?: string | null;
  /** What to use at the target version; null when nothing replaces it. */
  readonly replacement: { apiVersion: string; kind: string } | null;
  /** `sluice fix <path> --target-version X`; absent for a live-cluster object. */
  readonly fix?: string;
  readonly note?: string;
  /** How this one was found, when it matters (`rendering failed: …; pattern scan`). */
  readonly detail?: string;
  /** The table row, for SARIF rule ids. */
  readonly ruleId: string;
}

/** Something about a source that is not an apiVersion finding but must not go unsaid. */
export interface Notice {
  readonly path: string;
  /** `error`: (part of) the source could not be scanned; `capped`: an OLM bundle not meant for the target; `info`. */
  readonly level: 'error' | 'capped' | 'info';
  readonly message: string;
}

/** The result of one scan. */
export interface ScanReport {
  readonly targetVersion: string;
  readonly findings: readonly Finding[];
  readonly notices: readonly Notice[];
  /** Documents (or cluster objects) judged. */
  readonly scanned: number;
}

/** A rule id for a table row: `extensions-v1beta1-Ingress`. */
export function ruleIdOf(r: Pick<ApiRemoval, 'group' | 'version' | 'kind'>): string {
  return `${removalApiVersion(r).replace(/\//g, '-')}-${r.kind}`;
}

/** The rows whose replacement is `apiVersion/kind`, for the "not served yet" check. */
const REPLACEMENT_SINCE = new Map<string, string>();
for (const r of API_REMOVALS) {
  if (!r.replacement || !r.replacementSince) continue;
  const k = `${r.replacement.apiVersion}|${r.replacement.kind}`;
  const prev = REPLACEMENT_SINCE.get(k);
  if (!prev || compareKubeVersions(r.replacementSince, prev) < 0)
    REPLACEMENT_SINCE.set(k, r.replacementSince);
}

/** The release that first serves `apiVersion/kind`, when the table knows it as a replacement. */
export function servedSince(apiVersion: string, kind: string): string | undefined {
  return REPLACEMENT_SINCE.get(`${apiVersion}|${kind}`);
}

/** The shell-quoted `sluice fix` command for a path. */
export function fixCommand(path: string, targetVersion: string): string {
  const quoted = /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
  return `sluice fix ${quoted} --target-version ${targetVersion}`;
}

/**
 * Judges one object at `targetVersion`; undefined when it is fine there (or unknown to the
 * table: a custom resource, a GA kind).
 */
export function judge(
  obj: { apiVersion: string; kind: string; name?: string },
  targetVersion: string,
  where: { location: FindingLocation; source: FindingSource; fixPath?: string; detail?: string },
): Finding | undefined {
  const row = findRemoval(obj.apiVersion, obj.kind);
  const base = {
    location: where.location,
    source: where.source,
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    ...(obj.name ? { name: obj.name } : {}),
    targetVersion,
    ...(where.detail ? { detail: where.detail } : {}),
  };
  if (row) {
    const status = removalStatusAt(row, targetVersion);
    if (status === 'ok') return undefined;
    return {
      ...base,
      status,
      deprecatedIn: row.deprecatedIn,
      removedIn: row.removedIn,
      replacement: replacementAt(row, targetVersion),
      ...(where.fixPath ? { fix: fixCommand(where.fixPath, targetVersion) } : {}),
      ...(row.note ? { note: row.note } : {}),
      ruleId: ruleIdOf(row),
    };
  }
  const since = servedSince(obj.apiVersion, obj.kind);
  if (since && compareKubeVersions(targetVersion, since) < 0) {
    return {
      ...base,
      status: 'unavailable',
      replacement: null,
      note: `${obj.apiVersion} ${obj.kind} is served from Kubernetes ${since}; a ${targetVersion} cluster refuses it`,
      ruleId: `unavailable-${obj.apiVersion.replace(/\//g, '-')}-${obj.kind}`,
    };
  }
  return undefined;
}

/**
 * Exit codes of `sluice scan` (documented in its --help and the README):
 * 0 clean; 3 deprecated APIs only; 4 removed (or not yet served) APIs at the target;
 * 2 usage error or something could not be scanned (takes precedence: the result is incomplete).
 */
export const ScanExit = { Clean: 0, Error: 2, Deprecated: 3, Removed: 4 } as const;

export function exitCodeOf(report: ScanReport): number {
  if (report.notices.some((n) => n.level === 'error')) return ScanExit.Error;
  if (report.findings.some((f) => f.status !== 'deprecated')) return ScanExit.Removed;
  if (report.findings.length > 0) return ScanExit.Deprecated;
  return ScanExit.Clean;
}

/** `file:line` or `cluster/namespace/name`. */
export function formatFindingLocation(l: FindingLocation): string {
  if ('file' in l) return `${l.file}:${l.line}${l.itemPath ? ` (${l.itemPath})` : ''}`;
  return [`cluster ${l.cluster}`, l.namespace, l.name].filter(Boolean).join('/');
}
