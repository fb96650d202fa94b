/**
 * The fixer for one file's text, by what the file is: plain YAML (or JSON) manifests are
 * rewritten; a Helm template (`{{ … }}`) is never rewritten — each removed apiVersion in it, and
 * each apiVersion chosen by an expression, is a FLAG; a chart's values file is searched for
 * removed apiVersion strings, which are FLAGs too (the templates read them). Pure.
 */
import { isPair, isScalar, visit, type Document } from 'yaml';
import {
  API_REMOVALS,
  findRemoval,
  removalApiVersion,
  removalStatusAt,
  replacementAt,
  type ApiRemoval,
} from '../removals.js';
import { asManifest, planObject, type ObjectOutcome } from './plan.js';
import { formatPath, type FieldPath, type Flag, type Manifest, type Move } from './types.js';
import { applyEdits, parseDocuments, type DocumentEdit } from './yaml-edit.js';

/** One object (or template document, or values entry) the fixer judged. */
export interface ObjectReport {
  readonly line: number;
  readonly apiVersion: string;
  readonly kind: string;
  readonly name?: string;
  /** `items[2]` for an item of a List. */
  readonly itemPath?: string;
  readonly outcome: Exclude<ObjectOutcome, { action: 'keep' }>;
  /** The line of each flag's field (the object's line when the field is absent). */
  readonly flagLines: readonly number[];
}

/** The fixer's result for one file's text. */
export interface TextFix {
  /** The new text (the input when nothing was fixed). */
  readonly after: string;
  readonly objects: readonly ObjectReport[];
  /** Documents that could not be read: `line: message`. */
  readonly problems: ReadonlyArray<{ readonly line: number; readonly message: string }>;
}

const nameOf = (m: Manifest): string | undefined => {
  const meta = m.metadata as { name?: unknown } | undefined;
  return typeof meta?.name === 'string' ? meta.name : undefined;
};

/** Rewrites the manifests in a YAML (or JSON) text for `targetVersion`. */
export function fixManifestText(text: string, targetVersion: string, opts: { json?: boolean } = {}): TextFix {
  const { docs, lineCounter } = parseDocuments(text);
  const objects: ObjectReport[] = [];
  const problems: Array<{ line: number; message: string }> = [];
  const edits: DocumentEdit[] = [];
  const lineAt = (doc: Document.Parsed, path: FieldPath): number | undefined => {
    const node = path.length === 0 ? doc.contents : doc.getIn(path, true);
    const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
    return range ? lineCounter.linePos(range[0]).line : undefined;
  };

  docs.forEach((doc, docIndex) => {
    if (doc.errors.length > 0) {
      for (const e of doc.errors)
        problems.push({ line: lineCounter.linePos(e.pos[0]).line, message: `invalid YAML: ${e.message}` });
      return;
    }
    if (doc.contents === null) return;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      problems.push({
        line: lineAt(doc, []) ?? 1,
        message: `invalid YAML: ${err instanceof Error ? err.message : String(err)}`,
      });
      return;
    }
    const top = asManifest(value);
    if (!top) return;
    const comments: Array<{ path: FieldPath; text: string }> = [];
    const moves: Move[] = [];
    let changed = false;

    const judge = (obj: Manifest, prefix: FieldPath): Manifest => {
      const outcome = planObject(obj, targetVersion);
      if (outcome.action === 'keep') return obj;
      const objLine = lineAt(doc, [...prefix, 'apiVersion']) ?? lineAt(doc, prefix) ?? 1;
      const flagLines =
        outcome.action === 'flag'
          ? outcome.flags.map((f) => lineAt(doc, [...prefix, ...f.path]) ?? objLine)
          : [];
      const name = nameOf(obj);
      objects.push({
        line: objLine,
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        ...(name ? { name } : {}),
        ...(prefix.length ? { itemPath: formatPath(prefix) } : {}),
        outcome,
        flagLines,
      });
      if (outcome.action !== 'fix') return obj;
      changed = true;
      for (const n of outcome.notes)
        if (n.comment) comments.push({ path: [...prefix, ...n.path], text: n.text });
      for (const m of outcome.moves) moves.push({ from: [...prefix, ...m.from], to: [...prefix, ...m.to] });
      return outcome.object;
    };

    let next: unknown;
    if ((top.kind === 'List' || top.kind.endsWith('List')) && Array.isArray(top.items)) {
      next = {
        ...top,
        items: top.items.map((item, i) => {
          const m = asManifest(item);
          return m ? judge(m, ['items', i]) : item;
        }),
      };
    } else {
      next = judge(top, []);
    }
    if (changed) edits.push({ docIndex, value: next, comments, moves });
  });

  if (edits.length === 0) return { after: text, objects, problems };
  if (opts.json) {
    // JSON stays JSON (one document; comments do not exist there), in the file's indentation.
    const edit = edits[0]!;
    const indent = /^\{\s*\n([ \t]+)"/.exec(text)?.[1] ?? '  ';
    return { after: `${JSON.stringify(edit.value, null, indent)}\n`, objects, problems };
  }
  return { after: applyEdits(text, docs, edits), objects, problems };
}

/** True when a removal row for `apiVersion` (any kind) is deprecated or removed at the target. */
function isOldApiVersion(apiVersion: string, targetVersion: string): boolean {
  return API_REMOVALS.some(
    (r) => removalApiVersion(r) === apiVersion && removalStatusAt(r, targetVersion) !== 'ok',
  );
}

const TEMPLATE_FLAG_NOTE = 'the fixer does not rewrite Helm templates';

/** What the target serves instead, for a message. */
const servedReplacement = (r: ApiRemoval, targetVersion: string): string =>
  replacementAt(r, targetVersion)?.apiVersion ?? `nothing (no replacement is served at ${targetVersion})`;

/**
 * FLAGs for a Helm template text, never a rewrite. Each `---`-separated document's top-level
 * `apiVersion:` and `kind:` lines are read as text: a literal removed apiVersion is a FLAG naming
 * the replacement; an expression is a FLAG when it reads `.Values` (the value lives in
 * values.yaml) or contains an old apiVersion literal.
 */
export function flagTemplateText(text: string, targetVersion: string): TextFix {
  const objects: ObjectReport[] = [];
  const lines = text.split('\n');
  let docStart = 0;
  const flush = (end: number) => {
    let apiLine = -1;
    let apiVersion = '';
    let kind = '';
    for (let i = docStart; i < end; i++) {
      const line = lines[i]!;
      const a = /^apiVersion:\s*(.*?)\s*(#.*)?$/.exec(line);
      if (a && apiLine < 0) {
        apiLine = i;
        apiVersion = a[1]!.replace(/^["']|["']$/g, '');
      }
      const k = /^kind:\s*["']?([A-Za-z0-9]+)["']?\s*(#.*)?$/.exec(line);
      if (k && !kind) kind = k[1]!;
    }
    if (apiLine < 0 || !kind) return;
    const report = (reason: string, removal: ApiRemoval) => {
      const status = removalStatusAt(removal, targetVersion);
      objects.push({
        line: apiLine + 1,
        apiVersion,
        kind,
        outcome: {
          action: 'flag',
          flags: [{ path: ['apiVersion'], reason }],
          removal,
          status: status === 'removed' ? 'removed' : 'deprecated',
        },
        flagLines: [apiLine + 1],
      });
    };
    if (apiVersion.includes('{{')) {
      const row = API_REMOVALS.find(
        (r) =>
          r.kind === kind &&
          removalStatusAt(r, targetVersion) !== 'ok' &&
          apiVersion.includes(removalApiVersion(r)),
      );
      const anyRow = API_REMOVALS.find((r) => r.kind === kind && removalStatusAt(r, targetVersion) !== 'ok');
      if (/\.Values\b/.test(apiVersion) && anyRow) {
        report(
          `apiVersion of this ${kind} comes from values (${apiVersion}): the value lives in values.yaml — set it to ${servedReplacement(anyRow, targetVersion)} there; ${TEMPLATE_FLAG_NOTE}`,
          anyRow,
        );
      } else if (row) {
        report(
          `the template expression can still yield ${removalApiVersion(row)} (removed/deprecated at ${targetVersion}); ${TEMPLATE_FLAG_NOTE}: edit the template`,
          row,
        );
      }
      return;
    }
    const removal = findRemoval(apiVersion, kind);
    if (removal && removalStatusAt(removal, targetVersion) !== 'ok') {
      report(
        `${apiVersion} ${kind} in a Helm template → ${servedReplacement(removal, targetVersion)}; ${TEMPLATE_FLAG_NOTE}: edit it by hand (render with helm template --kube-version to check)`,
        removal,
      );
    }
  };
  lines.forEach((line, i) => {
    if (/^---/.test(line)) {
      flush(i);
      docStart = i + 1;
    }
  });
  flush(lines.length);
  return { after: text, objects, problems: [] };
}

/** FLAGs for every string in a chart's values file that is an old apiVersion. */
export function flagValuesText(text: string, targetVersion: string): TextFix {
  const { docs, lineCounter } = parseDocuments(text);
  const objects: ObjectReport[] = [];
  const problems: Array<{ line: number; message: string }> = [];
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      for (const e of doc.errors)
        problems.push({ line: lineCounter.linePos(e.pos[0]).line, message: `invalid YAML: ${e.message}` });
      continue;
    }
    visit(doc, {
      Pair(_, pair, path) {
        if (!isPair(pair) || !isScalar(pair.value) || typeof pair.value.value !== 'string') return;
        const apiVersion = pair.value.value;
        if (!apiVersion.includes('/') || !isOldApiVersion(apiVersion, targetVersion)) return;
        const keys = path
          .filter(isPair)
          .map((p) => (isScalar(p.key) ? String(p.key.value) : ''))
          .concat(isScalar(pair.key) ? String(pair.key.value) : '');
        // The kind the value is for, when the keys name it (`ingress.apiVersion`).
        const rows = API_REMOVALS.filter(
          (r) => removalApiVersion(r) === apiVersion && removalStatusAt(r, targetVersion) !== 'ok',
        );
        const joined = keys.join('.').toLowerCase();
        const named = rows.find((r) => joined.includes(r.kind.toLowerCase()));
        const removal = named ?? rows[0]!;
        const kinds = named ? named.kind : `one of ${[...new Set(rows.map((r) => r.kind))].join(', ')}`;
        const line = lineCounter.linePos(pair.value.range?.[0] ?? 0).line;
        const flag: Flag = {
          path: keys,
          reason: `the value lives in values.yaml: ${keys.join('.')} = ${apiVersion}, not served for ${kinds} at ${targetVersion} — the templates read it; change it here${named ? ` to ${servedReplacement(named, targetVersion)}` : ''} after checking the template for the shape change`,
        };
        objects.push({
          line,
          apiVersion,
          kind: named ? named.kind : 'value',
          outcome: {
            action: 'flag',
            flags: [flag],
            removal,
            status: removalStatusAt(removal, targetVersion) === 'removed' ? 'removed' : 'deprecated',
          },
          flagLines: [line],
        });
      },
    });
  }
  return { after: text, objects, problems };
}
