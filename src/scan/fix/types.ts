/**
 * The vocabulary of the removed-API fixer: what a rewrite of one object can say. A rewrite is
 * a pure function of the object; it either produces the replacement object (plus notes a person
 * should read) or refuses with FLAGs, each naming the field and the reason no mapping is safe.
 * A flagged object is never partly rewritten: it stays byte-identical in the file.
 */

/** A path into an object, e.g. `['spec', 'rules', 0, 'http']`. */
export type FieldPath = readonly (string | number)[];

/** A JSON object as it appears in a manifest. */
export type JsonObject = { [key: string]: unknown };

/** A Kubernetes manifest document: at least `apiVersion` and `kind`. */
export interface Manifest extends JsonObject {
  apiVersion: string;
  kind: string;
}

/** Why an object (or one of its fields) cannot be rewritten without a human decision. */
export interface Flag {
  readonly path: FieldPath;
  readonly reason: string;
}

/**
 * Something the rewrite did that a reviewer should know about. With `comment`, the text is
 * also written next to the field in the YAML, so the reason stays with the file.
 */
export interface Note {
  readonly path: FieldPath;
  readonly text: string;
  readonly comment?: boolean;
}

/**
 * A subtree the rewrite moved (`validation` → `versions[0].schema`): the YAML writer starts the
 * new place from the old node, so comments inside it survive even when the content changed.
 * The source must not stay where it was (the first destination takes the node itself).
 */
export interface Move {
  readonly from: FieldPath;
  readonly to: FieldPath;
}

/** The outcome of rewriting one object. */
export type RewriteResult =
  | {
      readonly ok: true;
      readonly object: Manifest;
      readonly notes: readonly Note[];
      readonly moves?: readonly Move[];
    }
  | { readonly ok: false; readonly flags: readonly Flag[] };

/** A mechanical rewrite of one object into `to`. Pure: never mutates its argument. */
export interface Rewrite {
  /** The apiVersion the rewrite produces. */
  readonly to: string;
  /**
   * True when the result is also valid under an interim apiVersion of the same kind (a plain
   * rename, flowcontrol v1beta3), so a target that does not serve `to` yet gets the interim one.
   */
  readonly retargetable?: boolean;
  readonly rewrite: (obj: Manifest) => RewriteResult;
}

export const isObject = (v: unknown): v is JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `path` as a field path string: `spec.rules[0].http`. */
export function formatPath(path: FieldPath): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out === '' ? p : `.${p}`;
  return out || '.';
}

/** A copy of `obj` with `from` renamed to `to` (holding `value`) in the same key position. */
export function renameKey(obj: JsonObject, from: string, to: string, value: unknown): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === from) out[to] = value;
    else if (k !== to) out[k] = v;
  }
  if (!(from in obj)) out[to] = value;
  return out;
}

/** A copy of `obj` with `key` inserted right after `after` (or at the end). */
export function insertAfter(obj: JsonObject, after: string, key: string, value: unknown): JsonObject {
  if (!(after in obj)) return { ...obj, [key]: value };
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(obj)) {
    if (k === key) continue;
    out[k] = v;
    if (k === after) out[key] = value;
  }
  return out;
}

/** An object rewritten with only its apiVersion changed (the kinds whose shape did not change). */
export function withApiVersion(obj: Manifest, apiVersion: string): Manifest {
  return { ...structuredClone(obj), apiVersion };
}
