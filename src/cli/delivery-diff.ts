/**
 * What `sluice diff delivery` shows for one cluster, decided from the applier's dry-run plan and
 * prune preview, and how it is printed. Pure: the command fetches, renders and plans; this file
 * only compares and formats, so every case is a table test.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { ClusterPlan, Planned, PrunePreview } from '../delivery/applier.js';
import { comparable } from '../delivery/drift.js';
import { parseObjectId } from '../delivery/objects.js';
import { formatLocation } from '../delivery/render-error.js';
import { maskSecretPair } from './secret-mask.js';
import { unifiedDiff } from './line-diff.js';

/** One object whose apply would change something (or could not be dry-run). */
export type ObjectDiff =
  | {
      readonly action: 'created' | 'configured';
      /** `Kind namespace/name`, or `Kind name` for cluster-scoped objects. */
      readonly object: string;
      /** Where in Git the object is written (`file:line:col`). */
      readonly origin: string;
      /** Unified diff of the live object and the dry-run result (Secrets masked); may be empty. */
      readonly diff: string;
      /** Why there is no diff body, when the server could not dry-run the object yet. */
      readonly note?: string;
    }
  | { readonly action: 'deleted'; readonly object: string }
  | { readonly action: 'failed'; readonly object: string; readonly message: string };

/** Everything that would change on one cluster. */
export interface ClusterDiff {
  readonly cluster: string;
  /** In apply order (as rendered), then the deletions in prune order. */
  readonly objects: readonly ObjectDiff[];
  readonly created: number;
  readonly configured: number;
  readonly deleted: number;
  readonly unchanged: number;
  readonly failed: number;
  /** Prune decisions worth knowing (skipped, objects kept), one line each. */
  readonly notes: readonly string[];
}

/** A cluster's diff, or why there is none (unreachable, rejected manifests, no client). */
export type ClusterDiffOutcome =
  | { readonly ok: true; readonly diff: ClusterDiff }
  | { readonly ok: false; readonly cluster: string; readonly message: string };

const describe = (kind: string, namespace: string | undefined, name: string): string =>
  `${kind} ${namespace ? `${namespace}/` : ''}${name}`;

const describePlanned = (p: Planned): string =>
  describe(p.desired.kind, p.desired.metadata.namespace, p.desired.metadata.name);

/** `obj` as the diff shows it: no status or volatile metadata, keys sorted, Secrets masked by the caller. */
function yamlOf(obj: KubernetesObject | undefined): string {
  return obj === undefined ? '' : stringify(comparable(obj), { sortMapEntries: true });
}

function objectDiff(p: Planned, afterLabel: string): ObjectDiff | 'unchanged' {
  const object = describePlanned(p);
  const origin = formatLocation(p.rendered.origin);
  if (p.failure) return { action: 'failed', object, message: p.failure };
  if (p.action === 'unchanged') return 'unchanged';
  const live = p.live as KubernetesObject | undefined;
  if (p.result && p.action) {
    const pair = maskSecretPair(live, p.result as KubernetesObject);
    return {
      action: p.action === 'create' ? 'created' : 'configured',
      object,
      origin,
      diff: unifiedDiff(yamlOf(pair.live), yamlOf(pair.desired), {
        labels: { before: 'live', after: afterLabel },
      }),
    };
  }
  if (p.deferred) {
    // Its namespace or kind comes with this revision: the server can only dry-run it once the
    // earlier stages exist, so what Git says is all there is to show.
    const why = p.fresh
      ? `its namespace is created by this revision`
      : `its kind is served only once this revision's CRDs are applied`;
    if (!live) {
      const desired = maskSecretPair(undefined, (p.send ?? p.desired) as unknown as KubernetesObject);
      return {
        action: 'created',
        object,
        origin,
        diff: unifiedDiff('', yamlOf(desired.desired), { labels: { before: 'live', after: afterLabel } }),
        note: `as written in Git, not dry-run: ${why}`,
      };
    }
    return { action: 'configured', object, origin, diff: '', note: `not dry-run: ${why}` };
  }
  return { action: 'failed', object, message: `${origin}: ${object}: the dry-run gave no result` };
}

/**
 * The diff of one cluster from its successful plan and prune preview: `created`/`configured`
 * for objects whose dry-run result differs from live (with the YAML diff, Secrets masked),
 * `deleted` for what prune would delete, `failed` for objects the server refused (conflicts),
 * counts for the summary. `revision` labels the new side of each diff.
 */
export function clusterDiff(
  cluster: string,
  plan: Extract<ClusterPlan, { ok: true }>,
  prune: PrunePreview,
  revision: string,
): ClusterDiff {
  const objects: ObjectDiff[] = [];
  let unchanged = 0;
  for (const p of plan.objects) {
    const d = objectDiff(p, revision);
    if (d === 'unchanged') unchanged += 1;
    else objects.push(d);
  }
  const notes: string[] = [];
  if (prune.kind === 'skipped') notes.push(prune.reason);
  if (prune.kind === 'planned') {
    for (const entry of prune.plan.delete) {
      const ref = parseObjectId(entry.id);
      objects.push({
        action: 'deleted',
        object: ref ? describe(ref.kind, ref.namespace, ref.name) : entry.id,
      });
    }
    for (const k of prune.plan.keep) notes.push(`not deleted: ${k.entry.id}: ${k.reason}`);
  }
  const count = (a: ObjectDiff['action']) => objects.filter((o) => o.action === a).length;
  return {
    cluster,
    objects,
    created: count('created'),
    configured: count('configured'),
    deleted: count('deleted'),
    unchanged,
    failed: count('failed'),
    notes,
  };
}

const MARK: Record<ObjectDiff['action'], string> = {
  created: '+',
  configured: '~',
  deleted: '-',
  failed: '!',
};

const indent = (text: string): string =>
  text
    .split('\n')
    .filter((l, i, all) => l !== '' || i < all.length - 1)
    .map((l) => `    ${l}\n`)
    .join('');

/** The one-line summary, e.g. `member-1: 1 created, 2 configured, 0 deleted, 97 unchanged`. */
export function summaryLine(d: ClusterDiff): string {
  const failed = d.failed > 0 ? `, ${d.failed} failed` : '';
  return `${d.cluster}: ${d.created} created, ${d.configured} configured, ${d.deleted} deleted, ${d.unchanged} unchanged${failed}`;
}

/**
 * The text for one cluster: a `=== cluster ===` header, each changed object as
 * `+ created` / `~ configured` / `- deleted` / `! failed` with its diff indented by four spaces,
 * notes, and the {@link summaryLine}. Secret values never appear: diffs are built from masked
 * objects.
 */
export function formatClusterDiff(d: ClusterDiff): string {
  let out = `=== ${d.cluster} ===\n`;
  for (const o of d.objects) {
    const mark = `${MARK[o.action]} ${o.action}`;
    switch (o.action) {
      case 'created':
      case 'configured':
        out += `${mark} ${o.object} (${o.origin})${o.note ? ` — ${o.note}` : ''}\n${indent(o.diff)}`;
        break;
      case 'deleted':
        out += `${mark} ${o.object}\n`;
        break;
      case 'failed':
        out += `${mark} ${o.object}: ${o.message}\n`;
        break;
    }
  }
  for (const n of d.notes) out += `note: ${n}\n`;
  return `${out}${summaryLine(d)}\n`;
}

/** True when applying would change something on the cluster. */
export function hasChanges(d: ClusterDiff): boolean {
  return d.created + d.configured + d.deleted > 0;
}

/**
 * `kubectl diff`'s exit status over every cluster: 0 when nothing differs, 1 when something
 * differs, 2 when any cluster could not be diffed or any object could not be dry-run (even if
 * others differ: the answer is incomplete).
 */
export function diffExitCode(outcomes: readonly ClusterDiffOutcome[]): 0 | 1 | 2 {
  if (outcomes.some((o) => !o.ok || o.diff.failed > 0)) return 2;
  return outcomes.some((o) => o.ok && hasChanges(o.diff)) ? 1 : 0;
}
