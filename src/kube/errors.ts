import { ApiException } from '@kubernetes/client-node';

/** Why a Kubernetes call failed, in the terms a reconciler decides on. */
export type KubeErrorReason =
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'Forbidden'
  | 'Unauthorized'
  | 'BadRequest'
  | 'TooManyRequests'
  | 'Timeout'
  | 'ServerError'
  | 'Unreachable'
  | 'Unknown';

/**
 * A failed call to a Kubernetes API server, normalised once from whatever the client
 * library threw (an `ApiException` whose body is raw text, a fetch/socket error, or a
 * plain object). `message` never contains response headers or credentials.
 */
export class KubeError extends Error {
  override readonly name = 'KubeError';
  /** HTTP status, 0 when no response arrived. */
  readonly status: number;
  readonly reason: KubeErrorReason;
  /** Field-level causes from a 422 Status (`details.causes`), e.g. `spec.weights[0]`. */
  readonly causes: ReadonlyArray<{ field?: string; message?: string; reason?: string }>;

  constructor(
    message: string,
    opts: {
      status: number;
      reason: KubeErrorReason;
      causes?: KubeError['causes'];
      cause?: unknown;
    },
  ) {
    super(message, { cause: opts.cause });
    this.status = opts.status;
    this.reason = opts.reason;
    this.causes = opts.causes ?? [];
  }
}

interface StatusBody {
  kind?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: Array<{ field?: string; message?: string; reason?: string }> };
}

function parseBody(body: unknown): StatusBody | undefined {
  if (body && typeof body === 'object') return body as StatusBody;
  if (typeof body !== 'string' || body === '') return undefined;
  try {
    const parsed: unknown = JSON.parse(body);
    return parsed && typeof parsed === 'object' ? (parsed as StatusBody) : undefined;
  } catch {
    return { message: body.slice(0, 500) };
  }
}

function reasonForStatus(status: number, statusReason?: string): KubeErrorReason {
  switch (status) {
    case 400:
      return 'BadRequest';
    case 401:
      return 'Unauthorized';
    case 403:
      return 'Forbidden';
    case 404:
      return 'NotFound';
    case 409:
      return statusReason === 'AlreadyExists' ? 'AlreadyExists' : 'Conflict';
    case 410:
      return 'Gone';
    case 422:
      return 'Invalid';
    case 429:
      return 'TooManyRequests';
    case 504:
      return 'Timeout';
    default:
      return status >= 500 ? 'ServerError' : 'Unknown';
  }
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
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function networkCode(err: unknown, depth = 0): string | undefined {
  if (!err || typeof err !== 'object' || depth > 4) return undefined;
  const e = err as { code?: unknown; errno?: unknown; cause?: unknown; type?: unknown };
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return e.code;
  if (e.type === 'request-timeout' || e.type === 'aborted') return 'ETIMEDOUT';
  return networkCode(e.cause, depth + 1);
}

/**
 * The one normaliser for errors from `@kubernetes/client-node`. Always returns a
 * `KubeError`; `context` (e.g. `"apply apps/v1 Deployment web"`) prefixes the message.
 */
export function normalizeKubeError(err: unknown, context?: string): KubeError {
  if (err instanceof KubeError) return err;
  const prefix = context ? `${context}: ` : '';
  // client-node's Watch rejects with an Error carrying `statusCode` (no body) on a non-200 answer.
  const watchStatus = (err as { statusCode?: unknown } | null)?.statusCode;
  if (err instanceof Error && typeof watchStatus === 'number') {
    return new KubeError(`${prefix}${err.message}`, {
      status: watchStatus,
      reason: reasonForStatus(watchStatus),
      cause: err,
    });
  }
  if (err instanceof ApiException || (err && typeof err === 'object' && 'code' in err && 'body' in err)) {
    const e = err as { code: number; body: unknown };
    const body = parseBody(e.body);
    const status = typeof e.code === 'number' ? e.code : (body?.code ?? 0);
    const reason = reasonForStatus(status, body?.reason);
    const message = body?.message ?? `HTTP ${status}`;
    return new KubeError(`${prefix}${message}`, {
      status,
      reason,
      causes: body?.details?.causes,
      cause: err,
    });
  }
  const code = networkCode(err);
  if (code) {
    const detail = err instanceof Error ? err.message : code;
    return new KubeError(`${prefix}API server unreachable (${code}): ${detail}`, {
      status: 0,
      reason: code === 'ETIMEDOUT' ? 'Timeout' : 'Unreachable',
      cause: err,
    });
  }
  const message =
    err instanceof Error
      ? err.message
      : err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string'
        ? (err as { message: string }).message
        : typeof err === 'object'
          ? JSON.stringify(err)
          : String(err);
  return new KubeError(`${prefix}${message}`, { status: 0, reason: 'Unknown', cause: err });
}

const is = (reason: KubeErrorReason) => (err: unknown) => normalizeKubeError(err).reason === reason;

export const isNotFound = is('NotFound');
export const isAlreadyExists = is('AlreadyExists');
export const isConflict = is('Conflict');
export const isGone = is('Gone');
export const isInvalid = is('Invalid');
export const isForbidden = is('Forbidden');
export const isUnauthorized = is('Unauthorized');
/** True when no HTTP answer came back at all (refused, reset, timed out). */
export const isUnreachable = (err: unknown): boolean => {
  const r = normalizeKubeError(err).reason;
  return r === 'Unreachable' || r === 'Timeout';
};
