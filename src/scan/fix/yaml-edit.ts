/**
 * Writes a rewritten object back into its YAML document while keeping everything a person wrote
 * that did not change: comments, key order, quoting and flow style of untouched nodes, and —
 * byte for byte — every other document of the file. Pure.
 *
 * A changed document is updated node by node (`reconcileNode`): a key that is still there keeps
 * its node (and comments); a value that moved elsewhere unchanged (a CRD's `validation` subtree
 * becoming a version's `schema`) is found again by content and reused with its comments. Only the
 * changed documents are re-printed by the `yaml` library; the others are copied from the input.
 */
import {
  Document,
  isMap,
  isAlias,
  isScalar,
  isSeq,
  LineCounter,
  Pair,
  parseAllDocuments,
  Scalar,
  YAMLMap,
  YAMLSeq,
  type Node,
  type ToStringOptions,
} from 'yaml';
import type { FieldPath, Move } from './types.js';

/**
 * The original document's collections by a hash of their content. Hashes are built bottom-up
 * (a node's hash from its children's), so indexing is linear in the document's size; a hit is
 * confirmed by comparing the content itself.
 */
type ContentIndex = Map<string, Node>;

const contentKey = (value: unknown): string => JSON.stringify(value);

/** FNV-1a, 32 bits, as 8 hex digits: short, so parents hash their children's hashes cheaply. */
function fnv(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, '0');
}

const scalarHash = (v: unknown): string => fnv(`s${JSON.stringify(v ?? null)}`);

/** The hash of a YAML node's content, indexing every non-empty collection on the way. */
function indexContent(node: unknown, index: ContentIndex): string {
  if (isMap(node)) {
    const parts = node.items.map((p) => `${fnv(keyOf(p as Pair))}${indexContent((p as Pair).value, index)}`);
    const h = fnv(`m${parts.join('')}`);
    if (node.items.length > 0 && !index.has(h)) index.set(h, node);
    return h;
  }
  if (isSeq(node)) {
    const h = fnv(`q${node.items.map((i) => indexContent(i, index)).join('')}`);
    if (node.items.length > 0 && !index.has(h)) index.set(h, node);
    return h;
  }
  if (isAlias(node)) return fnv(`a${String(node.source)}`); // never equal to a value's hash
  return scalarHash(isScalar(node) ? node.value : node);
}

/** The same hash for a plain value, memoized per object (a subtree is hashed once). */
function valueHash(value: unknown, memo: WeakMap<object, string>): string {
  if (typeof value !== 'object' || value === null) return scalarHash(value);
  const known = memo.get(value);
  if (known) return known;
  const h = Array.isArray(value)
    ? fnv(`q${value.map((v) => valueHash(v, memo)).join('')}`)
    : fnv(
        `m${Object.entries(value)
          .map(([k, v]) => `${fnv(k)}${valueHash(v, memo)}`)
          .join('')}`,
      );
  memo.set(value, h);
  return h;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function keyOf(pair: Pair): string {
  return isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
}

/** What reconciling one document needs besides the value. */
interface Context {
  readonly doc: Document;
  readonly index: ContentIndex;
  /** Clones of moved original nodes, by the path they move to. */
  readonly moved: Map<string, Node>;
  /** The comment above a moved key (`# why` over `backend:`), by the path it moves to. */
  readonly keyComments: Map<string, string>;
  readonly hashes: WeakMap<object, string>;
}

const pathKey = (path: FieldPath): string => JSON.stringify(path);

/** A node for `value` at `path`: the moved original, a clone of an original node with that content, or a fresh one. */
function build(ctx: Context, value: unknown, path: FieldPath): Node {
  const moved = ctx.moved.get(pathKey(path));
  if (moved) return reconcileNode(ctx, moved, value, path);
  if ((isPlainObject(value) || Array.isArray(value)) && Object.keys(value).length > 0) {
    const found = ctx.index.get(valueHash(value, ctx.hashes));
    // A hash can collide, and the tree is reconciled in place (an indexed node may have changed
    // since): compare the content itself before reusing the node.
    if (found && contentKey(found.toJSON()) === contentKey(value)) {
      const copy = found.clone() as Node & { anchor?: string };
      // The original keeps its anchor; a second `&name` would be an error.
      delete copy.anchor;
      return copy;
    }
  }
  if (isPlainObject(value)) {
    const map = new YAMLMap(ctx.doc.schema);
    for (const [k, v] of Object.entries(value)) {
      map.items.push(new Pair(ctx.doc.createNode(k), build(ctx, v, [...path, k])));
    }
    return map;
  }
  if (Array.isArray(value)) {
    const seq = new YAMLSeq(ctx.doc.schema);
    value.forEach((v, i) => seq.items.push(build(ctx, v, [...path, i])));
    return seq;
  }
  return ctx.doc.createNode(value) as Node;
}

/** `node` updated in place to hold `value` where it can be, else a node built for `value`. */
function reconcileNode(ctx: Context, node: unknown, value: unknown, path: FieldPath): Node {
  if (isAlias(node)) {
    // `*ref` still says the same thing when what it points at did not change.
    const target = node.resolve(ctx.doc);
    if (target && contentKey(target.toJSON()) === contentKey(value)) return node;
    return build(ctx, value, path);
  }
  if (isPlainObject(value) && isMap(node)) {
    const pairs = new Map<string, Pair>();
    for (const item of node.items) pairs.set(keyOf(item as Pair), item as Pair);
    node.items = Object.entries(value).map(([k, v]) => {
      const pair = pairs.get(k);
      const at = [...path, k];
      if (pair && !ctx.moved.has(pathKey(at))) {
        pair.value = reconcileNode(ctx, pair.value, v, at);
        return pair;
      }
      const key = ctx.doc.createNode(k) as Scalar;
      const comment = ctx.keyComments.get(pathKey(at));
      if (comment) key.commentBefore = comment;
      return new Pair(key, build(ctx, v, at));
    });
    return node;
  }
  if (Array.isArray(value) && isSeq(node)) {
    node.items = value.map((v, i) =>
      ctx.moved.has(pathKey([...path, i]))
        ? build(ctx, v, [...path, i])
        : reconcileNode(ctx, node.items[i], v, [...path, i]),
    );
    return node;
  }
  if (!isPlainObject(value) && !Array.isArray(value) && isScalar(node)) {
    if (node.value === value) return node;
    const fresh = ctx.doc.createNode(value) as Scalar;
    // A comment on the changed line (`apiVersion: extensions/v1beta1  # old`) stays with it.
    if (node.comment) fresh.comment = node.comment;
    if (node.commentBefore) fresh.commentBefore = node.commentBefore;
    return fresh;
  }
  return build(ctx, value, path);
}

/** A rewritten document: the new value and the comments to put next to fields. */
export interface DocumentEdit {
  readonly docIndex: number;
  readonly value: unknown;
  readonly comments: ReadonlyArray<{ readonly path: FieldPath; readonly text: string }>;
  readonly moves?: readonly Move[];
}

/**
 * Whether the original text indents block sequences under their key (`key:\n  - item`); kubectl
 * and most Kubernetes manifests do not (`key:\n- item`), so that is the default.
 */
function indentsSequences(text: string): boolean {
  const flat = /^( *)[^\s#-][^\n]*:[ \t]*\n\1- /m.test(text);
  const indented = /^( *)[^\s#-][^\n]*:[ \t]*\n\1 {2}- /m.test(text);
  return indented && !flat;
}

/** Parses a text the way the fixer edits it (documents keep their source ranges). */
export function parseDocuments(text: string): { docs: Document.Parsed[]; lineCounter: LineCounter } {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, keepSourceTokens: false, uniqueKeys: false });
  return { docs: Array.isArray(docs) ? docs : [], lineCounter };
}

/**
 * `text` with the documents in `edits` replaced by their new values. Every document not edited,
 * and whatever sits between documents, is copied byte for byte.
 */
export function applyEdits(
  text: string,
  docs: readonly Document.Parsed[],
  edits: readonly DocumentEdit[],
): string {
  if (edits.length === 0) return text;
  const options: ToStringOptions = {
    lineWidth: 0,
    indentSeq: indentsSequences(text),
    flowCollectionPadding: false,
  };
  const byIndex = new Map(edits.map((e) => [e.docIndex, e]));
  // A document's span runs from its start (the `---`, or 0 for the first) to the next one's.
  const starts = docs.map((d, i) => (i === 0 ? 0 : d.range[0]));
  let out = '';
  docs.forEach((doc, i) => {
    const start = starts[i]!;
    const end = i + 1 < docs.length ? starts[i + 1]! : text.length;
    const edit = byIndex.get(i);
    if (!edit) {
      out += text.slice(start, end);
      return;
    }
    const index: ContentIndex = new Map();
    indexContent(doc.contents, index);
    const moved = new Map<string, Node>();
    const keyComments = new Map<string, string>();
    const taken = new Set<unknown>();
    for (const m of edit.moves ?? []) {
      const from = doc.getIn(m.from, true);
      // A move's source leaves its old place, so its first destination takes the node itself.
      if (isMap(from) || isSeq(from))
        moved.set(pathKey(m.to), taken.has(from) ? (from.clone() as Node) : from);
      taken.add(from);
      const parent = doc.getIn(m.from.slice(0, -1), true);
      const pair = isMap(parent)
        ? parent.items.find((p) => keyOf(p as Pair) === String(m.from.at(-1)))
        : undefined;
      const comment = pair && isScalar(pair.key) ? pair.key.commentBefore : undefined;
      if (comment) keyComments.set(pathKey(m.to), comment);
    }
    const ctx: Context = { doc, index, moved, keyComments, hashes: new WeakMap() };
    doc.contents = reconcileNode(ctx, doc.contents, edit.value, []) as typeof doc.contents;
    for (const c of edit.comments) {
      const node = doc.getIn(c.path, true);
      if (isScalar(node) && !node.comment) node.comment = ` ${c.text}`;
    }
    let printed = doc.toString(options);
    // Keep the original's separation from the next document (a trailing blank line, `...`).
    const original = text.slice(start, end);
    const trailing = /(\r?\n)*$/.exec(original)?.[0] ?? '';
    printed = printed.replace(/\n*$/, trailing.length > 0 ? trailing : '');
    if (original.includes('\r\n')) printed = printed.replace(/\r?\n/g, '\r\n');
    out += printed;
  });
  return out;
}
