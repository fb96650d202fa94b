/**
 * Why a metric query produced no usable number. The judges decide on the class: no data is
 * the metric's `onNoData`; everything else is an inconclusive measurement (verdict `hold`),
 * because an outage of the metrics backend must neither promote nor roll back by itself.
 */
export class MetricQueryError extends Error {
  override readonly name: string = 'MetricQueryError';
  /** The query as sent (rendered), so on-call can paste it into Prometheus. */
  readonly query: string;

  constructor(message: string, opts: { query: string; cause?: unknown }) {
    super(message, { cause: opts.cause });
    this.query = opts.query;
  }
}

/** The query matched no series: the canary may get no traffic yet, or the labels do not match. */
export class NoDataError extends MetricQueryError {
  override readonly name = 'NoDataError';
}

/** The query returned several series where the judge needs exactly one number. */
export class MultipleSeriesError extends MetricQueryError {
  override readonly name = 'MultipleSeriesError';
  readonly count: number;
  /** Label sets of the first few series, to show which label to aggregate away. */
  readonly labelSets: ReadonlyArray<Record<string, string>>;

  constructor(
    message: string,
    opts: { query: string; count: number; labelSets: ReadonlyArray<Record<string, string>> },
  ) {
    super(message, { query: opts.query });
    this.count = opts.count;
    this.labelSets = opts.labelSets;
  }
}

/** Prometheus refused or failed the query (HTTP error, PromQL error, unreachable backend). */
export class QueryError extends MetricQueryError {
  override readonly name = 'QueryError';
  /** HTTP status, 0 when no response arrived. */
  readonly status: number;
  /** Prometheus' `errorType` (`bad_data`, `execution`, …) or a network code. */
  readonly errorType: string;

  constructor(message: string, opts: { query: string; status: number; errorType: string; cause?: unknown }) {
    super(message, opts);
    this.status = opts.status;
    this.errorType = opts.errorType;
  }
}

/** No answer within the provider's per-query timeout (or Prometheus' own evaluation timeout). */
export class QueryTimeoutError extends MetricQueryError {
  override readonly name = 'QueryTimeoutError';
  readonly timeoutMs: number;

  constructor(message: string, opts: { query: string; timeoutMs: number; cause?: unknown }) {
    super(message, opts);
    this.timeoutMs = opts.timeoutMs;
  }
}

/**
 * The provider cannot be set up: a missing or malformed Secret, a missing MetricTemplate, a
 * template variable that does not exist. Retrying cannot help until the spec or Secret changes.
 */
export class MetricConfigError extends Error {
  override readonly name = 'MetricConfigError';

  constructor(message: string, opts: { cause?: unknown } = {}) {
    super(message, { cause: opts.cause });
  }
}
