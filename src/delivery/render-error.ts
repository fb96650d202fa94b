/**
 * Where a rendered object (or a render problem) comes from, in the terms a person fixing the
 * repository needs: a path relative to the artifact root, with POSIX separators, and a 1-based
 * line and column.
 */
export interface Origin {
  /** Path relative to the artifact root, `/`-separated (what the user sees in Git). */
  readonly file: string;
  /** 1-based line of the object's first key; for kustomize output, the line in the build output. */
  readonly line: number;
  /** 1-based column of the object's first key. */
  readonly col: number;
  /**
   * 0-based index of the YAML document in its file, counting empty documents too, so the index
   * matches what a reader counts by `---` separators.
   */
  readonly docIndex: number;
  /** Path to the object inside a `kind: List` document, e.g. `items[2]`; absent otherwise. */
  readonly itemPath?: string;
  /** Set when the object came out of `kustomize build <dir>` rather than straight from `file`. */
  readonly via?: 'kustomize';
}

/** What went wrong, for callers that branch on it (all are reported; none is retried). */
export type RenderErrorCode =
  | 'InvalidYAML'
  | 'NotAMapping'
  | 'MissingField'
  | 'InvalidField'
  | 'InvalidList'
  | 'DuplicateObject'
  | 'PathEscapesRoot'
  | 'SymlinkEscapesRoot'
  | 'BrokenSymlink'
  | 'PathNotFound'
  | 'NotADirectory'
  | 'ReadFailed'
  | 'NeedsKustomize'
  | 'KustomizeFailed'
  | 'MissingNamespace'
  | 'UnknownScope';

/** A source location without the document bookkeeping: what an error points at. */
export interface Location {
  readonly file: string;
  /** Absent when the problem is the path itself (e.g. it escapes the root), not a line in it. */
  readonly line?: number;
  readonly col?: number;
  readonly via?: 'kustomize';
}

/**
 * Formats a location the way compilers and editors understand it: `file:line:col`, or just
 * `file` when there is no line. Kustomize output has no file of its own, so its lines are
 * labelled as build-output lines of the kustomization they came from.
 */
export function formatLocation(loc: Location): string {
  if (loc.line === undefined) return loc.file;
  if (loc.via === 'kustomize') return `${loc.file} (kustomize build output line ${loc.line})`;
  return `${loc.file}:${loc.line}:${loc.col ?? 1}`;
}

/**
 * One problem found while turning a directory into objects. `message` always starts with the
 * formatted location, so a list of these can be shown as-is in a condition message or a CLI;
 * `detail` is the same text without the location.
 */
export class RenderError extends Error {
  override readonly name = 'RenderError';
  readonly code: RenderErrorCode;
  readonly location: Location;
  readonly detail: string;

  constructor(code: RenderErrorCode, location: Location, detail: string, opts?: { cause?: unknown }) {
    super(`${formatLocation(location)}: ${detail}`, { cause: opts?.cause });
    this.code = code;
    this.location = location;
    this.detail = detail;
  }
}
