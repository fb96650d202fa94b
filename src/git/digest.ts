import { createHash } from 'node:crypto';

/** How a file sits in a Git tree; part of the digest, so a mode change is a content change. */
export type ArtifactFileKind = 'file' | 'executable' | 'symlink';

/** One file of an artifact: a repository-relative POSIX path and its bytes (a symlink's bytes are its target). */
export interface ArtifactFile {
  readonly path: string;
  readonly kind: ArtifactFileKind;
  readonly content: Uint8Array;
}

const FORMAT = 'sluice-artifact-v1\n';

/** Byte order of the UTF-8 paths: the same on every platform and locale. */
export function comparePaths(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/**
 * The content digest of a file set, `sha256:<64 hex>`. Guarantees: it depends only on the
 * set of (path, kind, content) — not on the order given, the commit, timestamps or where
 * the files came from — so two commits with the same tree share one artifact; and every
 * entry is length-prefixed, so moving bytes between a path and its content (or between two
 * files) always changes it. Throws on a duplicate path.
 */
export function computeDigest(files: Iterable<ArtifactFile>): string {
  const sorted = [...files].sort((a, b) => comparePaths(a.path, b.path));
  const hash = createHash('sha256').update(FORMAT);
  let previous: string | undefined;
  for (const f of sorted) {
    if (f.path === previous) throw new Error(`duplicate artifact path ${JSON.stringify(f.path)}`);
    previous = f.path;
    const path = Buffer.from(f.path, 'utf8');
    hash
      .update(`${f.kind} ${path.length}:`)
      .update(path)
      .update(`\n${f.content.byteLength}:`)
      .update(f.content);
    hash.update('\n');
  }
  return `sha256:${hash.digest('hex')}`;
}

/** True when `digest` has the form {@link computeDigest} produces. */
export function isDigest(digest: string): boolean {
  return /^sha256:[0-9a-f]{64}$/.test(digest);
}
