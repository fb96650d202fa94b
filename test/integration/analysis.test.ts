// Analysis against a real Prometheus (Debian's), started here with a temp TSDB and basic
// auth, scraping a small exporter that serves OpenTelemetry HTTP server metrics as the
// OTel Prometheus exporter names them. A tiny HTTP stub stands in only where a real
// Prometheus cannot be made to misbehave: a server that never answers (timeout) and a
// Prometheus-compatible backend that returns warnings (Thanos' partial responses; 2.42
// gives none for these queries).
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CanaryMetric, CanaryRelease } from '../../src/api/canary-release.js';
import type { MetricTemplate } from '../../src/api/metric-template.js';
import { analyze, type AnalysisDeps } from '../../src/analysis/analyze.js';
import {
  MultipleSeriesError,
  NoDataError,
  QueryError,
  QueryTimeoutError,
} from '../../src/analysis/errors.js';
import { PrometheusProvider, ProviderCache } from '../../src/analysis/prometheus.js';
import { releaseNames } from '../../src/rollout/names.js';
import { eventually } from '../support/clusters.js';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-basic.js';

const USER = 'sluice';
const PASSWORD = `pw-${Math.random().toString(36).slice(2)}`;
const AUTH = { type: 'basic' as const, username: USER, password: PASSWORD };
const b64 = (s: string) => Buffer.from(s).toString('base64');

// ---- an exporter of OTel HTTP server metrics (http.server.request.duration, seconds) ----

interface PodTraffic {
  namespace: string;
  pod: string;
  /** Requests per second by status code. */
  rates: Record<string, number>;
  /** The bucket bound all requests fall just under (le), e.g. 0.05 → fast. */
  bucket: number;
}
const BUCKETS = [0.05, 0.1, 0.25, 0.5, 1];
const PODS: PodTraffic[] = [
  // The canary: 20% 5xx, ~0.5 s latency.
  { namespace: 'shop', pod: 'web-6d4b9c7f8-x2k9p', rates: { '200': 8, '500': 2 }, bucket: 0.5 },
  // The primary: no errors, < 50 ms.
  { namespace: 'shop', pod: 'web-primary-5c8d7b6f4-q7w2m', rates: { '200': 10 }, bucket: 0.05 },
  // Same Deployment name in another namespace, all 5xx: must never be selected.
  { namespace: 'other', pod: 'web-6d4b9c7f8-zzzzz', rates: { '503': 50 }, bucket: 1 },
];

function exposition(elapsedSeconds: number): string {
  const name = 'http_server_request_duration_seconds';
  const lines = [`# TYPE ${name} histogram`];
  for (const p of PODS)
    for (const [code, rate] of Object.entries(p.rates)) {
      const labels = `namespace="${p.namespace}",pod="${p.pod}",http_response_status_code="${code}"`;
      const count = rate * elapsedSeconds;
      for (const le of BUCKETS)
        lines.push(`${name}_bucket{${labels},le="${le}"} ${le >= p.bucket ? count : 0}`);
      lines.push(`${name}_bucket{${labels},le="+Inf"} ${count}`);
      lines.push(`${name}_sum{${labels}} ${count * p.bucket * 0.9}`);
      lines.push(`${name}_count{${labels}} ${count}`);
    }
  return `${lines.join('\n')}\n`;
}

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

// ---- fixtures ----

let prom: PrometheusHandle;
let exporter: Server;
let stub: Server;
let stubPort: number;
const stubHeaders: IncomingHttpHeaders[] = [];
const started = Date.now();

beforeAll(async () => {
  exporter = createServer((_req, res) => {
    res.setHeader('Content-Type', 'text/plain; version=0.0.4');
    res.end(exposition((Date.now() - started) / 1000 + 1000));
  });
  const exporterPort = await listen(exporter);
  stub = createServer((req, res) => {
    stubHeaders.push(req.headers);
    if (req.url?.startsWith('/hang/')) return; // never answers
    res.setHeader('Content-Type', 'application/json');
    res.end(
      JSON.stringify({
        status: 'success',
        warnings: ['partial response: store gateway 2 unreachable'],
        data: { resultType: 'vector', result: [{ metric: {}, value: [1, '0.25'] }] },
      }),
    );
  });
  stubPort = await listen(stub);
  prom = await startPrometheus({
    targets: [`127.0.0.1:${exporterPort}`],
    job: 'member-1',
    scrapeInterval: '1s',
    basicAuth: { username: USER, password: PASSWORD },
  });
}, 60_000);

afterAll(async () => {
  await prom?.stop();
  // The hanging request's socket would keep the server open.
  stub?.closeAllConnections();
  await new Promise((r) => stub?.close(r));
  await new Promise((r) => exporter?.close(r));
});

// ---- the provider ----

describe('PrometheusProvider against a real Prometheus', () => {
  const client = () => new PrometheusProvider(prom.url, AUTH);

  it('GIVEN vector(0.5), NaN, +Inf and -Inf WHEN queried THEN the numbers stay distinct', async () => {
    const c = client();
    expect(await c.instant('vector(0.5)')).toBe(0.5);
    expect(await c.instant('vector(NaN)')).toBeNaN();
    expect(await c.instant('vector(+Inf)')).toBe(Infinity);
    expect(await c.instant('vector(-Inf)')).toBe(-Infinity);
    expect(await c.instant('scalar(vector(-Inf))')).toBe(-Infinity);
  });

  it('GIVEN a query matching nothing WHEN queried THEN NoDataError, not 0 or NaN', async () => {
    await expect(client().instant('vector(1) > 2')).rejects.toBeInstanceOf(NoDataError);
  });

  it('GIVEN two series WHEN queried THEN MultipleSeriesError names the count and label sets', async () => {
    const err = await client()
      .instant('label_replace(vector(1),"a","x","","") or label_replace(vector(2),"a","y","","")')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(MultipleSeriesError);
    expect(err).toBeInstanceOf(Error);
    expect((err as MultipleSeriesError).count).toBe(2);
    expect((err as MultipleSeriesError).labelSets).toEqual([{ a: 'x' }, { a: 'y' }]);
    expect((err as Error).message).toContain('returned 2 series, expected exactly one');
    expect((err as Error).message).toContain('{a="x"} {a="y"}');
  });

  it('GIVEN a PromQL syntax error WHEN queried THEN QueryError with Prometheus’ message, status and type', async () => {
    const err = (await client()
      .instant('sum(')
      .catch((e: unknown) => e)) as QueryError;
    expect(err).toBeInstanceOf(QueryError);
    expect(err.status).toBe(400);
    expect(err.errorType).toBe('bad_data');
    expect(err.message).toContain('parse error: unclosed left parenthesis');
    expect(err.cause).toBeDefined();
    expect(err.query).toBe('sum(');
  });

  it('GIVEN no or wrong credentials WHEN queried THEN QueryError 401 that does not leak the password', async () => {
    for (const c of [
      new PrometheusProvider(prom.url),
      new PrometheusProvider(prom.url, { ...AUTH, password: 'wrong' }),
    ]) {
      const err = (await c.instant('vector(1)').catch((e: unknown) => e)) as QueryError;
      expect(err).toBeInstanceOf(QueryError);
      expect(err.status).toBe(401);
      expect(err.message).toContain('HTTP 401');
      expect(err.message).not.toContain(PASSWORD);
    }
  });

  it('GIVEN a range query WHEN queried THEN one series’ samples, ±Inf kept', async () => {
    const end = new Date();
    const start = new Date(end.getTime() - 4000);
    expect(await client().range('vector(+Inf)', start, end, 1)).toEqual([
      Infinity,
      Infinity,
      Infinity,
      Infinity,
      Infinity,
    ]);
    await expect(client().range('vector(1) > 2', start, end, 1)).rejects.toBeInstanceOf(NoDataError);
  });

  it('GIVEN a server that never answers WHEN queried with a 500ms timeout THEN QueryTimeoutError in about 500ms', async () => {
    const c = new PrometheusProvider(`http://127.0.0.1:${stubPort}/hang`);
    const t0 = Date.now();
    const err = (await c
      .instant('vector(1)', undefined, { timeoutMs: 500 })
      .catch((e: unknown) => e)) as QueryTimeoutError;
    const took = Date.now() - t0;
    expect(err).toBeInstanceOf(QueryTimeoutError);
    expect(err.timeoutMs).toBe(500);
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(3000);
  });

  it('GIVEN a backend answering with warnings and a bearer token WHEN queried THEN the warnings surface and the token was sent', async () => {
    const c = new PrometheusProvider(`http://127.0.0.1:${stubPort}/warn`, {
      type: 'bearer',
      token: 'tok-123',
    });
    expect(await c.instantValue('vector(0.25)')).toEqual({
      value: 0.25,
      warnings: ['partial response: store gateway 2 unreachable'],
    });
    expect(stubHeaders.at(-1)?.authorization).toBe('Bearer tok-123');
  });

  it('GIVEN queries running concurrently on one client WHEN some have warnings THEN each query gets only its own', async () => {
    const warn = new PrometheusProvider(`http://127.0.0.1:${stubPort}/warn`);
    const real = client();
    const [a, b, c] = await Promise.all([
      warn.instantValue('x'),
      real.instantValue('vector(3)'),
      warn.instantValue('y'),
    ]);
    expect(a.warnings).toHaveLength(1);
    expect(b).toEqual({ value: 3, warnings: [] });
    expect(c.warnings).toHaveLength(1);
  });
});

// ---- analyze, end to end ----

function release(
  metrics: CanaryMetric[],
  analysis: Partial<CanaryRelease['spec']['analysis']> = {},
): CanaryRelease {
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
      interval: '10s',
      analysis: {
        scoreThreshold: 0.95,
        failureLimit: 2,
        judge: 'threshold',
        confidence: 0.95,
        provider: { type: 'prometheus', address: prom.url, timeout: '5s', secretRef: { name: 'prom-creds' } },
        metrics,
        ...analysis,
      },
      skipAnalysis: false,
      gitWriteBack: { mode: 'none' },
    },
  } as CanaryRelease;
}

const upTemplate = (): MetricTemplate => ({
  apiVersion: 'sluice.dev/v1',
  kind: 'MetricTemplate',
  metadata: { name: 'scrape-up', namespace: 'shop' },
  spec: {
    provider: { type: 'prometheus', address: prom.url, timeout: '5s', secretRef: { name: 'prom-creds' } },
    // {{ cluster }} is the scrape job here, so a wrong cluster would find no series.
    query: 'sum(up{job="{{ cluster }}"})',
  },
});

function deps(providers = new ProviderCache()): AnalysisDeps & { secretReads: number } {
  const d = {
    secretReads: 0,
    providers,
    template: async (ns: string, name: string) =>
      ns === 'shop' && name === 'scrape-up' ? upTemplate() : undefined,
    secret: async (ns: string, name: string) => {
      d.secretReads++;
      return ns === 'shop' && name === 'prom-creds'
        ? { username: b64(USER), password: b64(PASSWORD) }
        : undefined;
    },
  };
  return d;
}

const metric = (m: Partial<CanaryMetric> & { name: string }): CanaryMetric => ({
  weight: 1,
  onNoData: 'fail',
  ...m,
});

async function waitForTraffic(): Promise<void> {
  const c = new PrometheusProvider(prom.url, AUTH);
  // rate() over the 10s interval is only exact once the series covers the whole window
  // (before that Prometheus extrapolates from the few samples there are): wait for 14s of scrapes.
  await eventually(
    async () => (await c.instant('count_over_time(up{job="member-1"}[15s])')) >= 14,
    40_000,
    500,
  );
}

describe('analyze against a real Prometheus', () => {
  beforeAll(waitForTraffic, 50_000);

  it('GIVEN built-in, inline and MetricTemplate metrics WHEN the canary errors 20% and is slow THEN fail, score 0.40, success rate explaining it', async () => {
    const r = release([
      metric({
        name: 'success-rate',
        builtin: 'requestSuccessRate',
        thresholdRange: { min: 0.99 },
        weight: 2,
      }),
      metric({ name: 'latency-p99', builtin: 'requestDuration', thresholdRange: { max: 300 } }),
      metric({
        name: 'primary-traffic',
        query:
          'sum(rate(http_server_request_duration_seconds_count{namespace="{{ namespace }}",pod=~"{{ primary }}-.*"}[{{ interval }}]))',
        thresholdRange: { min: 5 },
      }),
      metric({ name: 'scraped', templateRef: { name: 'scrape-up' }, thresholdRange: { min: 1, max: 1 } }),
    ]);
    const d = deps();
    const now = new Date();
    const result = await analyze(
      { release: r, cluster: 'member-1', names: releaseNames(r), canaryWeight: 10, now },
      d,
    );
    const byName = Object.fromEntries(result.measurements.map((m) => [m.metric, m]));

    expect(byName['success-rate']).toMatchObject({
      outcome: 'Failed',
      threshold: '>= 0.99',
      cluster: 'member-1',
    });
    expect(Number(byName['success-rate']!.value)).toBeCloseTo(0.8, 2); // not the other namespace's 0
    expect(byName['latency-p99']).toMatchObject({ outcome: 'Failed', threshold: '<= 300' });
    // histogram_quantile(0.99) inside (0.25, 0.5]: 0.25 + 0.99 × 0.25 s = 497.5 ms.
    expect(Number(byName['latency-p99']!.value)).toBeCloseTo(497.5, 0);
    expect(byName['primary-traffic']).toMatchObject({ outcome: 'Successful' });
    expect(Number(byName['primary-traffic']!.value)).toBeCloseTo(10, 0);
    expect(byName['scraped']).toMatchObject({ outcome: 'Successful', value: '1' });
    expect(byName['scraped']!.measuredAt).toBe(now.toISOString());

    expect(result.verdict).toBe('fail');
    expect(result.score).toBeCloseTo(0.4);
    expect(result.failing).toEqual({
      metric: 'success-rate',
      value: byName['success-rate']!.value,
      threshold: '>= 0.99',
    });
    expect(result.message).toMatch(
      /^score 0\.40 < 0\.95: success-rate 0\.8\d* \(>= 0\.99\) failed, latency-p99 497\.5 \(<= 300\) failed$/,
    );
    // One Secret read for the provider and the template (same Secret), one client for both.
    expect(d.secretReads).toBe(1);
    expect(d.providers!.size).toBe(1);
  });

  it('GIVEN a canary without traffic WHEN analysed THEN no data: onNoData hold holds, onNoData fail fails — never a pass', async () => {
    const noTraffic = (onNoData: 'fail' | 'hold') => {
      const r = release([
        metric({
          name: 'success-rate',
          builtin: 'requestSuccessRate',
          thresholdRange: { min: 0.99 },
          onNoData,
        }),
      ]);
      // A target whose pods serve nothing.
      r.spec.targetRef.name = 'idle';
      return analyze(
        { release: r, cluster: 'member-1', names: releaseNames(r), canaryWeight: 5, now: new Date() },
        deps(),
      );
    };
    const held = await noTraffic('hold');
    expect(held.verdict).toBe('hold');
    expect(held.measurements[0]).toMatchObject({ outcome: 'Inconclusive' });
    expect(held.measurements[0]!.message).toContain('no data');
    expect(held.message).toBe('hold: success-rate has no data (onNoData: hold)');
    const failed = await noTraffic('fail');
    expect(failed.verdict).toBe('fail');
    expect(failed.measurements[0]).toMatchObject({ outcome: 'Failed' });
  });

  it('GIVEN the statistical judge WHEN the canary’s latency is 10× the primary’s THEN the critical latency metric fails it', async () => {
    const r = release(
      [
        metric({
          name: 'latency-p99',
          builtin: 'requestDuration',
          comparison: { direction: 'increase', allowedIncrease: 20, critical: true, nanStrategy: 'remove' },
        }),
      ],
      { judge: 'mannWhitney', scoreThreshold: 0.5 },
    );
    const result = await analyze(
      { release: r, cluster: 'member-1', names: releaseNames(r), canaryWeight: 10, now: new Date() },
      deps(),
    );
    expect(result.verdict).toBe('fail');
    expect(result.message).toMatch(/^critical metric failed: latency-p99 /);
    expect(result.measurements[0]!.outcome).toBe('Failed');
    expect(result.measurements[0]!.threshold).toMatch(
      /^Δ CI95% \[.*\] vs primary 49\.5, increase allowed \+20%$/,
    );
    expect(result.measurements[0]!.message).toMatch(/^high: /);
  });

  it('GIVEN the statistical judge WHEN the canary’s success rate is compared with direction increase THEN a lower rate passes; with direction decrease it fails', async () => {
    const r = release(
      [
        metric({
          name: 'success-rate',
          builtin: 'requestSuccessRate',
          comparison: { direction: 'increase', critical: false, nanStrategy: 'remove' },
        }),
      ],
      { judge: 'mannWhitney' },
    );
    const result = await analyze(
      { release: r, cluster: 'member-1', names: releaseNames(r), canaryWeight: 10, now: new Date() },
      deps(),
    );
    expect(result.verdict).toBe('pass');
    // The same samples with direction decrease: 0.8 against 1.0 is significantly lower.
    r.spec.analysis.metrics![0]!.comparison!.direction = 'decrease';
    const lower = await analyze(
      { release: r, cluster: 'member-1', names: releaseNames(r), canaryWeight: 10, now: new Date() },
      deps(),
    );
    expect(lower.verdict).toBe('fail');
    expect(lower.failing?.metric).toBe('success-rate');
    expect(lower.measurements[0]!.message).toMatch(/^low: /);
  });

  it('GIVEN Prometheus stopped WHEN analysed THEN hold with an Error measurement: an outage decides nothing', async () => {
    await prom.stop();
    const r = release([
      metric({ name: 'success-rate', builtin: 'requestSuccessRate', thresholdRange: { min: 0.99 } }),
    ]);
    const result = await analyze(
      { release: r, cluster: 'member-1', names: releaseNames(r), canaryWeight: 10, now: new Date() },
      deps(),
    );
    expect(result.verdict).toBe('hold');
    expect(result.measurements[0]!.outcome).toBe('Error');
    expect(result.measurements[0]!.message).toMatch(/QueryError: .*ECONNREFUSED/);
  });
});
