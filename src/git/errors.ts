/**
 * Why a Git operation failed, in the terms a GitSource reconciler decides on (and the
 * condition reasons users see, after Flux's vocabulary).
 */
export type GitErrorReason =
  | 'AuthFailed'
  | 'RefNotFound'
  | 'FetchFailed'
  | 'Unreachable'
  | 'PushRejected'
  | 'Conflict'
  | 'ArtifactFailed';

/**
 * A failed Git operation, normalised once from whatever isomorphic-git, Node's HTTP stack
 * or the filesystem threw. `message` never contains a password, token, Authorization
 * header or credentials embedded in a URL.
 */
export class GitError extends Error {
  override readonly name = 'GitError';
  readonly reason: GitErrorReason;
  /** HTTP status the Git server answered, 0 when none (network error, local failure). */
  readonly status: number;
  /**
   * True when retrying cannot help until the spec or Secret changes (an invalid ref spec,
   * a Secret missing a key, an unsupported URL scheme): the workqueue must not back off and
   * retry it; the reconciler reports it as Stalled.
   */
  readonly terminal: boolean;

  constructor(
    message: string,
    opts: { reason: GitErrorReason; status?: number; terminal?: boolean; cause?: unknown },
  ) {
    super(message, { cause: opts.cause });
    this.reason = opts.reason;
    this.status = opts.status ?? 0;
    this.terminal = opts.terminal ?? false;
  }
}

/** Options for {@link normalizeGitError}. */
export interface NormalizeGitErrorOptions {
  /**
   * Values that must never appear in a message (passwords, tokens): replaced by `***`.
   * Values shorter than 3 characters cannot be told apart from ordinary text and are left.
   */
  secrets?: readonly string[];
  /** Reason for errors no rule recognises. Default `FetchFailed`. */
  fallback?: GitErrorReason;
}

const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EPIPE',
  'EAI_AGAIN',
  'ABORT_ERR',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

interface ErrorLike {
  code?: unknown;
  name?: unknown;
  message?: unknown;
  cause?: unknown;
  data?: Record<string, unknown>;
}

function networkCode(err: unknown, depth = 0): string | undefined {
  if (!err || typeof err !== 'object' || depth > 4) return undefined;
  const e = err as ErrorLike;
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return e.code;
  // AbortSignal.timeout() aborts with a DOMException named TimeoutError (see transport.ts).
  if (e.name === 'TimeoutError') return 'ETIMEDOUT';
  if (e.name === 'AbortError') return 'ABORT_ERR';
  return networkCode(e.cause, depth + 1);
}

/**
 * Removes credentials from `text`: every value in `secrets` (of 3 or more characters), the
 * user-info part of URLs (`https://user:pass@host` → `https://***@host`) and Basic/Bearer
 * header values.
 */
export function redact(text: string, secrets: readonly string[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 3) out = out.split(secret).join('***');
  }
  return out
    .replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s]+@/gi, '$1***@')
    .replace(/\b(Basic|Bearer)\s+[A-Za-z0-9._~+/=-]+/g, '$1 ***');
}

function httpDetail(status: number, statusMessage: unknown): string {
  const text = typeof statusMessage === 'string' && statusMessage ? ` ${statusMessage}` : '';
  return `HTTP ${status}${text}`;
}

/**
 * The one normaliser for errors from isomorphic-git (and the Node HTTP and fs calls under
 * it). Always returns a `GitError` whose message starts with `context` (e.g. `"fetch
 * https://git.example/app.git main"`) and is redacted. Rules, in order:
 *
 * - a `GitError` passes through unchanged;
 * - `HttpError` 401/403, `UserCanceledError` (an `onAuth` that gave up) → `AuthFailed`;
 *   404 → `FetchFailed` (repository not found); other statuses → `FetchFailed`;
 * - `NotFoundError`, `CommitNotFetchedError` (a ref or commit the remote does not have) →
 *   `RefNotFound`;
 * - a socket-level failure anywhere in the `cause` chain (ECONNREFUSED, ECONNRESET,
 *   ETIMEDOUT, an aborted request, …) → `Unreachable`;
 * - `PushRejectedError`, `GitPushError` → `PushRejected`;
 * - `MergeConflictError`, `CheckoutConflictError`, `MergeNotSupportedError` → `Conflict`;
 * - `UrlParseError`, `UnknownTransportError`, Node's `ERR_INVALID_PROTOCOL` → `FetchFailed`,
 *   terminal (isomorphic-git speaks HTTP(S) only: no SSH, `git://` or `file://`);
 * - anything else → `opts.fallback` (default `FetchFailed`).
 */
export function normalizeGitError(
  err: unknown,
  context: string,
  opts: NormalizeGitErrorOptions = {},
): GitError {
  if (err instanceof GitError) return err;
  const secrets = opts.secrets ?? [];
  const make = (
    detail: string,
    reason: GitErrorReason,
    extra: { status?: number; terminal?: boolean } = {},
  ) => new GitError(redact(`${context}: ${detail}`, secrets), { reason, cause: err, ...extra });

  const e = (err && typeof err === 'object' ? err : {}) as ErrorLike;
  const message = redact(
    err instanceof Error ? err.message : typeof e.message === 'string' ? e.message : String(err),
    secrets,
  );
  // isomorphic-git's errors carry their class name in `code`; match on it rather than
  // `instanceof`, which breaks when the CJS and ESM builds are both loaded.
  const code = typeof e.code === 'string' ? e.code : undefined;
  const data = e.data ?? {};

  switch (code) {
    case 'HttpError': {
      const status = typeof data.statusCode === 'number' ? data.statusCode : 0;
      const http = httpDetail(status, data.statusMessage);
      if (status === 401) {
        return make(`authentication failed (${http}): check the credentials in the Secret`, 'AuthFailed', {
          status,
        });
      }
      if (status === 403)
        return make(`access denied (${http}): the credentials lack access`, 'AuthFailed', { status });
      if (status === 404) return make(`repository not found (${http})`, 'FetchFailed', { status });
      return make(`the Git server answered ${http}`, 'FetchFailed', { status });
    }
    case 'UserCanceledError':
      return make('authentication failed: no credentials were accepted', 'AuthFailed');
    case 'NotFoundError':
      return make(
        `${typeof data.what === 'string' ? data.what : 'ref'} not found on the remote`,
        'RefNotFound',
      );
    case 'CommitNotFetchedError':
      return make(message, 'RefNotFound');
    case 'PushRejectedError':
    case 'GitPushError':
      return make(`push rejected: ${message}`, 'PushRejected');
    case 'MergeConflictError':
    case 'CheckoutConflictError':
    case 'MergeNotSupportedError':
      return make(message, 'Conflict');
    case 'UrlParseError':
    case 'UnknownTransportError':
      return make(`${message} (only http:// and https:// Git URLs are supported)`, 'FetchFailed', {
        terminal: true,
      });
    case 'ERR_INVALID_PROTOCOL':
      return make(`${message} (only http:// and https:// Git URLs are supported)`, 'FetchFailed', {
        terminal: true,
      });
    case 'SmartHttpError':
      return make(`not a Git smart-HTTP endpoint: ${message}`, 'FetchFailed');
    default:
      break;
  }

  const net = networkCode(err);
  if (net) {
    const why = net === 'ETIMEDOUT' || net === 'ABORT_ERR' ? 'timed out' : 'unreachable';
    return make(`Git server ${why} (${net}): ${message}`, 'Unreachable');
  }
  return make(message, opts.fallback ?? 'FetchFailed');
}

/** True when `err` is a `GitError` with one of `reasons`. */
export function isGitError(err: unknown, ...reasons: GitErrorReason[]): err is GitError {
  return err instanceof GitError && (reasons.length === 0 || reasons.includes(err.reason));
}
