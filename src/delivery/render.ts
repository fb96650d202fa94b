/**
 * Turns a directory of an artifact checkout into the list of objects a Delivery applies.
 * Reads files, never writes them, never talks to a cluster; the only outside process it can
 * start is a kustomize runner the caller injects.
 */
import { lstat, readFile, readdir, readlink, realpath, stat } from 'node:fs/promises';
import { extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { LineCounter, parseAllDocuments, type Document } from 'yaml';
import { findDuplicates, type Manifest, type RenderedObject } from './objects.js';
import { RenderError, type Location, type Origin } from './render-error.js';

/** Runs `kustomize build` on an absolute directory and returns its multi-document YAML output. */
export type KustomizeRunner = (dir: string) => Promise<string>;

/** Seams for what plain-YAML rendering cannot do itself. */
export interface RenderOptions {
  /** Without it, a directory holding a kustomization file yields a `NeedsKustomize` result. */
  readonly kustomize?: KustomizeRunner;
}

/** A file with a manifest extension that render deliberately did not turn into objects. */
export interface SkippedFile {
  readonly file: string;
  readonly reason: string;
}

/**
 * The outcome of a render. Only `ok: true` describes the desired state, and even then only when
 * `objects` is non-empty may it drive a prune (see {@link safeToPrune}). `NeedsKustomize` means
 * the directory (or a sub-directory) is a kustomization and no runner was given; its `errors`
 * hold one `NeedsKustomize` error per kustomization plus any other problem found.
 */
export type RenderResult =
  | {
      readonly ok: true;
      readonly objects: readonly RenderedObject[];
      readonly skipped: readonly SkippedFile[];
    }
  | { readonly ok: false; readonly reason: 'Invalid'; readonly errors: readonly RenderError[] }
  | {
      readonly ok: false;
      readonly reason: 'NeedsKustomize';
      /** Kustomization files, relative to the root, that need `kustomize build`. */
      readonly kustomizations: readonly string[];
      readonly errors: readonly RenderError[];
    };

/**
 * True only for a successful, non-empty render. "Never destroy on doubt" (DESIGN.md): a failed
 * render, a kustomization nobody built, or an empty directory (a bad path, a half-pushed
 * commit) must never delete what runs.
 */
export function safeToPrune(result: RenderResult): boolean {
  return result.ok && result.objects.length > 0;
}

/**
 * Why `result` must not drive an apply, one line per problem for a person to fix: the render's
 * errors (each starting `file:line:col`), or a note that `path` rendered no objects. Empty only
 * when {@link safeToPrune} holds. The controller's `BuildFailed` message and `sluice diff` both
 * come from this list.
 */
export function renderProblems(result: RenderResult, path: string | undefined): string[] {
  if (!result.ok) return result.errors.map((e) => e.message);
  if (result.objects.length === 0) {
    return [`path ${path} holds no objects (an empty render never applies or prunes)`];
  }
  return [];
}

/** Names kustomize itself recognises (konfig.RecognizedKustomizationFileNames). */
const KUSTOMIZATION_FILES: readonly string[] = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const MANIFEST_EXTENSIONS: ReadonlySet<string> = new Set(['.yaml', '.yml', '.json']);

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function isWithin(root: string, candidate: string): boolean {
  const rel = relative(root, candidate);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

const toPosix = (p: string): string => p.split(sep).join('/');

interface Walk {
  readonly rootReal: string;
  readonly opts: RenderOptions;
  readonly objects: RenderedObject[];
  readonly errors: RenderError[];
  readonly skipped: SkippedFile[];
  readonly kustomizations: string[];
  /** Real paths of directories entered, so a symlink cycle is walked once. */
  readonly visited: Set<string>;
}

/**
 * Renders `path` (relative to `root`; a leading `/` also means the root, as Flux reads it)
 * into objects, recursively, in a deterministic order (entries sorted by code point):
 * - `.yaml`, `.yml` and `.json` files, every document of a multi-document file;
 * - `kind: List` (and any `*List` kind with an `items` array) expanded into its items;
 * - empty documents skipped; a file in which no document has `apiVersion` or `kind` is not a
 *   manifest (a Helm values file, say) and is listed in `skipped`; hidden entries are ignored;
 * - a directory holding a kustomization file is rendered by `opts.kustomize` and not walked.
 * Every problem is collected, not just the first: invalid YAML, a document that is not a
 * mapping, a missing `apiVersion`/`kind`/`metadata.name`, an object defined twice (naming both
 * places), and `path` or a symlink leading outside `root`.
 */
export async function renderDirectory(
  root: string,
  path: string,
  opts: RenderOptions = {},
): Promise<RenderResult> {
  const pathLoc: Location = { file: path };
  const fail = (code: RenderError['code'], detail: string, cause?: unknown): RenderResult => ({
    ok: false,
    reason: 'Invalid',
    errors: [new RenderError(code, pathLoc, detail, { cause })],
  });

  let rootReal: string;
  try {
    rootReal = await realpath(root);
  } catch (err) {
    return fail('PathNotFound', `artifact root ${root} cannot be read`, err);
  }
  const target = resolve(rootReal, path.replace(/^\/+/, ''));
  if (!isWithin(rootReal, target)) return fail('PathEscapesRoot', 'path leads outside the artifact root');

  let targetReal: string;
  try {
    targetReal = await realpath(target);
  } catch (err) {
    return fail('PathNotFound', 'path does not exist in the artifact', err);
  }
  if (!isWithin(rootReal, targetReal)) {
    return fail('SymlinkEscapesRoot', 'path resolves through a symlink to outside the artifact root');
  }
  if (!(await stat(targetReal)).isDirectory()) return fail('NotADirectory', 'path is not a directory');

  const walk: Walk = {
    rootReal,
    opts,
    objects: [],
    errors: [],
    skipped: [],
    kustomizations: [],
    visited: new Set(),
  };
  await walkDirectory(walk, targetReal, toPosix(relative(rootReal, target)));

  const errors = [...walk.errors, ...findDuplicates(walk.objects)];
  if (walk.kustomizations.length > 0) {
    const needs = walk.kustomizations.map(
      (file) =>
        new RenderError(
          'NeedsKustomize',
          { file },
          'directory is a kustomization; no kustomize runner is configured',
        ),
    );
    return {
      ok: false,
      reason: 'NeedsKustomize',
      kustomizations: walk.kustomizations,
      errors: [...needs, ...errors],
    };
  }
  if (errors.length > 0) return { ok: false, reason: 'Invalid', errors };
  return { ok: true, objects: walk.objects, skipped: walk.skipped };
}

async function walkDirectory(walk: Walk, dirReal: string, dirRel: string): Promise<void> {
  if (walk.visited.has(dirReal)) return;
  walk.visited.add(dirReal);
  const join2 = (name: string): string => (dirRel === '' ? name : `${dirRel}/${name}`);

  let names: string[];
  try {
    names = (await readdir(dirReal)).sort(byCodePoint);
  } catch (err) {
    walk.errors.push(
      new RenderError('ReadFailed', { file: dirRel || '.' }, 'cannot list directory', { cause: err }),
    );
    return;
  }

  const kustomization = KUSTOMIZATION_FILES.find((k) => names.includes(k));
  if (kustomization) {
    await renderKustomization(walk, dirReal, join2(kustomization));
    return;
  }

  for (const name of names) {
    // Hidden entries are tooling (.git, .github, .sops.yaml), never manifests.
    if (name.startsWith('.')) continue;
    const full = join(dirReal, name);
    const rel = join2(name);
    let info;
    try {
      info = await lstat(full);
    } catch (err) {
      walk.errors.push(new RenderError('ReadFailed', { file: rel }, 'cannot stat entry', { cause: err }));
      continue;
    }
    let real = full;
    if (info.isSymbolicLink()) {
      const linkTarget = await readlink(full).catch(() => '?');
      try {
        real = await realpath(full);
      } catch (err) {
        walk.errors.push(
          new RenderError('BrokenSymlink', { file: rel }, `symlink target ${linkTarget} does not exist`, {
            cause: err,
          }),
        );
        continue;
      }
      if (!isWithin(walk.rootReal, real)) {
        walk.errors.push(
          new RenderError(
            'SymlinkEscapesRoot',
            { file: rel },
            `symlink to ${linkTarget} leads outside the artifact root`,
          ),
        );
        continue;
      }
      info = await stat(real);
    }
    if (info.isDirectory()) {
      await walkDirectory(walk, real, rel);
    } else if (info.isFile() && MANIFEST_EXTENSIONS.has(extname(name).toLowerCase())) {
      await renderFile(walk, real, rel);
    }
  }
}

async function renderFile(walk: Walk, fileReal: string, rel: string): Promise<void> {
  let text: string;
  try {
    text = await readFile(fileReal, 'utf8');
  } catch (err) {
    walk.errors.push(new RenderError('ReadFailed', { file: rel }, 'cannot read file', { cause: err }));
    return;
  }
  const parsed = parseStream(text, rel);
  if (parsed.errors.length === 0 && !parsed.docs.some((d) => looksLikeManifest(d.value))) {
    if (parsed.docs.length > 0 || text.trim() !== '') {
      walk.skipped.push({ file: rel, reason: 'no document has apiVersion or kind' });
    }
    return;
  }
  walk.errors.push(...parsed.errors);
  for (const doc of parsed.docs)
    collectObjects(walk, doc.value, doc.node, [], { file: rel, docIndex: doc.index });
}

async function renderKustomization(walk: Walk, dirReal: string, kustomizationRel: string): Promise<void> {
  const run = walk.opts.kustomize;
  if (!run) {
    walk.kustomizations.push(kustomizationRel);
    return;
  }
  let output: string;
  try {
    output = await run(dirReal);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    walk.errors.push(
      new RenderError('KustomizeFailed', { file: kustomizationRel }, `kustomize build failed: ${why}`, {
        cause: err,
      }),
    );
    return;
  }
  const parsed = parseStream(output, kustomizationRel, 'kustomize');
  walk.errors.push(...parsed.errors);
  for (const doc of parsed.docs) {
    collectObjects(walk, doc.value, doc.node, [], {
      file: kustomizationRel,
      docIndex: doc.index,
      via: 'kustomize',
    });
  }
}

// ---------------------------------------------------------------------------------------------
// YAML

interface ParsedDoc {
  readonly index: number;
  readonly value: unknown;
  readonly node: NodeLocator;
}

/** Finds the line and column of the node at a path inside one parsed document. */
type NodeLocator = (path: readonly (string | number)[]) => { line: number; col: number };

function parseStream(
  text: string,
  file: string,
  via?: 'kustomize',
): { docs: ParsedDoc[]; errors: RenderError[] } {
  const lineCounter = new LineCounter();
  // YAML 1.2 core schema, as kustomize (kyaml, go-yaml v3) reads it: `on`/`yes` stay strings.
  // Merge keys (`<<`) are on because go-yaml v3 honours them; duplicate keys are errors
  // because the API server would otherwise see only the last one.
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, merge: true, uniqueKeys: true });
  const errors: RenderError[] = [];
  const out: ParsedDoc[] = [];
  if (!Array.isArray(docs)) return { docs: out, errors };
  const at = (offset: number): { line: number; col: number } => lineCounter.linePos(offset);

  docs.forEach((doc: Document.Parsed, index) => {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        errors.push(
          new RenderError('InvalidYAML', { file, ...at(e.pos[0]), via }, `invalid YAML: ${e.message}`, {
            cause: e,
          }),
        );
      }
      return;
    }
    if (doc.contents === null) return;
    const start = doc.contents.range[0];
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      // Unresolved aliases and alias bombs only surface when converting.
      const why = err instanceof Error ? err.message : String(err);
      errors.push(
        new RenderError('InvalidYAML', { file, ...at(start), via }, `invalid YAML: ${why}`, { cause: err }),
      );
      return;
    }
    if (value === null || value === undefined) return;
    const node: NodeLocator = (path) => {
      const n = path.length === 0 ? doc.contents : doc.getIn(path, true);
      const range = (n as { range?: [number, number, number] } | undefined)?.range;
      return at(range ? range[0] : start);
    };
    out.push({ index, value, node });
  });
  return { docs: out, errors };
}

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

function looksLikeManifest(value: unknown): boolean {
  return isMapping(value) && ('apiVersion' in value || 'kind' in value);
}

function describe(value: unknown): string {
  if (Array.isArray(value)) return 'a sequence';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

function itemPathOf(path: readonly (string | number)[]): string | undefined {
  if (path.length === 0) return undefined;
  return path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `${p}`))
    .join('')
    .replace(/\]items/g, '].items');
}

interface DocPlace {
  readonly file: string;
  readonly docIndex: number;
  readonly via?: 'kustomize';
}

function collectObjects(
  walk: Walk,
  value: unknown,
  node: NodeLocator,
  path: readonly (string | number)[],
  place: DocPlace,
): void {
  const here = node(path);
  const itemPath = itemPathOf(path);
  const where = itemPath ? `${itemPath} ` : 'document ';
  // `field` is a path of keys (label keys contain dots, so it is not a dotted string).
  const locate = (field?: readonly string[]): Location => ({
    file: place.file,
    ...(field ? node([...path, ...field]) : here),
    via: place.via,
  });
  const err = (code: RenderError['code'], detail: string, field?: readonly string[]): void => {
    walk.errors.push(new RenderError(code, locate(field), detail));
  };

  if (!isMapping(value)) {
    err('NotAMapping', `${where}is ${describe(value)}, not a mapping (a Kubernetes object)`);
    return;
  }
  const problems = walk.errors.length;
  const requireString = (field: 'apiVersion' | 'kind'): void => {
    const v = value[field];
    if (v === undefined || v === null) err('MissingField', `missing ${field}`);
    else if (typeof v !== 'string' || v === '')
      err('InvalidField', `${field} must be a non-empty string, got ${describe(v)}`, [field]);
  };
  requireString('apiVersion');
  requireString('kind');
  const kind = typeof value.kind === 'string' ? value.kind : '';

  // kubectl flattens any *List with an items array; a custom kind that merely ends in "List"
  // (AllowList) and has no items array is an ordinary object.
  const items = value.items;
  if (kind === 'List' || (kind.endsWith('List') && Array.isArray(items))) {
    if (items !== undefined && items !== null && !Array.isArray(items)) {
      err('InvalidList', `${kind} items must be a sequence, got ${describe(items)}`, ['items']);
      return;
    }
    if (walk.errors.length > problems) return;
    (Array.isArray(items) ? items : []).forEach((item, i) =>
      collectObjects(walk, item, node, [...path, 'items', i], place),
    );
    return;
  }

  const metadata = value.metadata;
  if (metadata === undefined || metadata === null) {
    err('MissingField', 'missing metadata.name');
  } else if (!isMapping(metadata)) {
    err('InvalidField', `metadata must be a mapping, got ${describe(metadata)}`, ['metadata']);
  } else {
    const name = metadata.name;
    if (name === undefined || name === null) {
      err(
        'MissingField',
        metadata.generateName !== undefined
          ? 'missing metadata.name (generateName cannot be applied declaratively: each apply would create a new object)'
          : 'missing metadata.name',
      );
    } else if (typeof name !== 'string' || name === '') {
      err('InvalidField', `metadata.name must be a non-empty string, got ${describe(name)}`, [
        'metadata',
        'name',
      ]);
    }
    const ns = metadata.namespace;
    if (ns !== undefined && ns !== null && typeof ns !== 'string') {
      err('InvalidField', `metadata.namespace must be a string, got ${describe(ns)}`, [
        'metadata',
        'namespace',
      ]);
    }
    for (const field of ['labels', 'annotations'] as const) {
      const map = metadata[field];
      if (map === undefined || map === null) continue;
      if (!isMapping(map)) {
        err('InvalidField', `metadata.${field} must be a mapping, got ${describe(map)}`, ['metadata', field]);
        continue;
      }
      for (const [k, v] of Object.entries(map)) {
        if (typeof v !== 'string') {
          err(
            'InvalidField',
            `metadata.${field}.${k} must be a string, got ${describe(v)} (quote it in YAML)`,
            ['metadata', field, k],
          );
        }
      }
    }
  }
  if (walk.errors.length > problems) return;

  const origin: Origin = {
    file: place.file,
    line: here.line,
    col: here.col,
    docIndex: place.docIndex,
    ...(itemPath ? { itemPath } : {}),
    ...(place.via ? { via: place.via } : {}),
  };
  walk.objects.push({ object: value as unknown as Manifest, origin });
}
