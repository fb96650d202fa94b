/**
 * The inventory: which objects a Delivery has applied to one member cluster, so that objects
 * removed from Git can be pruned there.
 *
 * Where it lives: in ConfigMaps (one, or several shards when large) per Delivery **on the member
 * cluster itself**, not in the Delivery's status on the hub:
 * - status stays small — a Delivery with thousands of objects on dozens of clusters would blow
 *   through etcd's request size limit and make every status write and watch event heavy;
 * - the member cluster is where the objects are, so the record of what Sluice owns there lives
 *   and dies with them: it survives the loss (or rebuild) of the hub, a restored hub finds it
 *   again, and an unreachable cluster never "loses" its inventory (DESIGN.md, "Never destroy on
 *   doubt").
 *
 * Everything here is pure; the executor reads and writes the ConfigMaps and asks the member
 * cluster about live objects.
 */
import { createHash } from 'node:crypto';
import {
  builtinScope,
  carriesOwnerLabels,
  objectId,
  objectRef,
  parseObjectId,
  splitApiVersion,
  stageOf,
  type DeliveryOwner,
  type Manifest,
} from './objects.js';

/**
 * One applied object: its {@link objectId} and the API version it was applied with (needed to
 * delete it later, even after Git moves to another version). The same information as Flux's
 * `<ns>_<name>_<group>_<kind>` + `v` entries, in Sluice's id format.
 */
export interface InventoryEntry {
  readonly id: string;
  readonly version: string;
}

/** The inventory entry for an object about to be applied. */
export function inventoryEntry(obj: Manifest): InventoryEntry {
  const ref = objectRef(obj);
  return { id: objectId(ref), version: ref.version };
}

/**
 * Largest chunk `encodeInventory` produces by default: a ConfigMap's data may total 1 MiB, and
 * the rest is left for metadata and managedFields.
 */
export const MAX_CHUNK_BYTES = 900 * 1024;

/** Key of the chunk inside each inventory ConfigMap's `data`. */
export const INVENTORY_DATA_KEY = 'inventory';

/** Label that marks (and lets the executor list) inventory ConfigMaps. */
export const INVENTORY_LABEL = 'sluice.dev/inventory';

const FORMAT = 'sluice.dev/inventory v1';
// Enough room for the header with any realistic shard numbers.
const HEADER_RESERVE = 96;
const HEADER_RE = /^# sluice\.dev\/inventory v1 set=([0-9a-f]{12}) shard=(\d+)\/(\d+)$/;
const SECTION_RE = /^= (\S+) (\S+)$/;
const ENTRY_RE = /^(?:([^/\s]+)\/)?([^/\s]+)$/;

/**
 * Name of shard `shard` of `owner`'s inventory ConfigMap. Dot-separated so that two Deliveries
 * can never collide (`a-b`/`c` vs `a`/`b-c`): namespaces contain no dots and the shard number is
 * always the last segment.
 */
export function inventoryConfigMapName(
  owner: Pick<DeliveryOwner, 'namespace' | 'name'>,
  shard: number,
): string {
  const name = `sluice-inventory.${owner.namespace}.${owner.name}.${shard}`;
  if (name.length <= 253) return name;
  const hash = createHash('sha256').update(`${owner.namespace}.${owner.name}`).digest('hex').slice(0, 16);
  return `sluice-inventory.${owner.namespace}.${hash}.${shard}`;
}

interface Sorted {
  readonly group: string;
  readonly kind: string;
  readonly version: string;
  readonly namespace: string;
  readonly name: string;
}

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Thrown for entries no inventory can hold: a programming error, not a user mistake. */
export class InventoryError extends Error {
  override readonly name = 'InventoryError';
}

function sortEntries(entries: readonly InventoryEntry[]): Sorted[] {
  const byId = new Map<string, InventoryEntry>();
  for (const e of entries) byId.set(e.id, e);
  const rows = [...byId.values()].map((e) => {
    const ref = parseObjectId(e.id);
    if (!ref || !e.version || /[\s/]/.test(e.version))
      throw new InventoryError(`invalid inventory entry ${JSON.stringify(e)}`);
    return {
      group: ref.group,
      kind: ref.kind,
      version: e.version,
      namespace: ref.namespace ?? '',
      name: ref.name,
    };
  });
  return rows.sort(
    (a, b) =>
      byCodePoint(a.group, b.group) ||
      byCodePoint(a.kind, b.kind) ||
      byCodePoint(a.version, b.version) ||
      byCodePoint(a.namespace, b.namespace) ||
      byCodePoint(a.name, b.name),
  );
}

/**
 * Encodes an inventory as ConfigMap-sized text chunks, each at most `maxChunkBytes` (UTF-8).
 * Compact and readable: entries are grouped under `= <apiVersion> <Kind>` section lines and
 * written as `<namespace>/<name>` or `<name>`, so a typical object costs ~20–40 bytes and one
 * chunk holds tens of thousands. Deterministic — the same entries (in any order, duplicates
 * collapsed to the last) give the same chunks, so re-applying an unchanged inventory is a no-op.
 * Each chunk carries a header with a content hash (`set`) and `shard=i/n`, so a reader can tell a
 * complete set from a half-written one. An empty inventory is one header-only chunk.
 */
export function encodeInventory(
  entries: readonly InventoryEntry[],
  opts: { readonly maxChunkBytes?: number } = {},
): string[] {
  const max = opts.maxChunkBytes ?? MAX_CHUNK_BYTES;
  const rows = sortEntries(entries);
  const section = (r: Sorted): string => `= ${r.group ? `${r.group}/` : ''}${r.version} ${r.kind}\n`;
  const line = (r: Sorted): string => (r.namespace ? `${r.namespace}/${r.name}\n` : `${r.name}\n`);

  const bodies: string[] = [];
  let body = '';
  let bodyBytes = 0;
  let current = '';
  for (const r of rows) {
    const sec = section(r);
    const ln = line(r);
    const needsSection = sec !== current || body === '';
    const cost = Buffer.byteLength(ln) + (needsSection ? Buffer.byteLength(sec) : 0);
    if (HEADER_RESERVE + Buffer.byteLength(sec) + Buffer.byteLength(ln) > max) {
      throw new InventoryError(`maxChunkBytes ${max} cannot hold even one entry`);
    }
    if (body !== '' && HEADER_RESERVE + bodyBytes + cost > max) {
      bodies.push(body);
      body = '';
      bodyBytes = 0;
      current = '';
    }
    if (sec !== current) {
      body += sec;
      bodyBytes += Buffer.byteLength(sec);
      current = sec;
    }
    body += ln;
    bodyBytes += Buffer.byteLength(ln);
  }
  bodies.push(body);
  const set = createHash('sha256').update(bodies.join('')).digest('hex').slice(0, 12);
  return bodies.map((b, i) => `# ${FORMAT} set=${set} shard=${i}/${bodies.length}\n${b}`);
}

/**
 * The inventory ConfigMaps that hold `entries` for `owner`: ConfigMap name → chunk text, as
 * {@link encodeInventory} cuts them and {@link inventoryConfigMapName} names them.
 */
export function inventoryChunks(
  owner: Pick<DeliveryOwner, 'namespace' | 'name'>,
  entries: readonly InventoryEntry[],
): Map<string, string> {
  return new Map(encodeInventory(entries).map((c, i) => [inventoryConfigMapName(owner, i), c]));
}

/**
 * The decoded inventory. `ok: false` means the chunks do not form exactly one complete set
 * (a writer died half-way, or someone edited a ConfigMap): `entries` then holds every entry that
 * could be read from any chunk — enough to keep tracking those objects, never a basis to prune.
 */
export type DecodeResult =
  | {
      readonly ok: true;
      readonly entries: readonly InventoryEntry[];
      /** Indexes (into the input) of chunks from an older set, for the executor to delete. */
      readonly staleChunks: readonly number[];
    }
  | { readonly ok: false; readonly entries: readonly InventoryEntry[]; readonly errors: readonly string[] };

interface ParsedChunk {
  readonly input: number;
  readonly set: string;
  readonly shard: number;
  readonly of: number;
  readonly entries: InventoryEntry[];
}

/**
 * Decodes chunks written by {@link encodeInventory}, in any order. No chunks at all is an empty
 * inventory (nothing applied yet). Chunks from an older set next to one complete set are
 * reported as stale, not merged; any unreadable line makes the result `ok: false`.
 */
export function decodeInventory(chunks: readonly string[]): DecodeResult {
  const errors: string[] = [];
  const parsed: ParsedChunk[] = [];
  chunks.forEach((text, input) => {
    const lines = text.split('\n');
    const header = HEADER_RE.exec(lines[0] ?? '');
    if (!header) {
      errors.push(`chunk ${input}: first line is not a "# ${FORMAT} set=… shard=i/n" header`);
      return;
    }
    const chunk: ParsedChunk = {
      input,
      set: header[1] as string,
      shard: Number(header[2]),
      of: Number(header[3]),
      entries: [],
    };
    let section: { apiVersion: string; kind: string } | undefined;
    lines.slice(1).forEach((ln, i) => {
      if (ln === '') return;
      const where = `chunk ${input} line ${i + 2}`;
      const sec = SECTION_RE.exec(ln);
      if (sec) {
        section = { apiVersion: sec[1] as string, kind: sec[2] as string };
        return;
      }
      const entry = ENTRY_RE.exec(ln);
      if (!entry || !section) {
        errors.push(
          section
            ? `${where}: ${JSON.stringify(ln)} is neither "<namespace>/<name>" nor "<name>"`
            : `${where}: entry before any "= <apiVersion> <Kind>" section`,
        );
        return;
      }
      const { group, version } = splitApiVersion(section.apiVersion);
      chunk.entries.push({
        id: objectId({ group, kind: section.kind, namespace: entry[1], name: entry[2] as string }),
        version,
      });
    });
    parsed.push(chunk);
  });

  const union = (list: readonly ParsedChunk[]): InventoryEntry[] => {
    const byId = new Map<string, InventoryEntry>();
    for (const c of list) for (const e of c.entries) byId.set(e.id, e);
    return [...byId.values()].sort((a, b) => byCodePoint(a.id, b.id));
  };
  if (chunks.length === 0) return { ok: true, entries: [], staleChunks: [] };

  const sets = new Map<string, ParsedChunk[]>();
  for (const c of parsed) sets.set(c.set, [...(sets.get(c.set) ?? []), c]);
  const complete = [...sets.values()].filter((list) => {
    const of = list[0]?.of ?? 0;
    const shards = new Set(list.map((c) => c.shard));
    return (
      list.every((c) => c.of === of) &&
      shards.size === of &&
      list.length === of &&
      [...shards].every((s) => s < of)
    );
  });
  if (complete.length !== 1) {
    errors.push(
      complete.length === 0
        ? 'no complete inventory set: shards are missing or come from different writes'
        : `${complete.length} complete inventory sets found; cannot tell which is current`,
    );
  }
  const chosen = complete[0];
  if (errors.length > 0 || !chosen) return { ok: false, entries: union(parsed), errors };
  const inSet = new Set(chosen.map((c) => c.input));
  return {
    ok: true,
    entries: union(chosen),
    staleChunks: chunks.map((_, i) => i).filter((i) => !inSet.has(i)),
  };
}

// ---------------------------------------------------------------------------------------------
// Prune

/** Annotation on a live object that opts it out of pruning (as Flux's `prune: disabled`). */
export const PRUNE_ANNOTATION = 'sluice.dev/prune';

/** What the member cluster says about one inventoried object right now. */
export type LiveState =
  | {
      readonly state: 'Present';
      readonly labels?: Readonly<Record<string, string>>;
      readonly annotations?: Readonly<Record<string, string>>;
    }
  | { readonly state: 'Absent' }
  /** The cluster could not be asked (unreachable, forbidden, unknown kind). */
  | { readonly state: 'Unknown'; readonly reason: string };

/** Looks up the live copy of an inventoried object on the member cluster. */
export type LiveLookup = (entry: InventoryEntry) => LiveState;

/** An inventory entry and why prune decided what it did. */
export interface PruneNote {
  readonly entry: InventoryEntry;
  readonly reason: string;
}

/**
 * What to do with objects that left Git:
 * - `delete` — in a safe order (reverse of the apply stages: webhooks first, CRDs last);
 * - `release` — forget them (drop from the inventory) but leave them alone: already gone, taken
 *   over by someone else (owner labels removed) or opted out with `sluice.dev/prune: disabled`;
 * - `keep` — neither delete nor forget, because something is in doubt; retried next sync.
 */
export interface PrunePlan {
  readonly delete: readonly InventoryEntry[];
  readonly release: readonly PruneNote[];
  readonly keep: readonly PruneNote[];
}

/** Inputs to {@link pruneSet}. */
export interface PruneInput {
  /** The inventory recorded on the member cluster by the last sync. */
  readonly previous: readonly InventoryEntry[];
  /** The new desired state, after namespacing (ids must be final). */
  readonly rendered: readonly Manifest[];
  /** The owner's labels, from `ownerLabels`. */
  readonly owner: Readonly<Record<string, string>>;
  readonly live: LiveLookup;
}

function deleteRank(e: InventoryEntry): number {
  const ref = parseObjectId(e.id);
  return ref ? -stageOf(ref) : 0;
}

/**
 * Decides which previously applied objects to delete: only those in `previous`, absent from
 * `rendered`, and whose live copy still carries every owner label (and does not opt out). Never
 * destroys on doubt: an empty `rendered` deletes nothing (callers must also check `safeToPrune`);
 * an object the cluster cannot be asked about is kept; a Namespace that still holds rendered
 * objects, or a CRD of a group that still has rendered custom resources (whose own CRD is not
 * rendered), is kept — deleting either would cascade into objects Git still wants.
 */
export function pruneSet(input: PruneInput): PrunePlan {
  const renderedRefs = input.rendered.map((o) => objectRef(o));
  const renderedIds = new Set(renderedRefs.map((r) => objectId(r)));
  const renderedNamespaces = new Set(renderedRefs.flatMap((r) => (r.namespace ? [r.namespace] : [])));
  // Rendered custom resources whose CRD is not rendered, by group. A CRD is named
  // <plural>.<group> and plurals are free-form, so which CRD serves a kind cannot be told from
  // names alone: any CRD of such a group is kept rather than risk cascading into them.
  const crdKinds = new Set(
    input.rendered.flatMap((o) => {
      const spec =
        o.kind === 'CustomResourceDefinition'
          ? (o.spec as { group?: unknown; names?: { kind?: unknown } })
          : undefined;
      return spec ? [`${String(spec.group)}/${String(spec.names?.kind)}`] : [];
    }),
  );
  const orphanKinds = new Map<string, Set<string>>();
  for (const r of renderedRefs) {
    if (builtinScope(r.group, r.kind) !== undefined || crdKinds.has(`${r.group}/${r.kind}`)) continue;
    orphanKinds.set(r.group, (orphanKinds.get(r.group) ?? new Set()).add(r.kind));
  }
  const stale = input.previous.filter((e) => !renderedIds.has(e.id));

  const del: InventoryEntry[] = [];
  const release: PruneNote[] = [];
  const keep: PruneNote[] = [];
  if (input.rendered.length === 0) {
    for (const entry of stale) keep.push({ entry, reason: 'render is empty; an empty render never prunes' });
    return { delete: del, release, keep };
  }
  for (const entry of stale) {
    const ref = parseObjectId(entry.id);
    if (ref?.group === '' && ref.kind === 'Namespace' && renderedNamespaces.has(ref.name)) {
      keep.push({ entry, reason: `namespace ${ref.name} still holds rendered objects` });
      continue;
    }
    if (ref?.group === 'apiextensions.k8s.io' && ref.kind === 'CustomResourceDefinition') {
      const group = ref.name.slice(ref.name.indexOf('.') + 1);
      const users = orphanKinds.get(group);
      if (users) {
        keep.push({
          entry,
          reason: `CRD ${ref.name} may still serve rendered ${[...users].sort(byCodePoint).join(', ')}`,
        });
        continue;
      }
    }
    const live = input.live(entry);
    if (live.state === 'Unknown') {
      keep.push({ entry, reason: `live state unknown (${live.reason}); not pruned this time` });
    } else if (live.state === 'Absent') {
      release.push({ entry, reason: 'already deleted' });
    } else if (!carriesOwnerLabels(live.labels, input.owner)) {
      release.push({ entry, reason: 'live object no longer carries the owner labels; left in place' });
    } else if (live.annotations?.[PRUNE_ANNOTATION] === 'disabled') {
      release.push({ entry, reason: `pruning disabled by ${PRUNE_ANNOTATION}: disabled; left in place` });
    } else {
      del.push(entry);
    }
  }
  del.sort((a, b) => deleteRank(a) - deleteRank(b) || byCodePoint(a.id, b.id));
  return { delete: del, release, keep };
}

/**
 * The inventory to record after a sync: the previous one minus what is no longer ours
 * (`removed`: deleted or released ids), plus what was applied (its version wins). Objects that
 * failed to apply or to delete stay recorded, so nothing Sluice created is ever forgotten.
 */
export function nextInventory(
  previous: readonly InventoryEntry[],
  applied: readonly InventoryEntry[],
  removed: Iterable<string>,
): InventoryEntry[] {
  const gone = new Set(removed);
  const byId = new Map<string, InventoryEntry>();
  for (const e of previous) if (!gone.has(e.id)) byId.set(e.id, e);
  for (const e of applied) byId.set(e.id, e);
  return [...byId.values()].sort((a, b) => byCodePoint(a.id, b.id));
}

// ---------------------------------------------------------------------------------------------
// Summary

/** What one sync did to one object, in Flux's change-set vocabulary. */
export type ChangeAction = 'created' | 'configured' | 'unchanged' | 'deleted';

/** One object's change, as reported by the applier (server-side dry-run decides the action). */
export interface ChangeEntry {
  readonly id: string;
  readonly action: ChangeAction;
}

/** Counts per action, plus the one-line text used in events and condition messages. */
export interface DiffSummary {
  readonly created: number;
  readonly configured: number;
  readonly unchanged: number;
  readonly deleted: number;
  /** e.g. `2 created, 1 configured, 40 unchanged, 1 deleted`. */
  readonly text: string;
}

/** Counts a change set; each id is counted once, by its last reported action. */
export function diffSummary(changes: readonly ChangeEntry[]): DiffSummary {
  const last = new Map<string, ChangeAction>();
  for (const c of changes) last.set(c.id, c.action);
  const count = (a: ChangeAction): number => [...last.values()].filter((x) => x === a).length;
  const created = count('created');
  const configured = count('configured');
  const unchanged = count('unchanged');
  const deleted = count('deleted');
  return {
    created,
    configured,
    unchanged,
    deleted,
    text: `${created} created, ${configured} configured, ${unchanged} unchanged, ${deleted} deleted`,
  };
}
