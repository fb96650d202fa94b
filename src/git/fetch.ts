import fs from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import git from 'isomorphic-git';
import type { ArtifactStore } from './artifact.js';
import { authHeaders, authSecrets, type GitAuth } from './auth.js';
import type { ArtifactFile } from './digest.js';
import { GitError, normalizeGitError, redact } from './errors.js';
import { withPathLock } from './lock.js';
import {
  describeRef,
  formatRevision,
  parseRevision,
  resolveRef,
  type GitRef,
  type ResolvedRef,
} from './ref.js';
import { DEFAULT_GIT_TIMEOUT_MS, gitHttpClient } from './transport.js';

/** What {@link fetchRevision} needs. */
export interface FetchRevisionOptions {
  /** `http://` or `https://` repository URL (isomorphic-git speaks nothing else). */
  url: string;
  ref: GitRef;
  auth: GitAuth;
  /**
   * This source's local Git directory (bare, created on first use, reused after). Calls with
   * the same `workDir` are serialized; give each GitSource its own.
   */
  workDir: string;
  artifacts: ArtifactStore;
  /** The artifact the source published last (from its status): unchanged → no fetch at all. */
  last?: { revision: string; digest: string };
  /** isomorphic-git's object cache; share one between calls for the same repo to save parsing. */
  cache?: object;
  /** Bound on each HTTP request. Default {@link DEFAULT_GIT_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/** The artifact for the resolved revision. */
export interface FetchedRevision {
  /** Flux's revision string, e.g. `main@sha1:<sha>`. */
  readonly revision: string;
  readonly sha: string;
  /** `sha256:<hex>` over the tree's paths, modes and contents. */
  readonly digest: string;
  /** Directory holding the files (the artifact store's, shared by every consumer of the digest). */
  readonly path: string;
  /** True when objects were downloaded; false when the last artifact or local objects sufficed. */
  readonly fetched: boolean;
}

// isomorphic-git has no gc or repack: every fetch adds a packfile and nothing is ever
// deleted, so after this many the work directory is discarded and the next fetch is a
// fresh depth-1 clone (cheap, and it bounds disk use).
const MAX_PACKS = 16;
// Depths tried when fetching a pinned commit that is not the branch tip; the last one is
// git's "infinite" depth (the full history of the branch).
const COMMIT_DEPTHS = [1, 64, 4096, 0x7fffffff];

/**
 * Produces the artifact for `ref`: resolves it with one `info/refs` request (no clone);
 * when the resolved sha is the last artifact's and that artifact still exists, returns it
 * without fetching; otherwise fetches shallow (depth 1, single branch, no tags: isomorphic-git
 * holds packfiles in memory and is slow on large ones, isomorphic-git#32) into `workDir` — under a per-directory lock, since isomorphic-git is not safe with concurrent
 * operations on one repository (isomorphic-git#1278) — and stores the commit's tree in
 * `artifacts`. Credentials go on every request up front (isomorphic-git calls `onAuth` only
 * after a 401).
 *
 * Guarantees: the revision names the commit whose tree the artifact holds (if the ref moved
 * between resolving and fetching, both are the newer commit); every failure is a redacted
 * `GitError`; a work directory damaged by a crash is discarded and fetched afresh once.
 */
export async function fetchRevision(opts: FetchRevisionOptions): Promise<FetchedRevision> {
  const resolved = await resolveRef(opts.url, opts.ref, opts.auth, { timeoutMs: opts.timeoutMs });
  const last = opts.last;
  if (last && parseRevision(last.revision)?.sha === resolved.sha && (await opts.artifacts.has(last.digest))) {
    await opts.artifacts.touch(last.digest);
    const path = opts.artifacts.artifactPath(last.digest);
    return { revision: resolved.revision, sha: resolved.sha, digest: last.digest, path, fetched: false };
  }
  return withPathLock(opts.workDir, async () => {
    try {
      return await materialize(opts, resolved);
    } catch (err) {
      if (!worthRetryingFresh(err)) throw err;
      await rm(opts.workDir, { recursive: true, force: true });
      return materialize(opts, resolved);
    }
  });
}

/** Errors a fresh work directory might cure (not network, auth, missing refs or HTTP answers). */
function worthRetryingFresh(err: unknown): boolean {
  return (
    err instanceof GitError &&
    !err.terminal &&
    err.status === 0 &&
    (err.reason === 'FetchFailed' || err.reason === 'ArtifactFailed')
  );
}

interface Ctx {
  readonly gitdir: string;
  readonly cache: object;
}

async function materialize(opts: FetchRevisionOptions, resolved: ResolvedRef): Promise<FetchedRevision> {
  const ctx: Ctx = { gitdir: opts.workDir, cache: opts.cache ?? {} };
  await prepareWorkDir(ctx.gitdir, opts.url);
  let sha = resolved.sha;
  let fetched = false;
  if (!(await hasCommit(ctx, sha))) {
    sha = await download(opts, ctx, resolved);
    fetched = true;
  }
  const name = parseRevision(resolved.revision)?.name;
  const files = await readTreeFiles(ctx, sha);
  const artifact = await opts.artifacts.put(files);
  return { revision: formatRevision(name, sha), sha, digest: artifact.digest, path: artifact.path, fetched };
}

async function prepareWorkDir(gitdir: string, url: string): Promise<void> {
  const packs = await readdir(join(gitdir, 'objects', 'pack')).catch(() => undefined);
  if (packs && packs.filter((p) => p.endsWith('.pack')).length > MAX_PACKS) {
    await rm(gitdir, { recursive: true, force: true });
  }
  if (!fs.existsSync(join(gitdir, 'HEAD'))) {
    await git.init({ fs, gitdir, bare: true, defaultBranch: 'main' });
  }
  // isomorphic-git's fetch writes remote-tracking refs through the remote's refspec and
  // fails without one; `force` keeps the URL current when the spec changes.
  await git.addRemote({ fs, gitdir, remote: 'origin', url, force: true });
}

async function hasCommit(ctx: Ctx, sha: string): Promise<boolean> {
  try {
    const { type } = await git.readObject({
      fs,
      gitdir: ctx.gitdir,
      oid: sha,
      format: 'content',
      cache: ctx.cache,
    });
    return type === 'commit';
  } catch {
    return false;
  }
}

/** Fetches what `resolved` needs; resolves with the commit sha to build the artifact from. */
async function download(opts: FetchRevisionOptions, ctx: Ctx, resolved: ResolvedRef): Promise<string> {
  const secrets = authSecrets(opts.auth);
  const context = `fetch ${describeRef(opts.ref)} of ${redact(opts.url, secrets)}`;
  const http = gitHttpClient(opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS);
  const fetchAt = async (depth: number) => {
    try {
      const result = await git.fetch({
        fs,
        http,
        gitdir: ctx.gitdir,
        cache: ctx.cache,
        url: opts.url,
        remoteRef: resolved.remoteRef ?? 'HEAD',
        depth,
        singleBranch: true,
        tags: false,
        headers: authHeaders(opts.auth),
      });
      if (!result.fetchHead)
        throw new GitError(`${context}: the remote repository is empty`, { reason: 'RefNotFound' });
      return result.fetchHead;
    } catch (err) {
      throw normalizeGitError(err, context, { secrets });
    }
  };

  if (opts.ref.kind !== 'commit') return peel(ctx, await fetchAt(1), context);

  // A pinned commit may be below the tip, and servers need not serve an arbitrary sha
  // (uploadpack.allowReachableSHA1InWant is off by default), so fetch the branch and deepen
  // until the commit is there.
  for (const depth of COMMIT_DEPTHS) {
    await fetchAt(depth);
    if (await hasCommit(ctx, resolved.sha)) return resolved.sha;
  }
  const where = opts.ref.branch ? `branch ${opts.ref.branch}` : 'the default branch';
  throw new GitError(`${context}: commit ${resolved.sha} is not in the history of ${where}`, {
    reason: 'RefNotFound',
  });
}

/** The commit an annotated tag (or chain of them) points to. */
async function peel(ctx: Ctx, oid: string, context: string): Promise<string> {
  let current = oid;
  for (let hops = 0; hops < 8; hops++) {
    const obj = await local(context, () =>
      git.readObject({ fs, gitdir: ctx.gitdir, oid: current, cache: ctx.cache }),
    );
    if (obj.type === 'commit') return current;
    if (obj.type !== 'tag') break;
    current = (obj.object as { object: string }).object;
  }
  throw new GitError(`${context}: ${oid} does not point to a commit`, { reason: 'RefNotFound' });
}

/** Runs a local read; its failures mean a damaged work directory, not a missing ref. */
async function local<T>(context: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw new GitError(
      `${context}: reading the local clone failed: ${err instanceof Error ? err.message : String(err)}`,
      {
        reason: 'ArtifactFailed',
        cause: err,
      },
    );
  }
}

const KIND_BY_MODE: Record<string, ArtifactFile['kind'] | undefined> = {
  '100644': 'file',
  '100755': 'executable',
  '120000': 'symlink',
};

/** Every file of commit `sha`'s tree; submodules (mode 160000) are skipped, like Flux does by default. */
async function readTreeFiles(ctx: Ctx, sha: string): Promise<ArtifactFile[]> {
  const context = `read tree of ${sha}`;
  const { commit } = await local(context, () =>
    git.readCommit({ fs, gitdir: ctx.gitdir, oid: sha, cache: ctx.cache }),
  );
  const files: ArtifactFile[] = [];
  const walkTree = async (treeOid: string, prefix: string): Promise<void> => {
    const { tree } = await local(context, () =>
      git.readTree({ fs, gitdir: ctx.gitdir, oid: treeOid, cache: ctx.cache }),
    );
    for (const entry of tree) {
      const path = prefix + entry.path;
      if (entry.type === 'tree') {
        await walkTree(entry.oid, `${path}/`);
        continue;
      }
      const kind = KIND_BY_MODE[entry.mode];
      if (entry.type !== 'blob' || !kind) continue;
      const { blob } = await local(context, () =>
        git.readBlob({ fs, gitdir: ctx.gitdir, oid: entry.oid, cache: ctx.cache }),
      );
      files.push({ path, kind, content: blob });
    }
  };
  await walkTree(commit.tree, '');
  return files;
}
