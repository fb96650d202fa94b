/**
 * CanaryRelease `v1alpha1`: the shape release engineers already write. Served next to `v1`
 * (the storage version) and converted both ways by the conversion webhook
 * (src/webhooks/conversion.ts). It can say less than `v1`; what it cannot say is kept in the
 * `sluice.dev/v1-spec` annotation and restored on the way back.
 */
import { canaryReleaseKind, type CanaryReleaseStatus } from './canary-release.js';
import { dnsLabel, type SluiceObject } from './common.js';
import { int, keyedList, num, obj, rule, str, type JsonSchema } from './schema.js';

/** The served-only version. */
export const V1ALPHA1 = 'v1alpha1';

/** The Service (and, by the same name, the Deployment) being released. */
export interface TargetServiceV1alpha1 {
  name: string;
  port: number;
}

/** Percent of traffic on each side; they add up to 100. */
export interface TrafficSplitV1alpha1 {
  baseline: number;
  canary: number;
}

/** One metric with a bare threshold; whether it is a floor or a ceiling follows from its name. */
export interface MetricV1alpha1 {
  name: string;
  query: string;
  threshold: number;
  weight?: number;
}

/** The v1alpha1 spec. */
export interface CanaryReleaseSpecV1alpha1 {
  targetService: TargetServiceV1alpha1;
  trafficSplit: TrafficSplitV1alpha1;
  metrics: MetricV1alpha1[];
}

/** A CanaryRelease as v1alpha1 clients read and write it; status is the same as v1's. */
export type CanaryReleaseV1alpha1 = SluiceObject<
  'CanaryRelease',
  CanaryReleaseSpecV1alpha1,
  CanaryReleaseStatus
>;

/**
 * The threshold rule, as the CRD field description states it (also in README, "CanaryRelease
 * v1alpha1"). Kept here so that `kubectl explain` and the code say the same thing.
 */
export const THRESHOLD_RULE_TEXT =
  "Whether threshold is a floor or a ceiling follows from the metric's name, split into words at _ and -: " +
  'success, successful, availability, available, uptime, apdex, ok, 2xx, hit, hits, throughput make it a floor (the value must be >= threshold); ' +
  'latency, duration, time, seconds, ms, p50 to p999, error, errors, failure, failures, failed, 4xx, 5xx, timeout, timeouts, restarts, saturation make it a ceiling (<= threshold). ' +
  'A name with words of neither kind, or of both, is rejected: use v1 and spec.analysis.metrics[].thresholdRange.';

const metric = obj<MetricV1alpha1>(
  'A metric the canary is scored on.',
  {
    name: str(
      'Name of the metric, unique in the list; lowercase letters, digits, - and _. In v1, _ becomes -.',
      { pattern: '^[a-z0-9]([-_a-z0-9]*[a-z0-9])?$', minLength: 1, maxLength: 63 },
    ),
    query: str(
      'PromQL query returning one value; may use {{ target }}, {{ namespace }} and {{ interval }}.',
      { minLength: 1, maxLength: 8192 },
    ),
    threshold: num(`The limit the value is checked against. ${THRESHOLD_RULE_TEXT}`),
    weight: num('Weight of the metric in the score; 0 records the metric without scoring it.', {
      minimum: 0,
    }),
  },
  { required: ['name', 'query', 'threshold'] },
);

const spec = obj<CanaryReleaseSpecV1alpha1>(
  'How the workload is released (v1alpha1; v1 says more: steps, routers, judges, gates, Git write-back).',
  {
    targetService: obj<TargetServiceV1alpha1>(
      'The Service in front of the workload; the Deployment has the same name.',
      {
        name: dnsLabel('Name of the Service and of the Deployment.'),
        port: int('Port the Service exposes.', { minimum: 1, maximum: 65535 }),
      },
      { required: ['name', 'port'] },
    ),
    trafficSplit: obj<TrafficSplitV1alpha1>(
      'Traffic in percent on the stable (baseline) and the new (canary) version while the canary is analysed; in v1 the canary share is the one step weight, after which the canary is promoted.',
      {
        baseline: int('Percent of traffic on the stable version.', { minimum: 0, maximum: 99 }),
        canary: int('Percent of traffic on the canary.', { minimum: 1, maximum: 100 }),
      },
      {
        required: ['baseline', 'canary'],
        'x-kubernetes-validations': [
          rule('self.baseline + self.canary == 100', 'baseline + canary must be 100'),
        ],
      },
    ),
    metrics: keyedList('Metrics the score is computed from.', 'name', metric, { minItems: 1, maxItems: 20 }),
  },
  { required: ['targetService', 'trafficSplit', 'metrics'] },
);

/** The v1alpha1 openAPIV3Schema parts; `crds.ts` puts them next to v1's in one CRD. */
export const canaryReleaseV1alpha1Schema: { spec: JsonSchema; status: JsonSchema } = {
  spec,
  status: canaryReleaseKind.status,
};

/** Which side of a bare threshold is acceptable: `floor` (value >= threshold) or `ceiling` (<=). */
export type ThresholdDirection = 'floor' | 'ceiling';

const FLOOR_WORDS = new Set([
  'success',
  'successful',
  'availability',
  'available',
  'uptime',
  'apdex',
  'ok',
  '2xx',
  'hit',
  'hits',
  'throughput',
]);
const CEILING_WORDS = new Set([
  'latency',
  'duration',
  'time',
  'seconds',
  'ms',
  'error',
  'errors',
  'failure',
  'failures',
  'failed',
  '4xx',
  '5xx',
  'timeout',
  'timeouts',
  'restarts',
  'saturation',
]);

/**
 * The direction of a bare threshold by `THRESHOLD_RULE_TEXT`, or `undefined` when the name
 * says neither or both (the webhook rejects those rather than guess).
 */
export function thresholdDirection(metricName: string): ThresholdDirection | undefined {
  const words = metricName
    .toLowerCase()
    .split(/[-_.]+/)
    .filter(Boolean);
  const floor = words.some((w) => FLOOR_WORDS.has(w));
  const ceiling = words.some((w) => CEILING_WORDS.has(w) || /^p[0-9]{2,3}$/.test(w));
  if (floor === ceiling) return undefined;
  return floor ? 'floor' : 'ceiling';
}

/** The v1 metric name of a v1alpha1 one: `_` is not allowed in v1's DNS-label names. */
export function v1MetricName(alphaName: string): string {
  return alphaName.replaceAll('_', '-');
}
