import type { Writable } from 'node:stream';
import winston from 'winston';

/** Log levels Sluice uses, most to least severe. */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug';

/** The logger type every module takes: a winston logger (use `.child({...})` for context). */
export type Logger = winston.Logger;

/** Options of `createLogger`; all optional. */
export interface LoggerOptions {
  /** Lowest level written; default `info`. */
  level?: LogLevel;
  /** Where the JSON lines go; default stdout. Tests pass a stream to capture lines. */
  stream?: Writable;
  /** Fields added to every line, e.g. `{ component: 'sluice-controller' }`. */
  defaultMeta?: Record<string, unknown>;
}

// Keys whose values are credentials wherever they appear in log metadata. Matched on the end of
// the key so that `accessToken` is hidden but `secretName` (a reference, useful to see) is not.
const SECRET_KEY =
  /(password|passwd|secret|token|authorization|api[-_]?key|private[-_]?key|credentials?|kubeconfig|cookie)$/i;
// Credentials embedded in free text: HTTP auth headers and userinfo in URLs.
const SECRET_TEXT: Array<[RegExp, string]> = [
  [/\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+/g, '$1 [REDACTED]'],
  [/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+:[^\s/@]+@/gi, '$1[REDACTED]@'],
];
const REDACTED = '[REDACTED]';

function redactText(text: string): string {
  return SECRET_TEXT.reduce((s, [re, replacement]) => s.replace(re, replacement), text);
}

function redactValue(value: unknown, depth: number): unknown {
  if (typeof value === 'string') return redactText(value);
  if (value instanceof Error) return redactText(value.message);
  if (!value || typeof value !== 'object' || depth > 6) return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_KEY.test(k) ? REDACTED : redactValue(v, depth + 1);
  }
  return out;
}

/**
 * A winston format that replaces values under credential-like keys (`token`, `password`,
 * `authorization`, `kubeconfig`, …), bearer/basic auth text and URL userinfo with
 * `[REDACTED]`, and turns `Error` values into their message (stacks and `cause` chains can
 * carry request headers, see notes on `ApiException`).
 */
export const redact = winston.format((info) => {
  // winston keeps level/message under both string and Symbol keys: only the string keys are
  // ours to rewrite, the Symbol ones are read by the transports.
  for (const key of Object.keys(info)) {
    if (key === 'level') continue;
    info[key] = SECRET_KEY.test(key) ? REDACTED : redactValue(info[key], 0);
  }
  return info;
});

/**
 * The one logger factory: one JSON object per line with `timestamp`, `level`, `message` and
 * the metadata given, secrets redacted (see `redact`). Use `logger.child({ controller })` to
 * add context; children share the parent's transport and redaction.
 */
export function createLogger(opts: LoggerOptions = {}): Logger {
  const transport = opts.stream
    ? new winston.transports.Stream({ stream: opts.stream })
    : new winston.transports.Console();
  return winston.createLogger({
    level: opts.level ?? 'info',
    defaultMeta: opts.defaultMeta,
    format: winston.format.combine(redact(), winston.format.timestamp(), winston.format.json()),
    transports: [transport],
  });
}

/** A logger that writes nothing, for callers that were given none. */
export function silentLogger(): Logger {
  return winston.createLogger({
    silent: true,
    transports: [new winston.transports.Console({ silent: true })],
  });
}

/** Parses a level name (e.g. from `--log-level`); throws an `Error` listing the valid ones. */
export function parseLogLevel(value: string): LogLevel {
  const levels: readonly LogLevel[] = ['error', 'warn', 'info', 'debug'];
  if ((levels as readonly string[]).includes(value)) return value as LogLevel;
  throw new Error(`unknown log level "${value}": use one of ${levels.join(', ')}`);
}
