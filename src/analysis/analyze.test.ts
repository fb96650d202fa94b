import type { CanaryMetric, CanaryRelease } from '../api/canary-release.js';
import type { MetricTemplate } from '../api/metric-template.js';
import { releaseNames } from '../rollout/names.js';
import { analyze, type AnalysisDeps } from './analyze.js';

/*
 * Resolution problems (missing MetricTemplate or Secret, a bad Secret, an unknown template
 * variable, no provider) are found before any query is sent, so no metrics backend is
 * needed here; queries against a real Prometheus are in test/integration/analysis.test.ts.
 */

const NOW = new Date('2026-01-01T00:00:00Z');
function release(metrics: CanaryMetric[], provider = true): CanaryRelease {
  return {
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      service: { port: 80, primarySuffix: '-primary', canarySuffix: '-canary' },
      strategy: 'canary',
      trafficRouting: { provider: 'replicas' },
      steps: { weights: [10, 50] },
      interval: '1m',
      analysis: {
        scoreThreshold: 0.95,
        failureLimit: 2,
        judge: 'threshold',
        confidence: 0.95,
        ...(provider
          ? { provider: { type: 'prometheus', address: 'http://127.0.0.1:9', timeout: '1s' } }
          : {}),
        metrics,
      },
      skipAnalysis: false,
      gitWriteBack: { mode: 'none' },
    },
  } as CanaryRelease;
}
const metric = (extra: Partial<CanaryMetric>): CanaryMetric => ({
  name: 'm',
  weight: 1,
  onNoData: 'fail',
  thresholdRange: { min: 0.99 },
  ...extra,
});
const deps = (
  templates: Record<string, MetricTemplate> = {},
  secrets: Record<string, Record<string, string>> = {},
): AnalysisDeps => ({
  template: async (_ns, name) => templates[name],
  secret: async (_ns, name) => secrets[name],
});
const run = (r: CanaryRelease, d = deps()) =>
  analyze({ release: r, cluster: 'member-1', names: releaseNames(r), canaryWeight: 10, now: NOW }, d);

describe('analyze: problems found before querying hold the verdict with an Error measurement', () => {
  it('GIVEN a templateRef to a missing MetricTemplate WHEN analysed THEN hold, naming it', async () => {
    const r = await run(release([metric({ templateRef: { name: 'gone' } })]));
    expect(r.verdict).toBe('hold');
    expect(r.measurements).toEqual([
      expect.objectContaining({
        metric: 'm',
        cluster: 'member-1',
        canaryWeight: 10,
        outcome: 'Error',
        measuredAt: '2026-01-01T00:00:00.000Z',
        message: 'MetricConfigError: MetricTemplate shop/gone (templateRef) not found',
      }),
    ]);
    expect(r.message).toContain('hold: m could not be measured: MetricConfigError: MetricTemplate shop/gone');
  });

  it('GIVEN a provider Secret that is missing or has no usable keys WHEN analysed THEN hold, naming the Secret', async () => {
    const tpl: MetricTemplate = {
      apiVersion: 'sluice.dev/v1',
      kind: 'MetricTemplate',
      metadata: { name: 't', namespace: 'shop' },
      spec: {
        provider: {
          type: 'prometheus',
          address: 'http://127.0.0.1:9',
          timeout: '1s',
          secretRef: { name: 'creds' },
        },
        query: 'vector(1)',
      },
    };
    const missing = await run(release([metric({ templateRef: { name: 't' } })]), deps({ t: tpl }));
    expect(missing.measurements[0]!.message).toBe(
      'MetricConfigError: Secret shop/creds (provider secretRef) not found',
    );
    const bad = await run(
      release([metric({ templateRef: { name: 't' } })]),
      deps({ t: tpl }, { creds: { user: 'eA==' } }),
    );
    expect(bad.verdict).toBe('hold');
    expect(bad.measurements[0]!.message).toContain('Secret shop/creds: needs keys username and password');
  });

  it('GIVEN an unknown template variable WHEN analysed THEN hold, naming the variable and the metric', async () => {
    const r = await run(release([metric({ query: 'up{pod="{{ canry }}"}' })]));
    expect(r.verdict).toBe('hold');
    expect(r.measurements[0]!.message).toContain('metric m: unknown template variable {{ canry }}');
  });

  it('GIVEN an inline query without analysis.provider WHEN analysed THEN hold, saying to set it', async () => {
    const r = await run(release([metric({ query: 'vector(1)' })], false));
    expect(r.measurements[0]!.message).toContain('no provider: set analysis.provider');
  });

  it('GIVEN no metrics WHEN analysed THEN hold, never pass', async () => {
    expect((await run(release([]))).verdict).toBe('hold');
  });
});
