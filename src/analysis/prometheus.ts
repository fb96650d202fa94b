import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import { PrometheusDriver } from 'prometheus-query';
import type { AxiosError, AxiosResponse, InternalAxiosRequestConfig } from 'axios';
import {
  MultipleSeriesError,
  NoDataError,
  QueryError,
  QueryTimeoutError,
  MetricConfigError,
} from './errors.js';

export { formatSampleValue, parseSampleValue } from './values.js';

/**
 * A Prometheus-compatible metric provider (Prometheus, Mimir, Thanos, VictoriaMetrics) over
 * `prometheus-query`, normalised (notes/libraries.md):
 * - the library throws plain objects: every failure here is an `Error` subclass with `cause`;
 * - it parses `+Inf`/`-Inf` to `NaN`: a response interceptor rewrites the raw sample text to
 *   `Infinity`/`-Infinity` first, so NaN, +Inf and -Inf stay distinct;
 * - its `warningHook` never fires (it reads the wrong field): the interceptor reads the
 *   body's `warnings` (and `infos`) itself;
 * - its timeout is per client: each query gets its own deadline through an AbortSignal, so
 *   one cached client serves metrics with different timeouts.
 */

/** Credentials for the metrics API. */
export type ProviderAuth =
  | { readonly type: 'none' }
  | { readonly type: 'basic'; readonly username: string; readonly password: string }
  | { readonly type: 'bearer'; readonly token: string };

/** A number and what the backend warned about while computing it (partial data, etc.). */
export interface InstantValue {
  readonly value: number;
  readonly warnings: readonly string[];
}

/** Samples of one series over a range, oldest first. */
export interface RangeValues {
  readonly values: readonly number[];
  readonly warnings: readonly string[];
}

/** Per-query options. */
export interface QueryOptions {
  /** Deadline for this query; Prometheus is also asked to stop evaluating after it. */
  readonly timeoutMs?: number;
}

/** The metric-provider interface the judges use. */
export interface MetricProviderClient {
  /** Exactly one series (or a scalar) → its value. No series → NoDataError; several → MultipleSeriesError. */
  instant(query: string, at?: Date, opts?: QueryOptions): Promise<number>;
  instantValue(query: string, at?: Date, opts?: QueryOptions): Promise<InstantValue>;
  /** Exactly one series' samples in [start, end] every `stepSeconds`. */
  range(query: string, start: Date, end: Date, stepSeconds: number, opts?: QueryOptions): Promise<number[]>;
  rangeValues(
    query: string,
    start: Date,
    end: Date,
    stepSeconds: number,
    opts?: QueryOptions,
  ): Promise<RangeValues>;
}

/** Default per-query timeout, as the schema's default `timeout: 30s`. */
export const DEFAULT_QUERY_TIMEOUT_MS = 30_000;
/** How many label sets a MultipleSeriesError names. */
const LABEL_SETS_SHOWN = 3;

/** What one in-flight query shares with the interceptors of the (shared) axios instance. */
interface QueryContext {
  readonly signal: AbortSignal;
  warnings: string[];
  status?: number;
}
const queryContext = new AsyncLocalStorage<QueryContext>();

/** Rewrites sample text so that `parseFloat` (the library's parser) reads ±Inf correctly. */
function jsSampleText(text: unknown): unknown {
  if (text === '+Inf' || text === 'Inf') return 'Infinity';
  if (text === '-Inf') return '-Infinity';
  return text;
}

type RawSample = [number, unknown];
interface RawSeries {
  metric?: Record<string, string>;
  value?: RawSample;
  values?: RawSample[];
}

function rewriteInfinities(body: unknown): void {
  const data = (body as { data?: { resultType?: string; result?: unknown } } | undefined)?.data;
  if (!data || !Array.isArray(data.result)) return;
  if (data.resultType === 'scalar') {
    const s = data.result as unknown as RawSample;
    s[1] = jsSampleText(s[1]);
    return;
  }
  for (const series of data.result as RawSeries[]) {
    if (series.value) series.value[1] = jsSampleText(series.value[1]);
    for (const v of series.values ?? []) v[1] = jsSampleText(v[1]);
  }
}

function collectWarnings(body: unknown): void {
  const ctx = queryContext.getStore();
  if (!ctx || !body || typeof body !== 'object') return;
  const b = body as { warnings?: unknown; infos?: unknown };
  for (const list of [b.warnings, b.infos])
    if (Array.isArray(list)) for (const w of list) ctx.warnings.push(String(w));
}

interface LibraryError {
  status?: string;
  errorType?: string;
  error?: string;
  httpStatus?: number;
  code?: string;
  data?: unknown;
}

/** Basic-auth or bearer header values never appear in messages: only Prometheus' own text does. */
function describe(err: LibraryError, httpStatus: number | undefined): string {
  if (err.errorType === 'http_error') return err.error ?? `HTTP ${httpStatus}`;
  if (err.errorType === 'client_error') {
    const text = typeof err.data === 'string' ? err.data.trim().slice(0, 200) : '';
    return httpStatus ? `HTTP ${httpStatus}${text ? `: ${text}` : ''}` : 'unexpected response';
  }
  return err.error ?? 'unknown error';
}

/** One client for one (address, auth); safe to share between releases and concurrent queries. */
export class PrometheusProvider implements MetricProviderClient {
  readonly address: string;
  readonly #driver: PrometheusDriver;

  constructor(address: string, auth: ProviderAuth = { type: 'none' }) {
    let url: URL;
    try {
      url = new URL(address);
    } catch (cause) {
      throw new MetricConfigError(`provider address ${JSON.stringify(address)} is not a URL`, { cause });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new MetricConfigError(`provider address ${address} must be http:// or https://`);
    this.address = address.replace(/\/+$/, '');
    // A path prefix (Mimir's /prometheus, a reverse proxy) stays part of the endpoint.
    this.#driver = new PrometheusDriver({
      endpoint: this.address,
      baseURL: '/api/v1/',
      // POST: long templated queries do not hit URL length limits.
      preferPost: true,
      // The real deadline is the per-query AbortSignal; this only bounds a stuck socket.
      timeout: 10 * 60_000,
      ...(auth.type === 'basic' ? { auth: { username: auth.username, password: auth.password } } : {}),
      ...(auth.type === 'bearer' ? { headers: { Authorization: `Bearer ${auth.token}` } } : {}),
      requestInterceptor: {
        onFulfilled: (config: InternalAxiosRequestConfig) => {
          const ctx = queryContext.getStore();
          if (ctx) config.signal = ctx.signal;
          return config;
        },
      },
      responseInterceptor: {
        onFulfilled: (res: AxiosResponse) => {
          rewriteInfinities(res.data);
          collectWarnings(res.data);
          return res;
        },
        onRejected: (err: AxiosError) => {
          const ctx = queryContext.getStore();
          if (ctx && err.response) ctx.status = err.response.status;
          throw err;
        },
      },
    });
  }

  async instant(query: string, at?: Date, opts?: QueryOptions): Promise<number> {
    return (await this.instantValue(query, at, opts)).value;
  }

  async instantValue(query: string, at: Date = new Date(), opts: QueryOptions = {}): Promise<InstantValue> {
    const { result, warnings } = await this.#run(query, opts, (timeout) =>
      this.#driver.instantQuery(query, at, timeout),
    );
    if (result.resultType === 'scalar') {
      const [, v] = result.result as unknown as RawSample;
      return { value: Number(v), warnings };
    }
    if (result.resultType !== 'vector')
      throw new QueryError(`query returned a ${result.resultType}, not a single number`, {
        query,
        status: 200,
        errorType: 'bad_result',
      });
    const series = result.result as Array<{
      metric: { name?: string; labels?: object } | null;
      value: { value: number };
    }>;
    this.#exactlyOne(query, series);
    return { value: series[0]!.value.value, warnings };
  }

  async range(
    query: string,
    start: Date,
    end: Date,
    stepSeconds: number,
    opts?: QueryOptions,
  ): Promise<number[]> {
    return [...(await this.rangeValues(query, start, end, stepSeconds, opts)).values];
  }

  async rangeValues(
    query: string,
    start: Date,
    end: Date,
    stepSeconds: number,
    opts: QueryOptions = {},
  ): Promise<RangeValues> {
    const { result, warnings } = await this.#run(query, opts, (timeout) =>
      this.#driver.rangeQuery(query, start, end, stepSeconds, timeout),
    );
    if (result.resultType !== 'matrix')
      throw new QueryError(`range query returned a ${result.resultType}, not a matrix`, {
        query,
        status: 200,
        errorType: 'bad_result',
      });
    const series = result.result as Array<{
      metric: { name?: string; labels?: object } | null;
      values: Array<{ value: number }>;
    }>;
    this.#exactlyOne(query, series);
    return { values: series[0]!.values.map((s) => s.value), warnings };
  }

  #exactlyOne(
    query: string,
    series: ReadonlyArray<{ metric: { name?: string; labels?: object } | null }>,
  ): void {
    if (series.length === 0) throw new NoDataError('no data: the query matched no series', { query });
    if (series.length > 1) {
      const labelSets = series.slice(0, LABEL_SETS_SHOWN).map((s) => {
        const labels = { ...((s.metric?.labels ?? {}) as Record<string, string>) };
        if (s.metric?.name) labels.__name__ = s.metric.name;
        return labels;
      });
      const shown = labelSets.map(
        (l) =>
          `{${Object.entries(l)
            .map(([k, v]) => `${k}="${v}"`)
            .join(', ')}}`,
      );
      throw new MultipleSeriesError(
        `the query returned ${series.length} series, expected exactly one (aggregate with sum/avg/max): ${shown.join(' ')}${series.length > LABEL_SETS_SHOWN ? ' …' : ''}`,
        { query, count: series.length, labelSets },
      );
    }
  }

  async #run<T>(
    query: string,
    opts: QueryOptions,
    call: (prometheusTimeout: string) => Promise<T>,
  ): Promise<{ result: T; warnings: string[] }> {
    const timeoutMs = opts.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS;
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const ctx: QueryContext = { signal: controller.signal, warnings: [] };
    try {
      // Prometheus stops evaluating at the same deadline (its `timeout` parameter).
      const result = await queryContext.run(ctx, () => call(`${Math.max(1, Math.ceil(timeoutMs / 1000))}s`));
      return { result, warnings: ctx.warnings };
    } catch (thrown) {
      if (controller.signal.aborted)
        throw new QueryTimeoutError(`no answer from ${this.address} within ${timeoutMs}ms`, {
          query,
          timeoutMs,
          cause: thrown,
        });
      throw this.#normalise(query, thrown, ctx.status, timeoutMs);
    } finally {
      clearTimeout(timer);
    }
  }

  #normalise(query: string, thrown: unknown, status: number | undefined, timeoutMs: number): Error {
    if (thrown instanceof Error && !(thrown as { isAxiosError?: boolean }).isAxiosError)
      return new QueryError(`${this.address}: ${thrown.message}`, {
        query,
        status: status ?? 0,
        errorType: 'client_error',
        cause: thrown,
      });
    const err = (thrown ?? {}) as LibraryError;
    const httpStatus = err.httpStatus ?? status ?? 0;
    const prometheusType = (err as { prometheus?: { errorType?: string } }).prometheus?.errorType;
    if (err.errorType === 'timeout_error' || prometheusType === 'timeout')
      return new QueryTimeoutError(`${this.address}: ${err.error ?? 'query timed out'}`, {
        query,
        timeoutMs,
        cause: thrown,
      });
    const errorType = prometheusType ?? err.code ?? err.errorType ?? 'unknown';
    return new QueryError(`${this.address}: ${describe(err, httpStatus)}`, {
      query,
      status: httpStatus,
      errorType,
      cause: thrown,
    });
  }
}

/**
 * Secret data (base64 values, as the API returns them) → provider credentials: keys
 * `username` + `password` → basic auth; `token` → bearer. Anything else is a
 * MetricConfigError naming the Secret and the keys it has (never their values).
 */
export function authFromSecret(secretName: string, data: Readonly<Record<string, string>>): ProviderAuth {
  const keys = Object.keys(data).sort();
  const decode = (key: string): string | undefined => {
    const raw = data[key];
    if (raw === undefined) return undefined;
    const compact = raw.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1)
      throw new MetricConfigError(`Secret ${secretName}: key ${key} is not valid base64`);
    const text = Buffer.from(compact, 'base64')
      .toString('utf8')
      .replace(/\r?\n$/, '');
    if (text === '') throw new MetricConfigError(`Secret ${secretName}: key ${key} is empty`);
    return text;
  };
  const has = (k: string) => keys.includes(k);
  if (has('token') && (has('username') || has('password')))
    throw new MetricConfigError(
      `Secret ${secretName}: set either token (bearer) or username and password (basic), not both`,
    );
  if (has('token')) return { type: 'bearer', token: decode('token')! };
  if (has('username') !== has('password'))
    throw new MetricConfigError(
      `Secret ${secretName}: basic auth needs both username and password; it has ${has('username') ? 'username' : 'password'} only`,
    );
  if (has('username')) return { type: 'basic', username: decode('username')!, password: decode('password')! };
  throw new MetricConfigError(
    `Secret ${secretName}: needs keys username and password (basic auth) or token (bearer); it has ${keys.length ? keys.join(', ') : 'no keys'}`,
  );
}

/**
 * One client per (address, credentials), so 200 releases × 3 metrics against one Prometheus
 * share one client and one connection pool. Keyed by a hash, so credentials are not kept as
 * map keys; bounded, least recently used dropped first.
 */
export class ProviderCache {
  readonly #clients = new Map<string, MetricProviderClient>();
  readonly #max: number;
  readonly #create: (address: string, auth: ProviderAuth) => MetricProviderClient;

  constructor(
    opts: { max?: number; create?: (address: string, auth: ProviderAuth) => MetricProviderClient } = {},
  ) {
    this.#max = opts.max ?? 64;
    this.#create = opts.create ?? ((address, auth) => new PrometheusProvider(address, auth));
  }

  get size(): number {
    return this.#clients.size;
  }

  get(address: string, auth: ProviderAuth = { type: 'none' }): MetricProviderClient {
    const key = createHash('sha256')
      .update(JSON.stringify([address.replace(/\/+$/, ''), auth]))
      .digest('hex');
    let client = this.#clients.get(key);
    if (client) {
      this.#clients.delete(key);
    } else {
      client = this.#create(address, auth);
      if (this.#clients.size >= this.#max) this.#clients.delete(this.#clients.keys().next().value!);
    }
    this.#clients.set(key, client);
    return client;
  }
}
