import { FeatureGates } from '../features.js';
import {
  promqlError,
  validateCanaryRelease,
  validateCanaryReleaseV1alpha1,
  validateDelivery,
} from './validation.js';

const release = (spec: object) => ({ apiVersion: 'sluice.dev/v1', kind: 'CanaryRelease', spec });
const messages = (errs: Error[]) => errs.map((e) => e.message);

describe('promqlError', () => {
  it.each([
    ['sum(rate(http_requests_total{job="{{ target }}"}[{{ interval }}]))', undefined],
    ['histogram_quantile(0.95, sum by (le) (rate(a_bucket[5m]))) * 1000', undefined],
    ['sum(rate(x[5m])', /syntax error at character 16 \(unexpected end\)/],
    ['foo bar', /syntax error at character 5 near "bar"/],
    ['up{job="{{ nope }}"}', /unknown template variable \{\{ nope \}\}/],
    ['', /empty query/],
  ])('GIVEN %j WHEN parsed THEN the error is %p', (q, want) => {
    const got = promqlError(q);
    if (want === undefined) expect(got).toBeUndefined();
    else expect(got).toMatch(want);
  });
});

describe('validateCanaryRelease', () => {
  it('GIVEN a valid release WHEN validated THEN there are no errors', () => {
    const errs = validateCanaryRelease(
      release({
        steps: { weights: [5, 20, 50] },
        trafficRouting: { provider: 'gatewayAPI' },
        analysis: {
          provider: { type: 'prometheus' },
          metrics: [
            { name: 'a', query: 'up', weight: 1 },
            { name: 'b', templateRef: { name: 'lat' } },
          ],
        },
      }),
      { metricTemplates: new Set(['lat']) },
    );
    expect(errs).toEqual([]);
  });

  it('GIVEN every mistake a schema cannot see WHEN validated THEN each is reported at its field path', () => {
    const errs = validateCanaryRelease(
      release({
        steps: { weights: [5, 50, 20, 120] },
        trafficRouting: { provider: 'linkerd' },
        analysis: {
          judge: 'mannWhitney',
          provider: { type: 'datadog' },
          metrics: [
            { name: 'a', query: 'sum(rate(x[5m])', weight: 0 },
            { name: 'b', templateRef: { name: 'missing' }, weight: 0 },
          ],
        },
        gitWriteBack: { pullRequest: { provider: 'bitbucket' } },
      }),
      { metricTemplates: new Set(), features: new FeatureGates({ StatisticalJudge: false }) },
    );
    expect(messages(errs)).toEqual([
      expect.stringMatching(
        /^spec\.steps\.weights\[2\]: Invalid value: 20: must be greater than the step before \(50\)/,
      ),
      expect.stringMatching(
        /^spec\.steps\.weights\[3\]: Invalid value: 120: must be an integer from 0 to 100/,
      ),
      expect.stringMatching(/^spec\.trafficRouting\.provider: Unsupported value: "linkerd"/),
      expect.stringMatching(/^spec\.analysis\.provider\.type: Unsupported value: "datadog"/),
      expect.stringMatching(/^spec\.analysis\.judge: .*StatisticalJudge/),
      expect.stringMatching(/^spec\.analysis\.metrics\[0\]\.query: .*PromQL syntax error/),
      expect.stringMatching(
        /^spec\.analysis\.metrics\[1\]\.templateRef\.name: Invalid value: "missing": no MetricTemplate/,
      ),
      expect.stringMatching(
        /^spec\.analysis\.metrics: .*at least one metric must have a weight greater than 0/,
      ),
      expect.stringMatching(/^spec\.gitWriteBack\.pullRequest\.provider: Unsupported value: "bitbucket"/),
    ]);
  });

  it('GIVEN no template lister WHEN a templateRef is validated THEN it is not reported', () => {
    expect(
      validateCanaryRelease(release({ analysis: { metrics: [{ name: 'b', templateRef: { name: 'x' } }] } })),
    ).toEqual([]);
  });
});

describe('validateCanaryReleaseV1alpha1', () => {
  it('GIVEN the payment-service-v2 metrics WHEN validated THEN they pass; an undecidable name and a clash are refused', () => {
    const ok = {
      spec: {
        trafficSplit: { baseline: 90, canary: 10 },
        metrics: [
          { name: 'business_order_success_rate', query: 'up', threshold: 0.995, weight: 0.6 },
          { name: 'p95_latency_ms', query: 'up', threshold: 800, weight: 0.4 },
        ],
      },
    };
    expect(validateCanaryReleaseV1alpha1(ok)).toEqual([]);
    const bad = structuredClone(ok);
    bad.spec.metrics.push({ name: 'checkout', query: 'up', threshold: 1, weight: 0 });
    bad.spec.metrics.push({ name: 'p95-latency-ms', query: 'up', threshold: 1, weight: 0 });
    expect(messages(validateCanaryReleaseV1alpha1(bad))).toEqual([
      expect.stringMatching(
        /^spec\.metrics\[2\]\.threshold: Invalid value: 1: metric name "checkout" does not say .*thresholdRange/,
      ),
      expect.stringMatching(
        /^spec\.metrics\[3\]\.name: Invalid value: "p95-latency-ms": is the same v1 metric name/,
      ),
    ]);
  });
});

describe('validateDelivery', () => {
  it('GIVEN a path leaving the root, a system namespace and a timeout over the interval WHEN validated THEN each is named', () => {
    expect(
      messages(
        validateDelivery({
          spec: {
            path: 'apps/../../etc',
            targetNamespace: 'kube-system',
            interval: '1m',
            timeout: '5m',
            sourceRef: { name: 's' },
          },
        }),
      ),
    ).toEqual([
      expect.stringMatching(/^spec\.path: .*leaves the source root/),
      expect.stringMatching(/^spec\.targetNamespace: /),
      expect.stringMatching(/^spec\.timeout: Invalid value: "5m": must not exceed interval \(1m\)/),
    ]);
    expect(validateDelivery({ spec: { path: './apps/../deploy', interval: '5m', timeout: '2m' } })).toEqual(
      [],
    );
  });
});
