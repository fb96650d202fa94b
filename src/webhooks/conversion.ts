/**
 * CanaryRelease v1 ⇄ v1alpha1, as pure functions (the conversion webhook only wraps them).
 *
 * Lossless both ways:
 * - v1 → v1alpha1 projects what v1alpha1 can say and keeps the whole v1 spec in the
 *   `sluice.dev/v1-spec` annotation;
 * - v1alpha1 → v1 starts from that annotation (when there is one) and lays over it every
 *   v1alpha1 field whose value differs from the annotation's projection — an edit made in
 *   v1alpha1 wins, everything v1alpha1 cannot see is restored exactly.
 * So v1 → v1alpha1 → v1 is the identity, and v1alpha1 → v1 → v1alpha1 is the identity apart
 * from the two conversion annotations. Status is the same type in both versions and is copied.
 *
 * The mapping (README, "CanaryRelease v1alpha1"):
 * - `targetService {name, port}` ⇄ `service.name`/`service.port`, and `targetRef` Deployment of that name;
 * - `trafficSplit {baseline, canary}` ⇄ `strategy: canary`, `steps.weights: [canary]` (the canary
 *   share is the one step; then the canary is promoted). From v1 the canary share is the last
 *   step's weight (`maxWeight`; 100 for blueGreen);
 * - `metrics[] {name, query, threshold, weight}` ⇄ `analysis.metrics[]` with `thresholdRange.min`
 *   (floor) or `.max` (ceiling) as `thresholdDirection` of the name says; `_` in a name becomes `-`
 *   (v1 names are DNS labels) and the original is kept in `sluice.dev/v1alpha1-metric-names`.
 *   A v1 metric v1alpha1 cannot say (templateRef, builtin, a two-sided range, a range on the side
 *   the name does not mean) is left out of the v1alpha1 list and restored from the annotation;
 * - without an annotation, the rest of v1 is filled in: `trafficRouting.provider: replicas`
 *   (no router object needed), `analysis.provider` Prometheus at the configured address.
 */
import { isDeepStrictEqual } from 'node:util';
import {
  thresholdDirection,
  v1MetricName,
  V1ALPHA1,
  type MetricV1alpha1,
} from '../api/canary-release-v1alpha1.js';
import { GROUP, VERSION } from '../api/common.js';

/** Annotation holding the v1 spec on a v1alpha1 object (JSON). */
export const V1_SPEC_ANNOTATION = 'sluice.dev/v1-spec';
/** Annotation on a v1 object mapping v1 metric names to the v1alpha1 names they came from (JSON). */
export const METRIC_NAMES_ANNOTATION = 'sluice.dev/v1alpha1-metric-names';
/** Where v1alpha1 metrics are queried when nothing else says (`--v1alpha1-prometheus-address`). */
export const DEFAULT_V1ALPHA1_PROMETHEUS = 'http://prometheus.monitoring:9090';

export const API_V1 = `${GROUP}/${VERSION}`;
export const API_V1ALPHA1 = `${GROUP}/${V1ALPHA1}`;

/** A JSON object as it comes off the wire. */
export type JsonObject = Record<string, unknown>;

/** Why an object cannot be converted; `field` is the path in the object being converted. */
export class ConversionError extends Error {
  override readonly name = 'ConversionError';
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super(`${field}: ${detail}`);
  }
}

/** Settings that fill in what a v1alpha1 object without the annotation cannot say. */
export interface ConversionOptions {
  prometheusAddress: string;
}

const DEFAULT_OPTIONS: ConversionOptions = { prometheusAddress: DEFAULT_V1ALPHA1_PROMETHEUS };

function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asObject(v: unknown): JsonObject {
  return isObject(v) ? v : {};
}

/** `o` without keys whose value is `undefined` (so deep equality means JSON equality). */
function compact(o: JsonObject): JsonObject {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function annotationsOf(obj: JsonObject): Record<string, string> {
  return asObject(asObject(obj.metadata).annotations) as Record<string, string>;
}

/** `obj` with its annotations replaced by `annotations` (the key removed when empty). */
function withAnnotations(
  obj: JsonObject,
  apiVersion: string,
  annotations: Record<string, string>,
): JsonObject {
  const metadata = { ...asObject(obj.metadata) };
  if (Object.keys(annotations).length > 0) metadata.annotations = annotations;
  else delete metadata.annotations;
  return { ...obj, apiVersion, metadata };
}

/** v1 name → v1alpha1 name, from the annotation; entries that do not map back are ignored. */
function readNameMap(annotations: Record<string, string>): Map<string, string> {
  const text = annotations[METRIC_NAMES_ANNOTATION];
  const out = new Map<string, string>();
  if (text === undefined) return out;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return out;
  }
  for (const [v1, alpha] of Object.entries(asObject(parsed)))
    if (typeof alpha === 'string' && v1MetricName(alpha) === v1) out.set(v1, alpha);
  return out;
}

/** The v1alpha1 form of one v1 metric, or `undefined` when v1alpha1 cannot say it. */
function projectMetric(m: JsonObject, names: Map<string, string>): MetricV1alpha1 | undefined {
  if (typeof m.query !== 'string' || typeof m.name !== 'string') return undefined;
  if (m.templateRef !== undefined || m.builtin !== undefined || m.quantile !== undefined) return undefined;
  const range = m.thresholdRange;
  if (!isObject(range)) return undefined;
  const name = names.get(m.name) ?? m.name;
  const dir = thresholdDirection(name);
  const hasMin = typeof range.min === 'number';
  const hasMax = typeof range.max === 'number';
  if (Object.keys(range).length !== 1) return undefined;
  let threshold: number;
  if (dir === 'floor' && hasMin) threshold = range.min as number;
  else if (dir === 'ceiling' && hasMax) threshold = range.max as number;
  else return undefined;
  return compact({
    name,
    query: m.query,
    threshold,
    weight: typeof m.weight === 'number' ? m.weight : undefined,
  }) as unknown as MetricV1alpha1;
}

/** The canary share v1alpha1 shows for a v1 spec: the last step's weight. */
function finalCanaryWeight(spec: JsonObject): number {
  if (spec.strategy === 'blueGreen') return 100;
  const steps = asObject(spec.steps);
  if (Array.isArray(steps.weights) && steps.weights.length > 0) {
    const last: unknown = steps.weights[steps.weights.length - 1];
    if (typeof last === 'number') return last;
  }
  if (typeof steps.maxWeight === 'number') return steps.maxWeight;
  return 100;
}

interface Projection {
  spec: JsonObject;
  /** Index in v1's `analysis.metrics` of every metric v1alpha1 does not show. */
  hidden: number[];
}

/** What v1alpha1 shows of a v1 spec. */
function projectSpec(spec: JsonObject, names: Map<string, string>): Projection {
  const service = asObject(spec.service);
  const targetRef = asObject(spec.targetRef);
  const canary = finalCanaryWeight(spec);
  const metrics: MetricV1alpha1[] = [];
  const hidden: number[] = [];
  const v1Metrics = asObject(spec.analysis).metrics;
  (Array.isArray(v1Metrics) ? v1Metrics : []).forEach((m: unknown, i) => {
    const p = isObject(m) ? projectMetric(m, names) : undefined;
    if (p) metrics.push(p);
    else hidden.push(i);
  });
  return {
    spec: {
      targetService: compact({ name: service.name ?? targetRef.name, port: service.port }),
      trafficSplit: { baseline: 100 - canary, canary },
      metrics,
    },
    hidden,
  };
}

/** v1 → v1alpha1. The input is not changed. */
export function canaryReleaseToV1alpha1(obj: JsonObject): JsonObject {
  const annotations = { ...annotationsOf(obj) };
  const spec = asObject(obj.spec);
  const { spec: alphaSpec } = projectSpec(spec, readNameMap(annotations));
  annotations[V1_SPEC_ANNOTATION] = JSON.stringify(spec);
  return { ...withAnnotations(obj, API_V1ALPHA1, annotations), spec: alphaSpec };
}

/** A v1 metric from a v1alpha1 one, over `base` (the v1 metric of the same name, if any). */
function metricFromAlpha(m: MetricV1alpha1, index: number, base: JsonObject | undefined): JsonObject {
  const field = `spec.metrics[${index}]`;
  const dir = thresholdDirection(m.name);
  if (dir === undefined) {
    throw new ConversionError(
      `${field}.threshold`,
      `metric name "${m.name}" does not say whether threshold ${m.threshold} is a floor (success, availability…) or a ceiling (latency, error…); rename it or use v1 thresholdRange`,
    );
  }
  const rest = { ...(base ?? {}) };
  for (const k of ['query', 'templateRef', 'builtin', 'quantile', 'thresholdRange', 'weight']) delete rest[k];
  return compact({
    ...rest,
    name: v1MetricName(m.name),
    query: m.query,
    thresholdRange: dir === 'floor' ? { min: m.threshold } : { max: m.threshold },
    weight: m.weight,
  });
}

/** The v1 spec a v1alpha1 object with no annotation stands for. */
function defaultV1Spec(alpha: JsonObject, opts: ConversionOptions): JsonObject {
  const ts = asObject(alpha.targetService);
  return {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: ts.name },
    service: compact({ name: ts.name, port: ts.port }),
    strategy: 'canary',
    trafficRouting: { provider: 'replicas' },
    analysis: { provider: { type: 'prometheus', address: opts.prometheusAddress }, metrics: [] },
  };
}

function parseV1Spec(annotations: Record<string, string>): JsonObject | undefined {
  const text = annotations[V1_SPEC_ANNOTATION];
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new ConversionError(
      `metadata.annotations[${V1_SPEC_ANNOTATION}]`,
      `not JSON (${(err as Error).message}); remove the annotation to convert from v1alpha1 fields alone`,
    );
  }
  if (!isObject(parsed))
    throw new ConversionError(`metadata.annotations[${V1_SPEC_ANNOTATION}]`, 'must be a JSON object');
  return parsed;
}

/** v1alpha1 → v1. Throws `ConversionError` (with the field path) for what has no v1 meaning. */
export function canaryReleaseToV1(obj: JsonObject, opts: ConversionOptions = DEFAULT_OPTIONS): JsonObject {
  const annotations = { ...annotationsOf(obj) };
  const alpha = asObject(obj.spec);
  const base = parseV1Spec(annotations);
  delete annotations[V1_SPEC_ANNOTATION];
  const oldNames = readNameMap(annotations);
  const out: JsonObject = structuredClone(base ?? defaultV1Spec(alpha, opts));
  const proj = base ? projectSpec(base, oldNames) : undefined;

  const ts = asObject(alpha.targetService);
  if (!proj || !isDeepStrictEqual(proj.spec.targetService, alpha.targetService)) {
    const oldName = asObject(proj?.spec.targetService).name;
    const targetRef = asObject(out.targetRef);
    if (proj && targetRef.name === oldName) out.targetRef = { ...targetRef, name: ts.name };
    out.service = compact({ ...asObject(out.service), name: ts.name, port: ts.port });
  }

  const split = asObject(alpha.trafficSplit);
  if (!proj || !isDeepStrictEqual(proj.spec.trafficSplit, alpha.trafficSplit)) {
    if (typeof split.canary !== 'number' || typeof split.baseline !== 'number')
      throw new ConversionError('spec.trafficSplit', 'baseline and canary must be numbers');
    if (split.baseline + split.canary !== 100)
      throw new ConversionError(
        'spec.trafficSplit',
        `baseline + canary must be 100, got ${split.baseline} + ${split.canary}`,
      );
    out.strategy = 'canary';
    out.steps = { weights: [split.canary] };
  }

  // Metrics: the v1alpha1 list in its order, each the base metric when unchanged; then every
  // metric v1alpha1 does not show put back at its old index.
  const alphaMetrics = (Array.isArray(alpha.metrics) ? alpha.metrics : []) as MetricV1alpha1[];
  const baseMetrics = (asObject(out.analysis).metrics ?? []) as JsonObject[];
  const projected = new Map((proj?.spec.metrics as MetricV1alpha1[] | undefined)?.map((m) => [m.name, m]));
  const seen = new Map<string, number>();
  const visible = alphaMetrics.map((m, i) => {
    const v1Name = v1MetricName(String(m.name));
    const dup = seen.get(v1Name);
    if (dup !== undefined)
      throw new ConversionError(
        `spec.metrics[${i}].name`,
        `"${m.name}" and spec.metrics[${dup}] "${alphaMetrics[dup]!.name}" are the same v1 metric "${v1Name}"; rename one`,
      );
    seen.set(v1Name, i);
    const baseMetric = baseMetrics.find((b) => b.name === v1Name);
    if (baseMetric && isDeepStrictEqual(projected.get(m.name), m)) return baseMetric;
    return metricFromAlpha(m, i, baseMetric);
  });
  const hidden = (proj?.hidden ?? [])
    .map((i) => ({ i, m: baseMetrics[i]! }))
    .filter(({ m }) => !seen.has(String(m.name)));
  const metrics = [...visible];
  for (const { i, m } of hidden) metrics.splice(Math.min(i, metrics.length), 0, m);
  // An absent list stays absent (v1 → v1alpha1 → v1 is the identity, not "[]").
  const hadMetrics = base === undefined || asObject(base.analysis).metrics !== undefined;
  if (metrics.length > 0 || hadMetrics) out.analysis = { ...asObject(out.analysis), metrics };

  // The v1alpha1 names that are not v1 names, kept so that v1alpha1 clients see theirs.
  const wanted = new Map<string, string | undefined>(
    alphaMetrics.map((m) => [v1MetricName(m.name), m.name === v1MetricName(m.name) ? undefined : m.name]),
  );
  const unchanged = [...wanted].every(([v1, a]) => oldNames.get(v1) === a);
  if (!unchanged || (annotations[METRIC_NAMES_ANNOTATION] !== undefined && oldNames.size === 0)) {
    const names: Record<string, string> = {};
    for (const m of metrics) {
      const v1 = String(m.name);
      const a = wanted.has(v1) ? wanted.get(v1) : oldNames.get(v1);
      if (a !== undefined) names[v1] = a;
    }
    if (Object.keys(names).length > 0) annotations[METRIC_NAMES_ANNOTATION] = JSON.stringify(names);
    else delete annotations[METRIC_NAMES_ANNOTATION];
  }
  return { ...withAnnotations(obj, API_V1, annotations), spec: out };
}

/**
 * Converts one CanaryRelease to `desiredAPIVersion` (what a ConversionReview asks). The same
 * version is returned unchanged, as the apiserver expects.
 */
export function convertCanaryRelease(
  obj: JsonObject,
  desiredAPIVersion: string,
  opts: ConversionOptions = DEFAULT_OPTIONS,
): JsonObject {
  const from = obj.apiVersion;
  if (from === desiredAPIVersion) return obj;
  if (from === API_V1 && desiredAPIVersion === API_V1ALPHA1) return canaryReleaseToV1alpha1(obj);
  if (from === API_V1ALPHA1 && desiredAPIVersion === API_V1) return canaryReleaseToV1(obj, opts);
  throw new ConversionError('apiVersion', `cannot convert ${String(from)} to ${desiredAPIVersion}`);
}
