import type { CanaryMetric, CanaryRelease, Measurement } from '../api/canary-release.js';
import { parseDuration } from '../api/duration.js';
import type { MetricProvider, MetricTemplate } from '../api/metric-template.js';
import type { ReleaseNames } from '../rollout/names.js';
import { builtinQuery } from './builtin.js';
import { MetricConfigError, NoDataError } from './errors.js';
import { judgeMannWhitney, type SampleObservation } from './judge-mann-whitney.js';
import { judgeThreshold, type MeasurementContext, type Observation } from './judge-threshold.js';
import {
  authFromSecret,
  DEFAULT_QUERY_TIMEOUT_MS,
  ProviderCache,
  type MetricProviderClient,
  type ProviderAuth,
} from './prometheus.js';
import { renderTemplate, templateVariables, type Scope } from './template.js';

/**
 * One analysis of one release on one cluster: resolve each metric's query and provider,
 * query them (concurrently, bounded), judge, score. The rollout controller calls this once
 * per interval and decides on `verdict`:
 * - `pass`: the step passed;
 * - `fail`: a failed check (the controller counts it against `failureLimit`);
 * - `hold`: nothing can be concluded — no data with `onNoData: hold`, a query or provider
 *   error, a missing MetricTemplate or Secret. Never promote on it, never roll back on it by
 *   itself: a Prometheus outage must not decide a release. Persistent trouble is the
 *   controller's `rollbackSLA` / progress deadline, not this function's.
 * It never throws for a problem of one metric: that metric gets an `Error` measurement.
 */

export interface AnalysisRequest {
  release: CanaryRelease; // spec.analysis used
  cluster: string; // member cluster name, for {{ cluster }} and Measurement.cluster
  names: ReleaseNames;
  canaryWeight: number;
  now: Date;
}

export interface AnalysisDeps {
  /** MetricTemplate by name in the release's namespace; undefined when missing (→ a clear Error measurement, verdict hold). */
  template(namespace: string, name: string): Promise<MetricTemplate | undefined>;
  /** Secret data (base64 values) for provider auth; undefined when missing. */
  secret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /** Clients per (address, auth); the process-wide cache when unset. */
  providers?: ProviderCache;
  /** Queries of one analysis in flight at once; default 4. */
  concurrency?: number;
}

export interface AnalysisResult {
  verdict: 'pass' | 'fail' | 'hold';
  score: number; // 0..1
  measurements: Measurement[]; // one per metric (cluster set)
  /** The metric that most explains a fail: name, value text, threshold text — for the rollback record and commit message. */
  failing?: { metric: string; value?: string; threshold?: string };
  message: string; // one line for status/Events, e.g. "score 0.40 < 0.95: error-rate 0.2 (<= 0.05) failed"
}

/** Defaults the schema applies; repeated so a spec that skipped admission (tests, v1alpha1) behaves the same. */
const DEFAULT_SCORE_THRESHOLD = 0.95;
const DEFAULT_CONFIDENCE = 0.95;
const DEFAULT_INTERVAL_MS = 60_000;
const DEFAULT_CONCURRENCY = 4;

/**
 * The statistical judge samples each side this many times per window (fewer when the window
 * is short: the step is at least 1 s). Each sample aggregates over `{{ interval }}` =
 * max(step, 30 s), so a `rate()` has at least two scrapes at common scrape intervals.
 */
export const STAT_SAMPLES = 20;
export const STAT_MIN_SAMPLE_WINDOW_MS = 30_000;

const processProviders = new ProviderCache();

/** A metric resolved to a query template and where it runs. */
interface Plan {
  readonly metric: CanaryMetric;
  readonly template: string;
  readonly client: MetricProviderClient;
  readonly timeoutMs: number;
  readonly intervalMs: number;
}

function errorText(err: unknown): string {
  if (err instanceof Error)
    return err.name && err.name !== 'Error' ? `${err.name}: ${err.message}` : err.message;
  return String(err);
}

/** Runs `tasks` with at most `limit` in flight; results in order. */
async function bounded<T>(tasks: ReadonlyArray<() => Promise<T>>, limit: number): Promise<T[]> {
  const results = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, tasks.length)) }, worker));
  return results;
}

/** Analyses one release on one cluster. Never throws for a metric's problem (see the module doc). */
export async function analyze(req: AnalysisRequest, deps: AnalysisDeps): Promise<AnalysisResult> {
  const { release, names, now } = req;
  const analysis = release.spec.analysis ?? ({} as Partial<CanaryRelease['spec']['analysis']>);
  const metrics = analysis.metrics ?? [];
  const ctx: MeasurementContext = {
    cluster: req.cluster,
    canaryWeight: req.canaryWeight,
    measuredAt: now.toISOString(),
  };
  if (metrics.length === 0)
    return { verdict: 'hold', score: 0, measurements: [], message: 'hold: analysis has no metrics' };

  const providers = deps.providers ?? processProviders;
  const stepIntervalMs = parseDuration(release.spec.interval ?? '') ?? DEFAULT_INTERVAL_MS;
  // One Secret read per analysis, however many metrics share it.
  const secrets = new Map<string, Promise<ProviderAuth>>();
  const authFor = (provider: MetricProvider): Promise<ProviderAuth> => {
    const ref = provider.secretRef?.name;
    if (!ref) return Promise.resolve({ type: 'none' });
    let auth = secrets.get(ref);
    if (!auth) {
      auth = deps.secret(names.namespace, ref).then((data) => {
        if (!data)
          throw new MetricConfigError(`Secret ${names.namespace}/${ref} (provider secretRef) not found`);
        return authFromSecret(`${names.namespace}/${ref}`, data);
      });
      secrets.set(ref, auth);
    }
    return auth;
  };

  const resolve = async (metric: CanaryMetric): Promise<Plan> => {
    let template: string;
    let provider: MetricProvider | undefined;
    if (metric.templateRef) {
      const tpl = await deps.template(names.namespace, metric.templateRef.name);
      if (!tpl)
        throw new MetricConfigError(
          `MetricTemplate ${names.namespace}/${metric.templateRef.name} (templateRef) not found`,
        );
      template = tpl.spec.query;
      provider = tpl.spec.provider;
    } else if (metric.builtin) {
      template = builtinQuery(metric.builtin, metric.quantile);
      provider = analysis.provider;
    } else if (metric.query) {
      template = metric.query;
      provider = analysis.provider;
    } else {
      throw new MetricConfigError('metric sets none of query, templateRef or builtin');
    }
    if (!provider)
      throw new MetricConfigError('no provider: set analysis.provider for query and builtin metrics');
    if (provider.type !== 'prometheus')
      throw new MetricConfigError(
        `unknown provider type ${JSON.stringify(provider.type)}; known: prometheus`,
      );
    const timeoutMs = provider.timeout ? parseDuration(provider.timeout) : DEFAULT_QUERY_TIMEOUT_MS;
    if (timeoutMs === undefined)
      throw new MetricConfigError(`provider timeout ${provider.timeout} is not a duration`);
    const intervalMs = metric.interval ? parseDuration(metric.interval) : stepIntervalMs;
    if (intervalMs === undefined)
      throw new MetricConfigError(`interval ${metric.interval} is not a duration`);
    const client = providers.get(provider.address, await authFor(provider));
    return { metric, template, client, timeoutMs, intervalMs };
  };

  const render = (plan: Plan, windowMs: number, scope: Scope): string =>
    renderTemplate(
      plan.template,
      templateVariables(names, req.cluster, windowMs, scope),
      `metric ${plan.metric.name}`,
    );

  const asNoData = (err: unknown, query: string) =>
    err instanceof NoDataError
      ? { kind: 'noData' as const, message: `no data: query matched no series: ${query}` }
      : undefined;

  const limit = deps.concurrency ?? DEFAULT_CONCURRENCY;
  const scoreThreshold = analysis.scoreThreshold ?? DEFAULT_SCORE_THRESHOLD;

  if ((analysis.judge ?? 'threshold') === 'mannWhitney') {
    const confidence = analysis.confidence ?? DEFAULT_CONFIDENCE;
    const sample = async (plan: Plan, scope: Scope): Promise<SampleObservation> => {
      const stepMs = Math.max(1000, Math.round(plan.intervalMs / STAT_SAMPLES));
      let query = '';
      try {
        query = render(plan, Math.max(stepMs, STAT_MIN_SAMPLE_WINDOW_MS), scope);
        const r = await plan.client.rangeValues(
          query,
          new Date(now.getTime() - plan.intervalMs),
          now,
          stepMs / 1000,
          { timeoutMs: plan.timeoutMs },
        );
        return { kind: 'values', values: r.values, warnings: r.warnings };
      } catch (err) {
        return asNoData(err, query) ?? { kind: 'error', message: errorText(err) };
      }
    };
    const inputs = await bounded(
      metrics.map((metric) => async () => {
        let plan: Plan;
        try {
          plan = await resolve(metric);
        } catch (err) {
          const obs: SampleObservation = { kind: 'error', message: errorText(err) };
          return { metric, canary: obs, primary: obs };
        }
        const [canary, primary] = await Promise.all([sample(plan, 'canary'), sample(plan, 'primary')]);
        return { metric, canary, primary };
      }),
      limit,
    );
    return judgeMannWhitney(inputs, scoreThreshold, confidence, ctx);
  }

  const inputs = await bounded(
    metrics.map((metric) => async (): Promise<{ metric: CanaryMetric; observation: Observation }> => {
      let query = '';
      try {
        const plan = await resolve(metric);
        query = render(plan, plan.intervalMs, 'canary');
        const r = await plan.client.instantValue(query, now, { timeoutMs: plan.timeoutMs });
        return { metric, observation: { kind: 'value', value: r.value, warnings: r.warnings } };
      } catch (err) {
        return { metric, observation: asNoData(err, query) ?? { kind: 'error', message: errorText(err) } };
      }
    }),
    limit,
  );
  return judgeThreshold(inputs, scoreThreshold, ctx);
}
