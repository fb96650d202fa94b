import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import git, { type TreeEntry as GitTreeEntry } from 'isomorphic-git';
import type { PullRequestTarget } from '../api/canary-release.js';
import { authHeaders, authSecrets, type GitAuth } from './auth.js';
import { GitError, isGitError, normalizeGitError, redact } from './errors.js';
import { withPathLock } from './lock.js';
import { openPullRequest, type PullRequestOptions } from './pull-request.js';
import { assertHttpUrl, DEFAULT_GIT_TIMEOUT_MS, gitHttpClient } from './transport.js';
import { RELEASE_TRAILER, REVERTS_TRAILER, revisionSha, trailerValues } from './write-back-message.js';
import {
  nestTree,
  restoreTree,
  revertTree,
  type FlatTree,
  type NestedTree,
  type TreeEntry,
} from './write-back-tree.js';

export { rollbackCommitMessage, type RollbackMessageInput } from './write-back-message.js';

/** Everything a rollback commit needs. */
export interface RollbackWriteBackRequest {
  /** The Delivery's GitSource: `http(s)://` URL, credentials and branch. */
  url: string;
  auth: GitAuth;
  branch: string;
  /** The commit rolled back (a sha, or `main@sha1:<sha>`). */
  badCommit: string;
  /** The last promoted commit; needed only when the bad commit does not revert cleanly. */
  lastGoodCommit?: string;
  /** Repo-relative files holding the target's manifests, restored on fallback; [] → every file under `dir`. */
  paths: string[];
  /** The Delivery's path in the repo. */
  dir: string;
  /** From {@link rollbackCommitMessage}: it carries the trailers a re-run looks for. */
  message: string;
  author: { name: string; email: string };
  /** Scratch directory (the controller's storage path); a bare clone per repository lives under it. */
  workDir: string;
}

/** What {@link pushRollback} did. */
export interface WriteBackOutcome {
  /**
   * `revert`: the bad commit reverted cleanly; `restore`: the last-good contents of the
   * target's files were restored; `alreadyDone`: an earlier run's commit (or Git itself)
   * already undid it, nothing was pushed.
   */
  method: 'revert' | 'restore' | 'alreadyDone';
  commit: string;
  /** Fetch-build-push rounds used (more than 1 after a push race). */
  attempts: number;
}

/** Knobs for {@link pushRollback}; the defaults are for production. */
export interface WriteBackOptions {
  /** Rounds of fetch, build and push before giving up on a moving branch. Default 5. */
  maxAttempts?: number;
  /** Bound on each HTTP request to the Git server. */
  timeoutMs?: number;
  /** Called after the commit is built and before it is pushed (tests use it to race a push). */
  beforePush?: (attempt: number) => Promise<void>;
}

/** How many commits below the tip are searched for an earlier run's rollback commit. */
export const ALREADY_DONE_SEARCH_DEPTH = 50;
const DEFAULT_ATTEMPTS = 5;
// Fetch depths tried until the bad commit, its parent and the last-good commit are local;
// the last one is git's "infinite".
const DEPTHS = [ALREADY_DONE_SEARCH_DEPTH, 500, 5000, 0x7fffffff];
const LOCAL_REF = 'refs/heads/sluice-write-back';
const MAX_PACKS = 16;
const EMPTY_TREE = new Map<string, TreeEntry>();

interface Ctx {
  readonly gitdir: string;
  readonly cache: object;
  readonly req: RollbackWriteBackRequest;
  readonly http: ReturnType<typeof gitHttpClient>;
  readonly secrets: string[];
  readonly context: string;
}

/**
 * Writes a rollback to Git: a commit on `req.branch` that undoes `req.badCommit` — a revert
 * when it reverts cleanly onto the tip, else the last-good contents of the target's files —
 * pushed with bounded retry when the branch moves meanwhile (each round fetches the new tip
 * and rebuilds the commit on it).
 *
 * Guarantees: idempotent across crashes — when a commit with `Sluice-Reverts: <badCommit>`
 * is among the newest {@link ALREADY_DONE_SEARCH_DEPTH} commits of the branch, or the tip's
 * tree already equals what the rollback would produce, nothing is pushed and
 * `alreadyDone` is returned; calls for one repository are serialized (isomorphic-git#1278);
 * never force-pushes; every failure is a redacted `GitError` (`Conflict` when neither a
 * revert nor a restore is possible, `PushRejected` when the branch kept moving).
 */
export async function pushRollback(
  req: RollbackWriteBackRequest,
  opts: WriteBackOptions = {},
): Promise<WriteBackOutcome> {
  assertHttpUrl(req.url);
  const ctx = context(req, opts);
  const max = opts.maxAttempts ?? DEFAULT_ATTEMPTS;
  const bad = revisionSha(req.badCommit);
  return inRepo(ctx, async () => {
    let lastRejection: GitError | undefined;
    for (let attempt = 1; attempt <= max; attempt++) {
      const tip = await fetchBranch(ctx, req.branch, ALREADY_DONE_SEARCH_DEPTH);
      const earlier = await findRollbackCommit(ctx, tip, bad);
      if (earlier) return { method: 'alreadyDone', commit: earlier, attempts: attempt };
      const built = await buildRollbackCommit(ctx, req.branch, tip);
      if (built.method === 'alreadyDone') return { method: 'alreadyDone', commit: tip, attempts: attempt };
      await opts.beforePush?.(attempt);
      try {
        await push(ctx, built.commit, req.branch, false);
        return { method: built.method, commit: built.commit, attempts: attempt };
      } catch (err) {
        if (!isGitError(err, 'PushRejected')) throw err;
        lastRejection = err;
      }
    }
    throw new GitError(
      `${ctx.context}: the branch moved during each of ${max} attempts; last: ${lastRejection?.message ?? ''}`,
      { reason: 'PushRejected', cause: lastRejection },
    );
  });
}

/** The branch a pull-request rollback is pushed to: `sluice/rollback-<name>-<short sha>`. Pure. */
export function rollbackBranchName(name: string, badCommit: string): string {
  return `sluice/rollback-${name}-${revisionSha(badCommit).slice(0, 7)}`;
}

/**
 * `mode: pullRequest`: builds the same commit as {@link pushRollback} on top of the base
 * branch (`target.baseBranch`, else `req.branch`), pushes it to its own branch
 * ({@link rollbackBranchName}, the release name taken from the message's `Sluice-Release`
 * trailer) and opens a pull request (GitHub) or merge request (GitLab) with the message's
 * subject as title and its body as description. Idempotent: when an open one exists for that
 * branch it is returned and nothing is pushed; a branch left by a crash before the request
 * was opened is reused for it. When the base branch already holds the rollback (the request
 * was merged and its branch deleted, or someone undid the change by hand), `url` is empty
 * and `commit` is the commit that did it: nothing is pushed or opened.
 */
export async function openRollbackPullRequest(
  req: RollbackWriteBackRequest & { target: PullRequestTarget; token: string },
  opts: WriteBackOptions & PullRequestOptions = {},
): Promise<{ url: string; branch: string; commit: string }> {
  assertHttpUrl(req.url);
  const ctx = context(req, opts);
  const release = trailerValues(req.message, RELEASE_TRAILER)[0] ?? 'release';
  const name = release.slice(release.indexOf('/') + 1);
  const branch = rollbackBranchName(name, req.badCommit);
  const base = req.target.baseBranch ?? req.branch;
  const [title, ...rest] = req.message.trimEnd().split('\n');
  const content = { head: branch, base, title: title ?? '', body: rest.join('\n').trim() };

  return inRepo(ctx, async () => {
    // A branch from an earlier run (crashed before or after opening the request) already
    // holds a rollback of this very commit: reuse it, push nothing.
    const pushed = await remoteBranchTip(ctx, branch);
    if (pushed) {
      const pr = await openPullRequest(req.target, req.token, content, { timeoutMs: opts.timeoutMs });
      return { url: pr.url, branch, commit: pushed };
    }
    const tip = await fetchBranch(ctx, base, ALREADY_DONE_SEARCH_DEPTH);
    // Merged already (and its branch deleted), or undone by hand: nothing to propose.
    const merged = await findRollbackCommit(ctx, tip, revisionSha(req.badCommit));
    if (merged) return { url: '', branch, commit: merged };
    const built = await buildRollbackCommit(ctx, base, tip);
    if (built.method === 'alreadyDone') return { url: '', branch, commit: tip };
    await opts.beforePush?.(1);
    await push(ctx, built.commit, branch, false);
    const pr = await openPullRequest(req.target, req.token, content, { timeoutMs: opts.timeoutMs });
    return { url: pr.url, branch, commit: built.commit };
  });
}

function context(req: RollbackWriteBackRequest, opts: { timeoutMs?: number }): Ctx {
  const secrets = authSecrets(req.auth);
  // One bare clone per repository URL under the controller's storage path.
  const key = createHash('sha256').update(req.url).digest('hex').slice(0, 16);
  return {
    gitdir: join(req.workDir, 'write-back', `${key}.git`),
    cache: {},
    req,
    http: gitHttpClient(opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS),
    secrets,
    context: `write back rollback of ${revisionSha(req.badCommit).slice(0, 12)} to ${redact(req.url, secrets)} ${req.branch}`,
  };
}

/**
 * Runs `fn` on the repository's bare clone, under its lock. A clone damaged by a crash (a
 * local read or write fails) is discarded and `fn` runs once more on a fresh one.
 */
function inRepo<T>(ctx: Ctx, fn: () => Promise<T>): Promise<T> {
  return withPathLock(ctx.gitdir, async () => {
    try {
      await prepare(ctx);
      return await fn();
    } catch (err) {
      if (!isGitError(err, 'ArtifactFailed')) throw err;
      await rm(ctx.gitdir, { recursive: true, force: true });
      await prepare(ctx);
      return fn();
    }
  });
}

async function prepare(ctx: Ctx): Promise<void> {
  // isomorphic-git never repacks: every fetch adds a packfile; start afresh past a bound.
  const packs = await readdir(join(ctx.gitdir, 'objects', 'pack')).catch(() => []);
  if (packs.filter((p) => p.endsWith('.pack')).length > MAX_PACKS) {
    await rm(ctx.gitdir, { recursive: true, force: true });
  }
  await local(ctx, async () => {
    if (!fs.existsSync(join(ctx.gitdir, 'HEAD'))) {
      await git.init({ fs, gitdir: ctx.gitdir, bare: true, defaultBranch: 'main' });
    }
    await git.addRemote({ fs, gitdir: ctx.gitdir, remote: 'origin', url: ctx.req.url, force: true });
  });
}

async function fetchBranch(ctx: Ctx, branch: string, depth: number): Promise<string> {
  try {
    const result = await git.fetch({
      fs,
      http: ctx.http,
      gitdir: ctx.gitdir,
      cache: ctx.cache,
      url: ctx.req.url,
      remote: 'origin',
      ref: branch,
      remoteRef: `refs/heads/${branch}`,
      depth,
      singleBranch: true,
      tags: false,
      headers: authHeaders(ctx.req.auth),
    });
    if (!result.fetchHead) {
      throw new GitError(`${ctx.context}: branch ${branch} not found`, { reason: 'RefNotFound' });
    }
    return result.fetchHead;
  } catch (err) {
    throw normalizeGitError(err, `${ctx.context}: fetch ${branch}`, { secrets: ctx.secrets });
  }
}

async function remoteBranchTip(ctx: Ctx, branch: string): Promise<string | undefined> {
  try {
    const refs = await git.listServerRefs({
      http: ctx.http,
      url: ctx.req.url,
      prefix: `refs/heads/${branch}`,
      headers: authHeaders(ctx.req.auth),
    });
    return refs.find((r) => r.ref === `refs/heads/${branch}`)?.oid;
  } catch (err) {
    throw normalizeGitError(err, `${ctx.context}: list refs`, { secrets: ctx.secrets });
  }
}

async function push(ctx: Ctx, commit: string, branch: string, force: boolean): Promise<void> {
  await local(ctx, () =>
    git.writeRef({ fs, gitdir: ctx.gitdir, ref: LOCAL_REF, value: commit, force: true }),
  );
  try {
    await git.push({
      fs,
      http: ctx.http,
      gitdir: ctx.gitdir,
      cache: ctx.cache,
      url: ctx.req.url,
      ref: LOCAL_REF,
      remoteRef: `refs/heads/${branch}`,
      force,
      headers: authHeaders(ctx.req.auth),
    });
  } catch (err) {
    throw normalizeGitError(err, `${ctx.context}: push ${branch}`, { secrets: ctx.secrets });
  }
}

async function readCommitOrUndefined(ctx: Ctx, oid: string) {
  try {
    return (await git.readCommit({ fs, gitdir: ctx.gitdir, oid, cache: ctx.cache })).commit;
  } catch {
    return undefined;
  }
}

/** The newest commit (breadth-first, all parents, bounded) whose `Sluice-Reverts` names `bad`. */
async function findRollbackCommit(ctx: Ctx, tip: string, bad: string): Promise<string | undefined> {
  const queue = [tip];
  const seen = new Set<string>();
  while (queue.length > 0 && seen.size < ALREADY_DONE_SEARCH_DEPTH) {
    const oid = queue.shift()!;
    if (seen.has(oid)) continue;
    seen.add(oid);
    const commit = await readCommitOrUndefined(ctx, oid);
    if (!commit) continue; // beyond the shallow boundary
    if (trailerValues(commit.message, REVERTS_TRAILER).some((v) => v === bad)) return oid;
    queue.push(...commit.parent);
  }
  return undefined;
}

/**
 * Makes sure `shas` (and the first parent of the bad commit) are local, deepening the
 * shallow clone step by step; returns which are present.
 */
async function deepenFor(ctx: Ctx, branch: string, bad: string, good: string | undefined) {
  const state = async () => {
    const badCommit = await readCommitOrUndefined(ctx, bad);
    const parentOid = badCommit?.parent[0];
    const parentOk =
      badCommit !== undefined && (parentOid === undefined || !!(await readCommitOrUndefined(ctx, parentOid)));
    const goodOk = good === undefined || !!(await readCommitOrUndefined(ctx, good));
    return { badCommit, parentOid, parentOk, goodOk };
  };
  let s = await state();
  for (const depth of DEPTHS.slice(1)) {
    if (s.parentOk && s.goodOk) break;
    await fetchBranch(ctx, branch, depth);
    s = await state();
  }
  return s;
}

type Built = { method: 'revert' | 'restore'; commit: string } | { method: 'alreadyDone' };

async function buildRollbackCommit(ctx: Ctx, branch: string, tip: string): Promise<Built> {
  const req = ctx.req;
  const bad = revisionSha(req.badCommit);
  const good = req.lastGoodCommit ? revisionSha(req.lastGoodCommit) : undefined;
  const s = await deepenFor(ctx, branch, bad, good);
  const tipCommit = await local(ctx, () =>
    git.readCommit({ fs, gitdir: ctx.gitdir, oid: tip, cache: ctx.cache }),
  );
  const head = await readFlatTree(ctx, tipCommit.commit.tree);

  let tree: FlatTree | undefined;
  let method: 'revert' | 'restore' = 'revert';
  let why = '';
  if (s.badCommit && s.parentOk) {
    const parentTree = s.parentOid
      ? await readFlatTree(
          ctx,
          (
            await local(ctx, () =>
              git.readCommit({ fs, gitdir: ctx.gitdir, oid: s.parentOid!, cache: ctx.cache }),
            )
          ).commit.tree,
        )
      : EMPTY_TREE;
    const result = revertTree(parentTree, await readFlatTree(ctx, s.badCommit.tree), head);
    if (result.clean) tree = result.tree;
    else why = `${bad.slice(0, 12)} does not revert cleanly (changed since: ${result.conflicts.join(', ')})`;
  } else {
    why = `commit ${bad.slice(0, 12)} is not in the history of ${branch}`;
  }
  if (!tree) {
    if (!good || !s.goodOk) {
      throw new GitError(
        `${ctx.context}: ${why}, and ${good ? `the last good commit ${good.slice(0, 12)} is not in the history of ${branch}` : 'no last good commit is known'} to restore from`,
        { reason: 'Conflict', terminal: true },
      );
    }
    const goodCommit = await local(ctx, () =>
      git.readCommit({ fs, gitdir: ctx.gitdir, oid: good, cache: ctx.cache }),
    );
    tree = restoreTree(await readFlatTree(ctx, goodCommit.commit.tree), head, {
      paths: req.paths,
      dir: req.dir,
    }).tree;
    method = 'restore';
  }
  const treeOid = await writeNested(ctx, nestTree(tree));
  // Git already says what should run (someone reverted by hand): nothing to add.
  if (treeOid === tipCommit.commit.tree) return { method: 'alreadyDone' };
  const now = Math.floor(Date.now() / 1000);
  const who = { ...req.author, timestamp: now, timezoneOffset: 0 };
  const commit = await local(ctx, () =>
    git.commit({
      fs,
      gitdir: ctx.gitdir,
      cache: ctx.cache,
      message: req.message,
      tree: treeOid,
      parent: [tip],
      author: who,
      committer: who,
      noUpdateBranch: true,
    }),
  );
  return { method, commit };
}

async function readFlatTree(ctx: Ctx, treeOid: string): Promise<FlatTree> {
  const out = new Map<string, TreeEntry>();
  const walk = async (oid: string, prefix: string): Promise<void> => {
    const { tree } = await local(ctx, () => git.readTree({ fs, gitdir: ctx.gitdir, oid, cache: ctx.cache }));
    for (const e of tree) {
      if (e.type === 'tree') await walk(e.oid, `${prefix}${e.path}/`);
      else out.set(`${prefix}${e.path}`, { mode: e.mode, oid: e.oid });
    }
  };
  await walk(treeOid, '');
  return out;
}

async function writeNested(ctx: Ctx, node: NestedTree): Promise<string> {
  const entries: GitTreeEntry[] = [];
  for (const [path, sub] of node.dirs) {
    entries.push({ mode: '040000', path, oid: await writeNested(ctx, sub), type: 'tree' });
  }
  for (const [path, e] of node.files) {
    entries.push({ mode: e.mode, path, oid: e.oid, type: e.mode === '160000' ? 'commit' : 'blob' });
  }
  return local(ctx, () => git.writeTree({ fs, gitdir: ctx.gitdir, tree: entries }));
}

/** Runs a local repository operation; its failures are this repository's, named as such. */
async function local<T>(ctx: Ctx, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof GitError) throw err;
    throw new GitError(
      `${ctx.context}: local repository: ${redact(err instanceof Error ? err.message : String(err), ctx.secrets)}`,
      { reason: 'ArtifactFailed', cause: err },
    );
  }
}
