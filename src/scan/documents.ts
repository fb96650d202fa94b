/**
 * Reads the objects a scan judges out of YAML or JSON text: the top-level `apiVersion`/`kind` of
 * every document, and of every item of a `kind: List` (or any `*List` with an `items` array).
 * Nothing deeper is looked at, so an apiVersion string inside a ClusterServiceVersion's
 * `alm-examples` or a CRD's schema is never mistaken for an object. Lenient where `render` is
 * strict: a missing `metadata.name` does not hide a removed apiVersion. Pure.
 */
import { LineCounter, parseAllDocuments } from 'yaml';

/** One object found in a text, with where it starts. */
export interface ScannedObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name?: string;
  readonly namespace?: string;
  /** 1-based line of the object's `apiVersion` key (its first key when it has none). */
  readonly line: number;
  /** 0-based document index in the file. */
  readonly docIndex: number;
  /** `items[2]` for an item of a List. */
  readonly itemPath?: string;
  /** The whole object, for callers that need more than the type (OLM caps). */
  readonly value: Record<string, unknown>;
}

/** A document that could not be read, with its line. */
export interface DocumentProblem {
  readonly line: number;
  readonly message: string;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Date);
}

type Locate = (path: readonly (string | number)[]) => number | undefined;

/**
 * Every object in `text`. Documents without `apiVersion` and `kind` (values files, empty
 * documents) are not objects and are left out silently; invalid YAML is a problem with its line.
 */
export function scanText(text: string): { objects: ScannedObject[]; problems: DocumentProblem[] } {
  const lineCounter = new LineCounter();
  const objects: ScannedObject[] = [];
  const problems: DocumentProblem[] = [];
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, merge: true, uniqueKeys: false });
  if (!Array.isArray(docs)) return { objects, problems };
  docs.forEach((doc, docIndex) => {
    if (doc.errors.length > 0) {
      for (const e of doc.errors) {
        problems.push({ line: lineCounter.linePos(e.pos[0]).line, message: `invalid YAML: ${e.message}` });
      }
      return;
    }
    if (doc.contents === null) return;
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      problems.push({
        line: lineCounter.linePos(doc.contents.range[0]).line,
        message: `invalid YAML: ${err instanceof Error ? err.message : String(err)}`,
      });
      return;
    }
    const locate: Locate = (path) => {
      const n = path.length === 0 ? doc.contents : doc.getIn(path, true);
      const range = (n as { range?: [number, number, number] } | undefined)?.range;
      return range ? lineCounter.linePos(range[0]).line : undefined;
    };
    collect(value, [], docIndex, locate, objects);
  });
  return { objects, problems };
}

function collect(
  value: unknown,
  path: (string | number)[],
  docIndex: number,
  locate: Locate,
  out: ScannedObject[],
): void {
  if (!isMapping(value)) return;
  const { apiVersion, kind } = value;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return;
  if ((kind === 'List' || kind.endsWith('List')) && Array.isArray(value.items)) {
    value.items.forEach((item, i) => collect(item, [...path, 'items', i], docIndex, locate, out));
    return;
  }
  const meta = isMapping(value.metadata) ? value.metadata : {};
  // The line of the apiVersion *value* node is where a fixer edits; fall back to the object.
  const line = locate([...path, 'apiVersion']) ?? locate(path) ?? 1;
  const itemPath = path.length
    ? path
        .map((p) => (typeof p === 'number' ? `[${p}]` : p))
        .join('')
        .replace(/\]items/g, '].items')
    : undefined;
  out.push({
    apiVersion,
    kind,
    ...(typeof meta.name === 'string' ? { name: meta.name } : {}),
    ...(typeof meta.namespace === 'string' ? { namespace: meta.namespace } : {}),
    line,
    docIndex,
    ...(itemPath ? { itemPath } : {}),
    value,
  });
}
