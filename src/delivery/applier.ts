/**
 * The per-cluster apply executor: takes rendered objects to one member cluster with staged,
 * dry-run-first server-side apply, keeps the inventory there, prunes, and reads health from what
 * the API server returned. Decisions are the pure modules' (`objects`, `inventory`, `drift`,
 * `health`); this file only sends requests and collects answers.
 *
 * Two phases, so that the reconciler can gate every cluster before writing to any:
 * 1. {@link planCluster} — check every object's apiVersion against the cluster's discovery
 *    (api-gate.ts: a version the cluster does not serve refuses the cluster, `APINotServed`);
 *    read the inventory and the live objects, dry-run every object whose
 *    kind is served; no write. An object the API server rejects (invalid field, unknown kind)
 *    makes the plan `Invalid`, which the reconciler reports as a build failure and applies
 *    nowhere.
 * 2. {@link executePlan} — write what drifted, stage by stage (CRDs Established before the next
 *    stage), prune, record the inventory.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { FieldManager, serverSideApply } from '../kube/apply.js';
import type { ClusterClient } from '../kube/clients.js';
import { KubeError, isNotFound, isUnreachable, normalizeKubeError } from '../kube/errors.js';
import { hasDrifted, planOwnership } from './drift.js';
import { aggregateHealth, objectHealth, type AggregateHealth, type LiveObject } from './health.js';
import {
  PRUNE_ANNOTATION,
  diffSummary,
  inventoryEntry,
  nextInventory,
  pruneSet,
  type ChangeEntry,
  type DiffSummary,
  type InventoryEntry,
  type LiveState,
  type PruneNote,
  type PrunePlan,
} from './inventory.js';
import {
  deleteInventory,
  readInventory,
  writeInventory,
  writtenInventory,
  type StoredInventory,
} from './inventory-store.js';
import {
  applyNamespacing,
  builtinScope,
  carriesOwnerLabels,
  objectId,
  objectRef,
  ownerLabels,
  parseObjectId,
  scopesFromRenderedCrds,
  splitApiVersion,
  stageOf,
  withOwnerLabels,
  type DeliveryOwner,
  type Manifest,
  type RenderedObject,
  type Scope,
} from './objects.js';
import { formatLocation } from './render-error.js';
import { apiGate } from './api-gate.js';

/** What to apply to one cluster. */
export interface ClusterApplyInput {
  readonly client: ClusterClient;
  readonly owner: DeliveryOwner;
  /** A successful, non-empty render (the reconciler never calls with anything else). */
  readonly objects: readonly RenderedObject[];
  readonly targetNamespace?: string;
  readonly prune: boolean;
  /** Requests in flight on this cluster at once. Default 16. */
  readonly concurrency?: number;
  /** The cluster's work stops (between requests) after this epoch-ms instant. */
  readonly deadline: number;
  /** How long to wait for rendered CRDs to be Established. Default 30 s (bounded by `deadline`). */
  readonly crdTimeoutMs?: number;
}

type Action = 'create' | 'configure' | 'unchanged';

/** One object on its way to the cluster (what the gate found: live copy, dry-run result, action). */
export interface Planned {
  readonly id: string;
  readonly stage: number;
  readonly rendered: RenderedObject;
  /** Rendered object with owner labels, before fields are yielded to other owners. */
  readonly desired: Manifest;
  live?: LiveObject;
  /** The object as the server returned it from the dry-run or the write. */
  result?: LiveObject;
  action?: Action;
  force?: boolean;
  send?: Manifest;
  /** Its kind (or namespace) comes from this render: dry-run only once the earlier stages exist. */
  deferred: boolean;
  /** Its namespace did not exist at the gate: it can only be created, no dry-run needed. */
  fresh?: boolean;
  failure?: string;
  conflict?: boolean;
  yielded?: readonly string[];
}

/** The outcome of the gate on one cluster. */
export type ClusterPlan =
  | {
      readonly ok: true;
      readonly input: ClusterApplyInput;
      readonly stored: StoredInventory;
      readonly objects: readonly Planned[];
    }
  | {
      readonly ok: false;
      /**
       * `Invalid`: the manifests are wrong (a build failure). `Unreachable`/`Failed`: this cluster
       * only. `APINotServed`: this cluster does not serve an object's apiVersion (see api-gate.ts).
       */
      readonly reason: 'Invalid' | 'Unreachable' | 'Failed' | 'APINotServed';
      readonly message: string;
    };

/** What one apply did on one cluster. */
export interface ClusterApplyResult {
  readonly changes: readonly ChangeEntry[];
  readonly summary: DiffSummary;
  /** Objects that could not be applied, with the reason (conflicts included). */
  readonly failures: readonly string[];
  /** Fields left to other managers, e.g. `apps/Deployment/ns/web spec.replicas (hpa)`; bounded. */
  readonly yielded: readonly string[];
  readonly pruneFailures: readonly string[];
  /** Stale objects neither deleted nor forgotten this time (live state unknown, …). */
  readonly pruneKept: readonly PruneNote[];
  /** Why nothing was pruned, when pruning was skipped for doubt (unreadable inventory). */
  readonly pruneSkipped?: string;
  readonly inventorySize: number;
  readonly health: AggregateHealth;
  /** Write calls sent (applies that were not dry-runs, deletes, inventory writes). */
  readonly writes: number;
}

/** What removing a Delivery from a cluster that left the placement did. */
export interface ClusterRemoveResult {
  readonly done: boolean;
  readonly deleted: number;
  readonly message: string;
}

/** Thrown when a cluster's work passes its deadline. */
export class ApplyTimeoutError extends Error {
  override readonly name = 'ApplyTimeoutError';
}

/**
 * `work`, or an {@link ApplyTimeoutError} after `ms`: bounds one cluster's work even when a
 * request hangs (a black-holed API server answers nothing). `work` is not cancelled.
 */
export function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ApplyTimeoutError(`timed out after ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Runs `fn` over `items` with at most `limit` promises in flight; results in input order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}

function checkDeadline(deadline: number): void {
  if (Date.now() > deadline) throw new ApplyTimeoutError('apply did not finish within its timeout');
}

const TYPED_PATCH_FAILED = /failed to create typed patch object/;
const UNKNOWN_KIND = /Unrecognized API version and kind|Failed to fetch resource metadata/;

function isUnknownKind(err: KubeError): boolean {
  return UNKNOWN_KIND.test(err.message) && !isUnreachable(err);
}

function where(p: Planned): string {
  return `${formatLocation(p.rendered.origin)}: ${p.desired.kind} ${p.desired.metadata.namespace ? `${p.desired.metadata.namespace}/` : ''}${p.desired.metadata.name}`;
}

function probeFor(
  apiVersion: string,
  kind: string,
  namespace: string | undefined,
  name: string,
): KubernetesObject {
  return { apiVersion, kind, metadata: namespace ? { namespace, name } : { name } };
}

/** Answers the scope of custom kinds from the cluster's discovery (asked once per kind). */
async function discoverScopes(
  client: ClusterClient,
  objects: readonly RenderedObject[],
): Promise<(group: string, kind: string) => Scope | undefined> {
  const fromRender = scopesFromRenderedCrds(objects);
  const scopes = new Map<string, Scope>();
  const seen = new Set<string>();
  for (const { object } of objects) {
    const ref = objectRef(object);
    const key = `${ref.group}/${ref.kind}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (builtinScope(ref.group, ref.kind) !== undefined || fromRender(ref.group, ref.kind)) continue;
    try {
      // Discovery through the raw client's cached resolver: a namespaced kind's list path
      // names the namespace given, a cluster-scoped kind's does not.
      const path = await client.raw.pathFor(
        { apiVersion: object.apiVersion, kind: object.kind, metadata: { namespace: 'scope-probe' } },
        'list',
      );
      scopes.set(key, path.includes('/namespaces/scope-probe/') ? 'Namespaced' : 'Cluster');
    } catch (err) {
      const e = normalizeKubeError(err);
      if (isUnreachable(e)) throw e;
      // Unknown group/version: left unknown, namespacing reports it.
    }
  }
  return (group, kind) => scopes.get(`${group}/${kind}`);
}

/** The live objects carrying the owner labels, by id: one paged list per kind. */
async function listOwned(
  client: ClusterClient,
  objects: readonly Planned[],
  selector: string,
  deadline: number,
): Promise<Map<string, LiveObject>> {
  const live = new Map<string, LiveObject>();
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const p of objects) kinds.set(`${p.desired.apiVersion} ${p.desired.kind}`, p.desired);
  for (const { apiVersion, kind } of kinds.values()) {
    checkDeadline(deadline);
    let continueToken: string | undefined;
    try {
      do {
        const page = await client.raw.listRaw<KubernetesObject>(apiVersion, kind, {
          labelSelector: selector,
          limit: 500,
          continueToken,
        });
        for (const item of page.items) {
          const m = item.metadata ?? {};
          const id = objectId({
            group: splitApiVersion(apiVersion).group,
            kind,
            ...(m.namespace ? { namespace: m.namespace } : {}),
            name: m.name ?? '',
          });
          live.set(id, { ...(item as LiveObject), apiVersion, kind });
        }
        continueToken = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
      } while (continueToken);
    } catch (err) {
      const e = normalizeKubeError(err);
      if (isUnreachable(e)) throw e;
      // A kind not served yet (its CRD is in this render): its objects are dry-run later.
    }
  }
  return live;
}

/**
 * The gate: reads the inventory and the live objects and dry-runs every object whose kind is
 * already served (with the fields other declarative owners hold left out). Writes nothing.
 * `Unreachable` when the cluster cannot be asked; `Invalid` naming file:line for objects the
 * API server rejects.
 */
export async function planCluster(input: ClusterApplyInput): Promise<ClusterPlan> {
  const { client, deadline } = input;
  try {
    const refusal = await apiGate(client, input.objects);
    if (refusal) return { ok: false, reason: 'APINotServed', message: refusal };
    const stored = await readInventory(client, input.owner);
    const lookupScope = await discoverScopes(client, input.objects);
    const namespaced = applyNamespacing(input.objects, {
      targetNamespace: input.targetNamespace,
      lookupScope,
    });
    if (!namespaced.ok) {
      return { ok: false, reason: 'Invalid', message: namespaced.errors.map((e) => e.message).join('; ') };
    }
    const labels = ownerLabels(input.owner);
    const renderedCrdKinds = new Set<string>();
    const renderedNamespaces = new Set<string>();
    for (const { object } of namespaced.objects) {
      const ref = objectRef(object);
      if (ref.group === 'apiextensions.k8s.io' && ref.kind === 'CustomResourceDefinition') {
        const spec = object.spec as { group?: string; names?: { kind?: string } } | undefined;
        renderedCrdKinds.add(`${spec?.group}/${spec?.names?.kind}`);
      }
      if (ref.group === '' && ref.kind === 'Namespace') renderedNamespaces.add(ref.name);
    }
    const objects: Planned[] = namespaced.objects.map((rendered) => {
      const ref = objectRef(rendered.object);
      return {
        id: objectId(ref),
        stage: stageOf(ref),
        rendered,
        desired: withOwnerLabels(rendered.object, labels),
        deferred: false,
      };
    });
    const selector = Object.entries(labels)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const live = await listOwned(client, objects, selector, deadline);
    const invalid: string[] = [];
    const missingNamespaces = new Set<string>();
    const gate = async (p: Planned): Promise<void> => {
      checkDeadline(deadline);
      const ns = p.desired.metadata.namespace;
      if (ns !== undefined && missingNamespaces.has(ns)) {
        // Its namespace comes with this render and does not exist yet: nothing to read, and
        // the API server cannot dry-run it before the namespace exists.
        p.deferred = true;
        p.fresh = true;
        return;
      }
      p.live = live.get(p.id);
      if (!p.live) {
        try {
          p.live = await client.raw.getRaw<KubernetesObject & LiveObject>(
            probeFor(
              p.desired.apiVersion,
              p.desired.kind,
              p.desired.metadata.namespace,
              p.desired.metadata.name,
            ),
          );
        } catch (err) {
          const e = normalizeKubeError(err);
          if (isUnreachable(e)) throw e;
          // NotFound (to be created) or a kind not served yet: the dry-run tells which.
        }
      }
      const ref = objectRef(p.desired);
      const fromRender =
        renderedCrdKinds.has(`${ref.group}/${ref.kind}`) ||
        (ref.namespace !== undefined && renderedNamespaces.has(ref.namespace) && !p.live);
      const outcome = await dryRun(client, p);
      if (outcome === 'ok') return;
      if (outcome.reason === 'Unreachable') throw outcome.error;
      if (fromRender && (outcome.reason === 'UnknownKind' || outcome.reason === 'NotFound')) {
        p.deferred = true;
        return;
      }
      if (outcome.reason === 'Invalid' || outcome.reason === 'UnknownKind') {
        invalid.push(`${where(p)}: ${outcome.error.message}`);
        return;
      }
      p.failure = `${where(p)}: ${outcome.error.message}`;
      p.conflict = outcome.reason === 'Conflict';
    };
    // CRDs and Namespaces first: what they tell decides how the rest is gated.
    const early = objects.filter((p) => p.stage <= 1);
    await mapBounded(early, input.concurrency ?? 16, gate);
    for (const p of early) {
      if (p.desired.kind === 'Namespace' && !p.live) missingNamespaces.add(p.desired.metadata.name);
    }
    await mapBounded(
      objects.filter((p) => p.stage > 1),
      input.concurrency ?? 16,
      gate,
    );
    if (invalid.length > 0) return { ok: false, reason: 'Invalid', message: invalid.sort().join('; ') };
    return { ok: true, input, stored, objects };
  } catch (err) {
    return failedPlan(err);
  }
}

function failedPlan(err: unknown): ClusterPlan {
  if (err instanceof ApplyTimeoutError) return { ok: false, reason: 'Unreachable', message: err.message };
  const e = normalizeKubeError(err);
  return { ok: false, reason: isUnreachable(e) ? 'Unreachable' : 'Failed', message: e.message };
}

type DryRunOutcome =
  | 'ok'
  | {
      readonly reason: 'Invalid' | 'UnknownKind' | 'NotFound' | 'Conflict' | 'Unreachable' | 'Other';
      readonly error: KubeError;
    };

/** Dry-runs `p` (after the ownership rule) and decides its action from the answer. */
async function dryRun(client: ClusterClient, p: Planned): Promise<DryRunOutcome> {
  const plan = planOwnership(p.desired, p.live, FieldManager.delivery);
  p.send = plan.object;
  p.force = plan.force;
  p.yielded = plan.yielded.map((c) => `${c.path} (${c.manager})`);
  try {
    const result = await serverSideApply(client, plan.object, {
      fieldManager: FieldManager.delivery,
      force: plan.force,
      dryRun: true,
    });
    p.result = result as LiveObject;
    p.action = !p.live ? 'create' : hasDrifted(result, p.live) ? 'configure' : 'unchanged';
    return 'ok';
  } catch (err) {
    const error = normalizeKubeError(err);
    if (isUnreachable(error)) return { reason: 'Unreachable', error };
    if (isUnknownKind(error)) return { reason: 'UnknownKind', error };
    // A value of the wrong type or a field the schema does not declare: the apply handler fails
    // building the typed patch and answers 500, not 422 (kubernetes#109212), so match the text.
    if (TYPED_PATCH_FAILED.test(error.message)) return { reason: 'Invalid', error };
    switch (error.reason) {
      case 'Invalid':
      case 'BadRequest':
        return { reason: 'Invalid', error };
      case 'NotFound':
        return { reason: 'NotFound', error };
      case 'Conflict':
        return { reason: 'Conflict', error };
      default:
        return { reason: 'Other', error };
    }
  }
}

/** Polls the rendered CRDs until each is Established (or the wait runs out). */
async function waitEstablished(
  client: ClusterClient,
  crds: readonly Planned[],
  until: number,
): Promise<string[]> {
  let pending = crds.filter((p) => !p.failure);
  while (pending.length > 0) {
    const still: Planned[] = [];
    for (const p of pending) {
      try {
        const live = await client.raw.getRaw<KubernetesObject & LiveObject>(
          probeFor(p.desired.apiVersion, p.desired.kind, undefined, p.desired.metadata.name),
        );
        p.result = live;
        if (objectHealth(live).status !== 'Current') still.push(p);
      } catch (err) {
        if (isUnreachable(err)) throw normalizeKubeError(err);
        still.push(p);
      }
    }
    pending = still;
    if (pending.length === 0 || Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 250));
  }
  return pending.map((p) => `${where(p)}: not Established in time`);
}

/** Looks up the live state of inventory entries that left the render (for prune). */
async function liveStates(
  client: ClusterClient,
  entries: readonly InventoryEntry[],
  concurrency: number,
): Promise<Map<string, LiveState>> {
  const states = new Map<string, LiveState>();
  await mapBounded(entries, concurrency, async (entry) => {
    const ref = parseObjectId(entry.id);
    if (!ref) {
      states.set(entry.id, { state: 'Unknown', reason: 'unparseable inventory id' });
      return;
    }
    const apiVersion = ref.group ? `${ref.group}/${entry.version}` : entry.version;
    try {
      const live = await client.raw.getRaw(probeFor(apiVersion, ref.kind, ref.namespace, ref.name));
      states.set(entry.id, {
        state: 'Present',
        labels: live.metadata?.labels,
        annotations: live.metadata?.annotations,
      });
    } catch (err) {
      const e = normalizeKubeError(err);
      if (isUnreachable(e)) throw e;
      if (isNotFound(e) || isUnknownKind(e)) states.set(entry.id, { state: 'Absent' });
      else states.set(entry.id, { state: 'Unknown', reason: e.message });
    }
  });
  return states;
}

async function deleteEntry(client: ClusterClient, entry: InventoryEntry): Promise<void> {
  const ref = parseObjectId(entry.id);
  if (!ref) return;
  const apiVersion = ref.group ? `${ref.group}/${entry.version}` : entry.version;
  try {
    await client.raw.deleteRaw(probeFor(apiVersion, ref.kind, ref.namespace, ref.name));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

const MAX_LISTED = 10;

function bounded(list: readonly string[]): string[] {
  return list.length <= MAX_LISTED
    ? [...list]
    : [...list.slice(0, MAX_LISTED), `and ${list.length - MAX_LISTED} more`];
}

/** What prune would do after a plan is applied. */
export type PrunePreview =
  | { readonly kind: 'disabled' }
  /** Nothing would be pruned because something is in doubt (the inventory could not be read). */
  | { readonly kind: 'skipped'; readonly reason: string }
  | { readonly kind: 'planned'; readonly plan: PrunePlan };

/**
 * Decides what prune would do for `plan`: the inventory entries that left the render, their
 * live state looked up (reads only), passed through `pruneSet`. Used by {@link executePlan}
 * before it deletes, and by `sluice diff` to show what would be deleted. An unreadable
 * inventory prunes nothing; with nothing stale no request is sent. Throws only when the
 * cluster cannot be reached or `deadline` (epoch ms) has passed before the lookups.
 */
export async function previewPrune(
  plan: Extract<ClusterPlan, { ok: true }>,
  deadline?: number,
): Promise<PrunePreview> {
  const { input, stored, objects } = plan;
  if (!input.prune) return { kind: 'disabled' };
  if (!stored.ok)
    return { kind: 'skipped', reason: `inventory unreadable (${stored.error}); nothing pruned` };
  const renderedIds = new Set(objects.map((p) => p.id));
  const stale = stored.entries.filter((e) => !renderedIds.has(e.id));
  if (stale.length === 0) return { kind: 'planned', plan: { delete: [], release: [], keep: [] } };
  if (deadline !== undefined) checkDeadline(deadline);
  const states = await liveStates(input.client, stale, input.concurrency ?? 16);
  return {
    kind: 'planned',
    plan: pruneSet({
      previous: stored.entries,
      rendered: objects.map((p) => p.desired),
      owner: ownerLabels(input.owner),
      live: (e) => states.get(e.id) ?? { state: 'Unknown', reason: 'not looked up' },
    }),
  };
}

/**
 * Writes a plan: first adds to the inventory every object it may write that the inventory does
 * not hold yet (so that a controller killed half-way leaves nothing untracked); then, per
 * stage, objects whose dry-run differed from live (or that are new) are applied for real —
 * `force` only when the ownership rule says a manual edit must be reverted; rendered CRDs must
 * be Established before the next stage. Then prunes (when `prune`, and only from a readable
 * inventory), records the inventory, and aggregates health from the objects the API server
 * returned. Never throws for one object: failures are collected; throws only when
 * the cluster cannot be reached or `deadline` (default: the plan's) passes.
 */
export async function executePlan(
  plan: Extract<ClusterPlan, { ok: true }>,
  deadline: number = plan.input.deadline,
): Promise<ClusterApplyResult> {
  const { input, stored, objects } = plan;
  const { client } = input;
  const concurrency = input.concurrency ?? 16;
  let writes = 0;
  const changes: ChangeEntry[] = [];

  // Record what this sync may create before creating any of it: a controller killed half-way
  // then leaves an inventory that names every object it may have written, so the next sync
  // prunes them if Git moved on meanwhile, instead of leaving owner-labelled orphans.
  let recorded = stored;
  const known = new Set(stored.entries.map((e) => e.id));
  const adding = objects.filter((p) => !p.failure && !known.has(p.id)).map((p) => inventoryEntry(p.desired));
  if (adding.length > 0) {
    checkDeadline(deadline);
    const intended = nextInventory(stored.entries, adding, []);
    writes += await writeInventory(client, input.owner, intended, stored);
    recorded = writtenInventory(input.owner, intended);
  }

  const stages = [...new Set(objects.map((p) => p.stage))].sort((a, b) => a - b);
  const crdFailures: string[] = [];
  for (const stage of stages) {
    const here = objects.filter((p) => p.stage === stage);
    await mapBounded(here, concurrency, async (p) => {
      checkDeadline(deadline);
      if (p.failure) return;
      if (p.fresh) {
        p.send = p.desired;
        p.action = 'create';
      } else if (p.deferred) {
        const outcome = await dryRun(client, p);
        if (outcome !== 'ok') {
          if (outcome.reason === 'Unreachable') throw outcome.error;
          p.failure = `${where(p)}: ${outcome.error.message}`;
          p.conflict = outcome.reason === 'Conflict';
          return;
        }
      }
      if (p.action === 'unchanged' || !p.send) {
        changes.push({ id: p.id, action: 'unchanged' });
        return;
      }
      try {
        p.result = (await serverSideApply(client, p.send, {
          fieldManager: FieldManager.delivery,
          force: p.force ?? false,
        })) as LiveObject;
        writes += 1;
        changes.push({ id: p.id, action: p.action === 'create' ? 'created' : 'configured' });
      } catch (err) {
        const e = normalizeKubeError(err);
        if (isUnreachable(e)) throw e;
        p.failure = `${where(p)}: ${e.message}`;
        p.conflict = e.reason === 'Conflict';
      }
    });
    if (stage === 0) {
      const crds = here.filter((p) => p.desired.kind === 'CustomResourceDefinition');
      const until = Math.min(deadline, Date.now() + (input.crdTimeoutMs ?? 30_000));
      crdFailures.push(...(await waitEstablished(client, crds, until)));
    }
  }

  const failures = [...objects.flatMap((p) => (p.failure ? [p.failure] : [])), ...crdFailures];
  const applied = objects.filter((p) => !p.failure).map((p) => inventoryEntry(p.desired));

  // Prune: only from an inventory read in full (never destroy on doubt).
  const removed: string[] = [];
  const pruneFailures: string[] = [];
  let pruneKept: PruneNote[] = [];
  let pruneSkipped: string | undefined;
  const preview = await previewPrune(plan, deadline);
  if (preview.kind === 'skipped') {
    pruneSkipped = preview.reason;
  } else if (preview.kind === 'planned') {
    const prunePlan = preview.plan;
    pruneKept = [...prunePlan.keep];
    for (const note of prunePlan.release) removed.push(note.entry.id);
    // In order (webhooks first, CRDs last): sequential on purpose.
    for (const entry of prunePlan.delete) {
      checkDeadline(deadline);
      try {
        await deleteEntry(client, entry);
        writes += 1;
        removed.push(entry.id);
        changes.push({ id: entry.id, action: 'deleted' });
      } catch (err) {
        const e = normalizeKubeError(err);
        if (isUnreachable(e)) throw e;
        pruneFailures.push(`${entry.id}: ${e.message}`);
      }
    }
  }

  const next = nextInventory(stored.entries, applied, removed);
  writes += await writeInventory(client, input.owner, next, recorded);

  const health = aggregateHealth(
    objects.filter((p) => !p.failure).map((p) => ({ id: p.id, health: objectHealth(p.result ?? p.live) })),
  );
  const yielded = objects.flatMap((p) => (p.yielded ?? []).map((y) => `${p.id} ${y}`));
  return {
    changes,
    summary: diffSummary(changes),
    failures: bounded(failures.sort()),
    yielded: bounded(yielded),
    pruneFailures: bounded(pruneFailures),
    pruneKept,
    ...(pruneSkipped ? { pruneSkipped } : {}),
    inventorySize: next.length,
    health,
    writes,
  };
}

/**
 * Removes a Delivery from a cluster that left its placement: deletes every inventoried object
 * whose live copy still carries the owner labels (and does not opt out of pruning), in reverse
 * stage order, then deletes the inventory. An unreadable inventory deletes nothing; objects that
 * could not be deleted stay in a rewritten inventory for the next attempt.
 */
export async function removeFromCluster(
  client: ClusterClient,
  owner: DeliveryOwner,
  concurrency = 16,
): Promise<ClusterRemoveResult> {
  const stored = await readInventory(client, owner);
  if (!stored.ok) {
    return { done: false, deleted: 0, message: `inventory unreadable (${stored.error}); nothing pruned` };
  }
  const states = await liveStates(client, stored.entries, concurrency);
  const labels = ownerLabels(owner);
  const order = (e: InventoryEntry): number => {
    const ref = parseObjectId(e.id);
    return ref ? -stageOf(ref) : 0;
  };
  const entries = [...stored.entries].sort((a, b) => order(a) - order(b));
  const left: InventoryEntry[] = [];
  const failures: string[] = [];
  let deleted = 0;
  let released = 0;
  for (const entry of entries) {
    const live = states.get(entry.id);
    if (!live || live.state === 'Unknown') {
      left.push(entry);
      failures.push(`${entry.id}: live state unknown`);
      continue;
    }
    if (
      live.state === 'Absent' ||
      !carriesOwnerLabels(live.labels, labels) ||
      live.annotations?.[PRUNE_ANNOTATION] === 'disabled'
    ) {
      released += live.state === 'Absent' ? 0 : 1;
      continue;
    }
    try {
      await deleteEntry(client, entry);
      deleted += 1;
    } catch (err) {
      const e = normalizeKubeError(err);
      if (isUnreachable(e)) throw e;
      left.push(entry);
      failures.push(`${entry.id}: ${e.message}`);
    }
  }
  if (left.length === 0) {
    await deleteInventory(client, stored);
    const kept = released ? `, ${released} left in place (owner labels removed or pruning disabled)` : '';
    return {
      done: true,
      deleted,
      message: `removed from placement: ${deleted} objects pruned${kept}, inventory deleted`,
    };
  }
  await writeInventory(client, owner, left, stored);
  return {
    done: false,
    deleted,
    message: `removed from placement: ${deleted} objects pruned, ${left.length} not yet: ${bounded(failures).join('; ')}`,
  };
}
