import git, { type ServerRef } from 'isomorphic-git';
import { authHeaders, authSecrets, type GitAuth } from './auth.js';
import { GitError, normalizeGitError, redact } from './errors.js';
import { maxSatisfying, parseRange, SemverRangeError } from './semver.js';
import { assertHttpUrl, DEFAULT_GIT_TIMEOUT_MS, gitHttpClient } from './transport.js';

/**
 * The ref fields of a GitSource spec, as users write them (Flux's GitRepository shape).
 * At most one of `branch`, `tag`, `semver`, `commit` may be set — except `commit` with
 * `branch`, which names the branch to fetch the commit from. None set means the remote's
 * default branch (its HEAD).
 */
export interface GitRefSpec {
  branch?: string;
  tag?: string;
  semver?: string;
  commit?: string;
}

/** A validated ref: which strategy is used is explicit, never inferred later. */
export type GitRef =
  | { readonly kind: 'head' }
  | { readonly kind: 'branch'; readonly branch: string }
  | { readonly kind: 'tag'; readonly tag: string }
  | { readonly kind: 'semver'; readonly range: string }
  | { readonly kind: 'commit'; readonly commit: string; readonly branch?: string };

/** A ref resolved to one commit. */
export interface ResolvedRef {
  readonly ref: GitRef;
  /** The full remote ref to fetch (`refs/heads/main`, `refs/tags/v1.2.3`); undefined for a bare commit. */
  readonly remoteRef: string | undefined;
  /** The commit sha (annotated tags are peeled to their commit). */
  readonly sha: string;
  /** Flux's revision string: `main@sha1:<sha>`, `v1.2.3@sha1:<sha>` or `sha1:<sha>`. */
  readonly revision: string;
}

const SHA1 = /^[0-9a-f]{40}$/;

function invalid(detail: string, cause?: unknown): GitError {
  return new GitError(`invalid ref: ${detail}`, { reason: 'RefNotFound', terminal: true, cause });
}

/**
 * True when `name` is a valid branch or tag name (the rules of `git check-ref-format`
 * that matter for names users type).
 */
export function isValidRefName(name: string): boolean {
  return (
    name.length > 0 &&
    name !== '@' &&
    !name.startsWith('-') &&
    !name.startsWith('/') &&
    !name.endsWith('/') &&
    !name.endsWith('.') &&
    !name.includes('..') &&
    !name.includes('//') &&
    !name.includes('@{') &&
    // eslint-disable-next-line no-control-regex
    !/[\u0000-\u0020\u007f~^:?*[\\]/.test(name) &&
    name.split('/').every((part) => !part.startsWith('.') && !part.endsWith('.lock'))
  );
}

/**
 * Validates a spec and says which strategy it uses. Guarantees: branch and tag names are
 * valid ref names, a semver range parses, a commit is a full 40-hex sha (lower-cased).
 * Every mistake throws a terminal `GitError` (reason `RefNotFound`) saying what is wrong.
 */
export function parseRefSpec(spec: GitRefSpec | undefined): GitRef {
  const s = spec ?? {};
  const set = (['branch', 'tag', 'semver', 'commit'] as const).filter(
    (k) => s[k] !== undefined && s[k] !== '',
  );
  const checkName = (field: 'branch' | 'tag', name: string) => {
    if (!isValidRefName(name)) throw invalid(`${field} ${JSON.stringify(name)} is not a valid Git ref name`);
    return name;
  };
  if (set.length === 0) return { kind: 'head' };
  if (set.length === 2 && s.commit && s.branch) {
    const commit = s.commit.toLowerCase();
    if (!SHA1.test(commit))
      throw invalid(`commit ${JSON.stringify(s.commit)} is not a full 40-character SHA-1`);
    return { kind: 'commit', commit, branch: checkName('branch', s.branch) };
  }
  if (set.length > 1) throw invalid(`set only one of ${set.join(', ')} (commit may be combined with branch)`);
  if (s.branch) return { kind: 'branch', branch: checkName('branch', s.branch) };
  if (s.tag) return { kind: 'tag', tag: checkName('tag', s.tag) };
  if (s.semver) {
    try {
      parseRange(s.semver);
    } catch (err) {
      throw invalid(err instanceof SemverRangeError ? err.message : String(err), err);
    }
    return { kind: 'semver', range: s.semver };
  }
  const commit = s.commit!.toLowerCase();
  if (!SHA1.test(commit))
    throw invalid(`commit ${JSON.stringify(s.commit)} is not a full 40-character SHA-1`);
  return { kind: 'commit', commit };
}

/** Formats Flux's revision string: `<name>@sha1:<sha>`, or `sha1:<sha>` without a name. */
export function formatRevision(name: string | undefined, sha: string): string {
  return name ? `${name}@sha1:${sha}` : `sha1:${sha}`;
}

/**
 * Parses a revision written by {@link formatRevision} (or Flux). Returns undefined when
 * `revision` is not in that format (e.g. Flux's legacy `main/<sha>`).
 */
export function parseRevision(revision: string): { name: string | undefined; sha: string } | undefined {
  const m = /^(?:(.+)@)?sha1:([0-9a-f]{40})$/.exec(revision);
  return m ? { name: m[1], sha: m[2]! } : undefined;
}

/** The short name of a full ref (`refs/heads/main` → `main`). */
function shortName(fullRef: string): string {
  return fullRef.replace(/^refs\/(heads|tags)\//, '');
}

function resolved(
  ref: GitRef,
  remoteRef: string | undefined,
  sha: string,
  name: string | undefined,
): ResolvedRef {
  return { ref, remoteRef, sha, revision: formatRevision(name, sha) };
}

/**
 * Picks the tag for a semver range from a server's tag list (pure: no network). Tags may
 * carry a `v` prefix; tags that are not full versions are ignored; annotated tags resolve
 * to their peeled commit. Returns undefined when no tag is in range.
 */
export function selectSemverTag(
  refs: readonly ServerRef[],
  range: string,
): { tag: string; remoteRef: string; sha: string } | undefined {
  const byName = new Map<string, ServerRef>();
  for (const r of refs) if (r.ref.startsWith('refs/tags/')) byName.set(shortName(r.ref), r);
  const tag = maxSatisfying(byName.keys(), range);
  if (tag === undefined) return undefined;
  const r = byName.get(tag)!;
  return { tag, remoteRef: r.ref, sha: r.peeled ?? r.oid };
}

/** Picks the ref `ref` needs from a full server ref list (pure). Throws `RefNotFound`. */
export function pickRef(refs: readonly ServerRef[], ref: GitRef): ResolvedRef {
  const find = (full: string) => refs.find((r) => r.ref === full);
  switch (ref.kind) {
    case 'head': {
      const head = find('HEAD');
      if (!head)
        throw new GitError('the remote has no HEAD (an empty repository?)', { reason: 'RefNotFound' });
      // An unborn or detached HEAD has no branch name: the revision is then just the sha.
      const target = head.target?.startsWith('refs/heads/') ? head.target : undefined;
      return resolved(ref, target ?? 'HEAD', head.oid, target && shortName(target));
    }
    case 'branch': {
      const full = `refs/heads/${ref.branch}`;
      const r = find(full);
      if (!r)
        throw new GitError(`branch ${JSON.stringify(ref.branch)} not found on the remote`, {
          reason: 'RefNotFound',
        });
      return resolved(ref, full, r.oid, ref.branch);
    }
    case 'tag': {
      const full = `refs/tags/${ref.tag}`;
      const r = find(full);
      if (!r)
        throw new GitError(`tag ${JSON.stringify(ref.tag)} not found on the remote`, {
          reason: 'RefNotFound',
        });
      return resolved(ref, full, r.peeled ?? r.oid, ref.tag);
    }
    case 'semver': {
      const hit = selectSemverTag(refs, ref.range);
      if (!hit) {
        throw new GitError(`no tag matches semver range ${JSON.stringify(ref.range)}`, {
          reason: 'RefNotFound',
        });
      }
      return resolved(ref, hit.remoteRef, hit.sha, hit.tag);
    }
    case 'commit':
      return resolved(ref, ref.branch && `refs/heads/${ref.branch}`, ref.commit, ref.branch);
  }
}

/** Options for {@link resolveRef}. */
export interface ResolveRefOptions {
  /** Bound on the request. Default {@link DEFAULT_GIT_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/**
 * Resolves `ref` to a commit without cloning: one `GET info/refs` (protocol v1, whose
 * advertisement carries every ref, peeled tags and the HEAD symref in a single request;
 * protocol v2 would need a second round trip for `ls-refs`). A `commit` ref without a branch
 * needs no network at all. Only `http(s)://` URLs are accepted (a terminal `FetchFailed`
 * otherwise). Credentials are sent up front (isomorphic-git calls `onAuth` only
 * after a 401). Every failure is a `GitError` from `normalizeGitError`, redacted.
 */
export async function resolveRef(
  url: string,
  ref: GitRef,
  auth: GitAuth,
  opts: ResolveRefOptions = {},
): Promise<ResolvedRef> {
  assertHttpUrl(url);
  if (ref.kind === 'commit' && !ref.branch) return pickRef([], ref);
  const secrets = authSecrets(auth);
  const context = `resolve ${describeRef(ref)} of ${redact(url, secrets)}`;
  let refs: ServerRef[];
  try {
    refs = await git.listServerRefs({
      http: gitHttpClient(opts.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS),
      url,
      headers: authHeaders(auth),
      protocolVersion: 1,
      symrefs: true,
      peelTags: true,
    });
  } catch (err) {
    throw normalizeGitError(err, context, { secrets });
  }
  try {
    const hit = pickRef(refs, ref);
    // A pinned commit with a branch: the branch must exist; the commit is checked by the fetch.
    if (ref.kind === 'commit' && ref.branch) pickRef(refs, { kind: 'branch', branch: ref.branch });
    return hit;
  } catch (err) {
    throw err instanceof GitError
      ? new GitError(`${context}: ${err.message}`, { reason: err.reason, terminal: err.terminal, cause: err })
      : normalizeGitError(err, context, { secrets });
  }
}

/** A short human description of a ref for messages (`branch main`, `semver ^1.2`). */
export function describeRef(ref: GitRef): string {
  switch (ref.kind) {
    case 'head':
      return 'default branch';
    case 'branch':
      return `branch ${ref.branch}`;
    case 'tag':
      return `tag ${ref.tag}`;
    case 'semver':
      return `semver ${ref.range}`;
    case 'commit':
      return ref.branch ? `commit ${ref.commit} on branch ${ref.branch}` : `commit ${ref.commit}`;
  }
}
