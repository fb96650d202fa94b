/**
 * Drift and field ownership: whether a server-side dry-run result differs from the live object,
 * and which fields of a rendered object Sluice must leave to another field manager. Pure: the
 * applier reads live objects and sends the requests.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Manifest } from './objects.js';

/**
 * Metadata the API server changes on every write or sets itself; a difference there is not
 * drift (a dry-run bumps none of them in a way that matters, but they never match a live copy
 * byte for byte: managedFields carry times, resourceVersion changes on any write).
 */
export const VOLATILE_METADATA: readonly string[] = [
  'managedFields',
  'resourceVersion',
  'generation',
  'uid',
  'creationTimestamp',
];

type Json = Record<string, unknown>;

const isMap = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `obj` without `status` and without the {@link VOLATILE_METADATA} fields; `obj` is not modified. */
export function comparable(obj: unknown): unknown {
  if (!isMap(obj)) return obj;
  const { status: _status, metadata, ...rest } = obj;
  if (!isMap(metadata)) return rest;
  const meta: Json = { ...metadata };
  for (const f of VOLATILE_METADATA) delete meta[f];
  return { ...rest, metadata: meta };
}

/**
 * True when writing would change the object: the server-side dry-run result (what the object
 * would become) differs from the live object outside status and volatile metadata. A missing
 * live object has always drifted. This is what makes a no-op resync cost zero writes.
 */
export function hasDrifted(dryRun: unknown, live: unknown): boolean {
  if (live === undefined || live === null) return true;
  return !isDeepStrictEqual(comparable(dryRun), comparable(live));
}

// ---------------------------------------------------------------------------------------------
// Field ownership

/** One entry of `metadata.managedFields`, as the API server returns it. */
export interface ManagedFieldsEntry {
  readonly manager?: string;
  readonly operation?: string;
  readonly subresource?: string;
  readonly fieldsV1?: unknown;
}

/** A field (dotted path, list items by key) and the other manager holding it. */
export interface FieldClaim {
  readonly path: string;
  readonly manager: string;
}

/** What to send for one object, after looking at who else owns its fields. */
export interface OwnershipPlan {
  /** The object to apply: the rendered one minus {@link yielded} fields. */
  readonly object: Manifest;
  /** Fields left to another declarative owner (dropped from the apply). */
  readonly yielded: readonly FieldClaim[];
  /** Fields an imperative edit took over; applying with `force` reverts them. */
  readonly reverted: readonly FieldClaim[];
  /** Apply with `force: true`: only when something must be reverted, and never over a yielded field. */
  readonly force: boolean;
}

/**
 * Whether `entry` is an owner Sluice defers to rather than drift it corrects:
 * - another server-side **apply** manager (`sluice-rollout` owning weights, an autoscaler that
 *   applies `spec.replicas`, any GitOps-aware controller): it declared intent for the field;
 * - any manager writing through the **`scale` subresource** (the HorizontalPodAutoscaler
 *   controller, `kubectl scale`): replicas belong to the autoscaler.
 * Everything else — `Update` operations on the object itself (`kubectl edit`, `kubectl patch`,
 * client-side apply, scripts) — is a manual edit: drift, reverted on the next sync.
 */
export function isDeclarativeOwner(entry: ManagedFieldsEntry): boolean {
  return entry.operation === 'Apply' || entry.subresource === 'scale';
}

/**
 * Decides what to apply given the live object's `managedFields` (the HPA rule, generalised):
 * 1. every leaf field of `desired` that a *declarative* other owner ({@link isDeclarativeOwner})
 *    holds is dropped from the apply, so Sluice neither conflicts with nor fights it — e.g. an
 *    autoscaler owning `spec.replicas` keeps scaling the Deployment Git declares with 2 replicas;
 * 2. leaf fields an *imperative* other manager holds (a manual edit) are kept, and the apply is
 *    forced so that the edit is reverted — which is safe because after step 1 no field sent is
 *    held by a declarative owner.
 * Status-subresource entries are ignored (status is never applied). Keys that identify list
 * items (`name` in `containers`) are never dropped, only leaves inside items. A missing live
 * object means nothing is owned yet: the object is applied unchanged, without force.
 */
export function planOwnership(
  desired: Manifest,
  live: { readonly metadata?: Readonly<Record<string, unknown>> } | undefined,
  fieldManager: string,
): OwnershipPlan {
  const entries = Array.isArray(live?.metadata?.managedFields)
    ? (live.metadata.managedFields as ManagedFieldsEntry[])
    : [];
  const others = entries.filter(
    (e) => e.manager !== fieldManager && e.subresource !== 'status' && isMap(e.fieldsV1),
  );
  if (others.length === 0) return { object: desired, yielded: [], reverted: [], force: false };

  const yielded: FieldClaim[] = [];
  const reverted: FieldClaim[] = [];
  let object: unknown = desired;
  for (const e of others) {
    const manager = e.manager ?? '(unnamed)';
    if (isDeclarativeOwner(e)) {
      object = dropOwned(object, e.fieldsV1 as Json, '', (path) => yielded.push({ path, manager }));
    } else {
      visitOwned(object, e.fieldsV1 as Json, '', (path) => reverted.push({ path, manager }));
    }
  }
  // A field yielded to one manager and edited by another is not sent, so it is not reverted.
  const gone = new Set(yielded.map((c) => c.path));
  const revert = reverted.filter((c) => !gone.has(c.path));
  return { object: object as Manifest, yielded, reverted: revert, force: revert.length > 0 };
}

/** The desired list item a `k:{...}` key names, by matching every key field. */
function matchesKey(item: unknown, key: string): boolean {
  if (!key.startsWith('k:') || !isMap(item)) return false;
  let fields: unknown;
  try {
    fields = JSON.parse(key.slice(2));
  } catch {
    return false;
  }
  return isMap(fields) && Object.entries(fields).every(([k, v]) => isDeepStrictEqual(item[k], v));
}

/** True when a FieldsV1 node marks a leaf (no `f:`/`k:`/`v:`/`i:` children). */
function isLeaf(node: unknown): boolean {
  return isMap(node) && !Object.keys(node).some((k) => /^[fkvi]:/.test(k));
}

function keyFieldsOf(key: string): Set<string> {
  try {
    const parsed: unknown = JSON.parse(key.slice(2));
    return new Set(isMap(parsed) ? Object.keys(parsed) : []);
  } catch {
    return new Set();
  }
}

/** Calls `found` with the path of every leaf of `value` that `owned` (FieldsV1) holds. */
function visitOwned(value: unknown, owned: Json, path: string, found: (path: string) => void): void {
  void dropOwned(value, owned, path, found, false);
}

/**
 * A copy of `value` without the leaves `owned` holds (when `drop`), reporting each one. Objects
 * recurse by `f:` keys; arrays by `k:` item keys (the item itself and its key fields are kept).
 */
function dropOwned(
  value: unknown,
  owned: Json,
  path: string,
  found: (path: string) => void,
  drop = true,
  keep: ReadonlySet<string> = new Set(),
): unknown {
  if (isMap(value)) {
    let out: Json | undefined;
    for (const [k, v] of Object.entries(value)) {
      const node = owned[`f:${k}`];
      if (node === undefined || keep.has(k)) continue;
      const here = path ? `${path}.${k}` : k;
      if (isLeaf(node) && !isMap(v)) {
        found(here);
        if (drop) {
          out ??= { ...value };
          delete out[k];
        }
      } else if (isMap(node)) {
        const next = dropOwned(v, node, here, found, drop);
        if (next !== v) {
          out ??= { ...value };
          out[k] = next;
        }
      }
    }
    return out ?? value;
  }
  if (Array.isArray(value)) {
    const itemKeys = Object.keys(owned).filter((k) => k.startsWith('k:'));
    if (itemKeys.length === 0) return value;
    let changed = false;
    const items = value.map((item) => {
      const key = itemKeys.find((k) => matchesKey(item, k));
      const node = key === undefined ? undefined : owned[key];
      if (key === undefined || !isMap(node)) return item;
      const next = dropOwned(item, node, `${path}[${key.slice(2)}]`, found, drop, keyFieldsOf(key));
      if (next !== item) changed = true;
      return next;
    });
    return changed ? items : value;
  }
  return value;
}
