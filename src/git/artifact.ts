import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { computeDigest, isDigest, type ArtifactFile } from './digest.js';
import { GitError } from './errors.js';

/** A stored artifact: its digest and the directory holding its files. */
export interface Artifact {
  readonly digest: string;
  readonly path: string;
}

const TMP_PREFIX = '.tmp-';
// A temp dir this old belongs to a writer that died (a crash mid-write), not a slow one.
const STALE_TMP_MS = 60 * 60 * 1000;

function artifactError(detail: string, cause?: unknown): GitError {
  return new GitError(`artifact: ${detail}`, { reason: 'ArtifactFailed', cause });
}

/**
 * Rejects paths that could write outside the artifact directory or into a `.git`
 * directory, and symlinks that could lead a reader outside it. Git itself refuses such
 * trees, but the objects come from a remote we do not trust.
 */
function checkPath(file: ArtifactFile): void {
  const parts = file.path.split('/');
  if (
    file.path === '' ||
    file.path.startsWith('/') ||
    file.path.includes('\0') ||
    parts.some((p) => p === '' || p === '.' || p === '..' || p.toLowerCase() === '.git')
  ) {
    throw artifactError(`unsafe path ${JSON.stringify(file.path)} in the repository`);
  }
  if (file.kind === 'symlink') {
    // Only links that point down from their own directory: with `..` allowed, a chain of
    // links that each stay inside can still resolve outside the artifact.
    const target = Buffer.from(file.content).toString('utf8');
    if (target === '' || target.startsWith('/') || target.split('/').includes('..')) {
      throw artifactError(
        `symlink ${JSON.stringify(file.path)} -> ${JSON.stringify(target)} is absolute or uses "..": not allowed in artifacts`,
      );
    }
  }
}

/**
 * Content-addressed artifact storage: the files of each distinct tree live once under
 * `<root>/<hex>/`, whatever commit, branch or GitSource produced them, so many consumers
 * share one fetch and read files by digest without cloning (Flux's source/apply split).
 *
 * Guarantees: a directory at `artifactPath(d)` is always complete (written to a temp
 * directory and renamed into place atomically) and holds exactly the files whose digest is
 * `d`; concurrent `put`s of the same content are safe. State is on disk only, so a restart
 * finds every artifact again. Not guaranteed: safety of `gc` racing a `put` or a reader of
 * a digest not listed in `inUse`.
 */
export class ArtifactStore {
  readonly root: string;

  constructor(root: string) {
    this.root = root;
  }

  /** Where the files of `digest` live. Throws on a malformed digest (never a path outside root). */
  artifactPath(digest: string): string {
    if (!isDigest(digest)) throw artifactError(`malformed digest ${JSON.stringify(digest)}`);
    return join(this.root, digest.slice('sha256:'.length));
  }

  /** True when the artifact for `digest` exists (and so is complete). */
  async has(digest: string): Promise<boolean> {
    if (!isDigest(digest)) return false;
    try {
      return (await stat(this.artifactPath(digest))).isDirectory();
    } catch {
      return false;
    }
  }

  /** Marks `digest` as used now, so `gc` keeps it among the most recent. */
  async touch(digest: string): Promise<void> {
    const now = new Date();
    await utimes(this.artifactPath(digest), now, now).catch(() => undefined);
  }

  /**
   * Stores `files` and returns their artifact. When an artifact with the same digest exists
   * it is reused (and touched), not rewritten. Throws `GitError('ArtifactFailed')` for unsafe
   * paths, symlinks leaving the tree, or a filesystem failure.
   */
  async put(files: readonly ArtifactFile[]): Promise<Artifact> {
    files.forEach(checkPath);
    let digest: string;
    try {
      digest = computeDigest(files);
    } catch (err) {
      throw artifactError(err instanceof Error ? err.message : String(err), err);
    }
    const path = this.artifactPath(digest);
    if (await this.has(digest)) {
      await this.touch(digest);
      return { digest, path };
    }
    const tmp = join(this.root, `${TMP_PREFIX}${randomBytes(8).toString('hex')}`);
    try {
      await mkdir(tmp, { recursive: true });
      for (const f of files) {
        const target = join(tmp, ...f.path.split('/'));
        await mkdir(dirname(target), { recursive: true });
        if (f.kind === 'symlink') await symlink(Buffer.from(f.content).toString('utf8'), target);
        else await writeFile(target, f.content, { mode: f.kind === 'executable' ? 0o755 : 0o644 });
      }
      try {
        await rename(tmp, path);
      } catch (err) {
        // Another writer put the same content first: theirs is identical, keep it.
        if (!(await this.has(digest))) throw err;
        await rm(tmp, { recursive: true, force: true });
        await this.touch(digest);
      }
      return { digest, path };
    } catch (err) {
      await rm(tmp, { recursive: true, force: true }).catch(() => undefined);
      throw artifactError(`store ${digest}: ${err instanceof Error ? err.message : String(err)}`, err);
    }
  }

  /**
   * Removes all but the `keep` most recently stored or touched artifacts, never one whose
   * digest is in `inUse` (those do not count against `keep`), plus temp directories left by
   * writers that died. Resolves with the digests removed.
   */
  async gc(opts: { keep: number; inUse?: Iterable<string> }): Promise<string[]> {
    const inUse = new Set(opts.inUse ?? []);
    let names: string[];
    try {
      names = await readdir(this.root);
    } catch {
      return [];
    }
    const now = Date.now();
    const candidates: Array<{ digest: string; mtime: number }> = [];
    for (const name of names) {
      const full = join(this.root, name);
      const st = await stat(full).catch(() => undefined);
      if (!st) continue;
      if (name.startsWith(TMP_PREFIX)) {
        if (now - st.mtimeMs > STALE_TMP_MS) await rm(full, { recursive: true, force: true });
        continue;
      }
      const digest = `sha256:${name}`;
      if (!st.isDirectory() || !isDigest(digest) || inUse.has(digest)) continue;
      candidates.push({ digest, mtime: st.mtimeMs });
    }
    // Newest first; equal times fall back to the digest so the choice is deterministic.
    candidates.sort((a, b) => b.mtime - a.mtime || (a.digest < b.digest ? -1 : 1));
    const removed: string[] = [];
    for (const { digest } of candidates.slice(Math.max(0, opts.keep))) {
      await rm(this.artifactPath(digest), { recursive: true, force: true });
      removed.push(digest);
    }
    return removed;
  }
}
