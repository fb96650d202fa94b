import type { BuiltinMetric } from '../api/canary-release.js';
import { MetricConfigError } from './errors.js';

/**
 * Built-in metrics from the OpenTelemetry HTTP semantic conventions, as a
 * Prometheus-compatible backend stores them: `http.server.request.duration` (a histogram in
 * seconds) becomes `http_server_request_duration_seconds_{bucket,count,sum}` and the
 * attribute `http.response.status_code` becomes the label `http_response_status_code`
 * (dots → underscores, unit and type suffixes added; notes/libraries.md).
 *
 * The canary's pods are selected by the labels Prometheus' kubernetes_sd relabelling gives
 * them: `namespace` and `pod` (a Deployment's pods are `<name>-<replicaset hash>-<suffix>`,
 * so `{{ canary }}-[a-z0-9]+-[a-z0-9]+` never matches `<name>-primary-…`: PromQL regexes are
 * anchored). Resource attributes such as `service.version` land in `target_info`, which is
 * not needed here because the pod name already tells canary from primary.
 *
 * A different label layout (e.g. `k8s_namespace_name` / `k8s_pod_name` promoted from the
 * resource, or `service_version` instead of pod names): write the same query as a
 * MetricTemplate and refer to it with `templateRef`, e.g.
 *
 * ```yaml
 * kind: MetricTemplate
 * metadata: { name: success-rate }
 * spec:
 *   provider: { type: prometheus, address: http://prometheus.monitoring:9090 }
 *   query: |
 *     1 - ((sum(rate(http_server_request_duration_seconds_count{k8s_namespace_name="{{ namespace }}",
 *       k8s_deployment_name="{{ canary }}", http_response_status_code=~"5.."}[{{ interval }}])) or vector(0))
 *       / (sum(rate(http_server_request_duration_seconds_count{k8s_namespace_name="{{ namespace }}",
 *       k8s_deployment_name="{{ canary }}"}[{{ interval }}])) > 0))
 * ```
 *
 * Both queries return NO series — not NaN — when the canary served no requests in the
 * window, so "no traffic" is the metric's `onNoData`, never a 0/0 that fails or passes.
 */

/** The label matchers that select the pods of `{{ canary }}` (the primary's under the statistical judge's baseline scope). */
export const POD_SELECTOR = 'namespace="{{ namespace }}",pod=~"{{ canary }}-[a-z0-9]+-[a-z0-9]+"';

/** The default quantile of `requestDuration`. */
export const DEFAULT_QUANTILE = 0.99;

const COUNT = 'http_server_request_duration_seconds_count';
const BUCKET = 'http_server_request_duration_seconds_bucket';
const STATUS = 'http_response_status_code';

/** Total request rate of the selected pods, kept only when above zero (so no traffic is no data). */
const TRAFFIC = `(sum(rate(${COUNT}{${POD_SELECTOR}}[{{ interval }}])) > 0)`;

/**
 * The query template of a built-in metric. `requestSuccessRate` is the share of responses
 * that are not 5xx (0 to 1); `requestDuration` is the latency quantile in milliseconds.
 */
export function builtinQuery(metric: BuiltinMetric, quantile?: number): string {
  switch (metric) {
    case 'requestSuccessRate':
      // 1 - errors/total: "or vector(0)" keeps a canary with no 5xx at all (no 5xx series) at 1.
      return (
        `1 - ((sum(rate(${COUNT}{${POD_SELECTOR},${STATUS}=~"5.."}[{{ interval }}])) or vector(0))` +
        ` / ${TRAFFIC})`
      );
    case 'requestDuration': {
      const q = quantile ?? DEFAULT_QUANTILE;
      if (!(q > 0 && q < 1)) throw new MetricConfigError(`quantile ${q} must be between 0 and 1`);
      // histogram_quantile over all-zero rates is NaN: "and on() TRAFFIC" turns no traffic into no data.
      return (
        `histogram_quantile(${q}, sum by (le) (rate(${BUCKET}{${POD_SELECTOR}}[{{ interval }}]))) * 1000` +
        ` and on() ${TRAFFIC}`
      );
    }
    default:
      throw new MetricConfigError(`unknown builtin metric ${JSON.stringify(metric)}`);
  }
}
