import type { HttpClient } from 'isomorphic-git';
import nodeHttp from 'isomorphic-git/http/node';
import { GitError, redact } from './errors.js';

/** Default bound on one HTTP request to a Git server (headers and body). */
export const DEFAULT_GIT_TIMEOUT_MS = 60_000;

/**
 * isomorphic-git's Node HTTP client with a bound on every request: its own client has no
 * timeout, so a server that accepts the connection and then stalls would hang a reconcile
 * forever. The bound covers the whole request including the body download; an expired
 * request fails with a `TimeoutError`, which `normalizeGitError` maps to `Unreachable`.
 */
export function gitHttpClient(timeoutMs: number = DEFAULT_GIT_TIMEOUT_MS): HttpClient {
  return {
    request: (req) => nodeHttp.request({ ...req, signal: req.signal ?? AbortSignal.timeout(timeoutMs) }),
  };
}

/**
 * Throws a terminal `GitError('FetchFailed')` unless `url` is an absolute `http://` or
 * `https://` URL. isomorphic-git speaks HTTP(S) only, and `listServerRefs` does not check:
 * an scp-style `git@host:org/repo.git` would otherwise be requested as a relative path and
 * fail as a misleading "connection refused".
 */
export function assertHttpUrl(url: string): void {
  let protocol: string | undefined;
  try {
    protocol = new URL(url).protocol;
  } catch {
    protocol = undefined;
  }
  if (protocol !== 'http:' && protocol !== 'https:') {
    throw new GitError(
      `unsupported Git URL ${JSON.stringify(redact(url))}: only http:// and https:// URLs are supported (no SSH, git:// or file://)`,
      { reason: 'FetchFailed', terminal: true },
    );
  }
}
