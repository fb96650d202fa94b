/**
 * bench/analysis — the analysis side of "200 concurrent CanaryReleases with 3 metrics each":
 * a real Prometheus (Debian's) scraping OTel HTTP metrics of 200 canary + 200 primary pods;
 * RELEASES `analyze()` calls at once (built-in success rate, built-in p99, one inline query).
 *
 *   npx tsx bench/analysis.ts        (RELEASES=200 ROUNDS=5)
 *
 * Figures: wall time of one round of all analyses, per-analysis latency p50/p99, queries
 * sent, provider clients created, RSS growth of this process. Prints one JSON object, then one human line.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CanaryRelease } from '../src/api/canary-release.js';
import { analyze } from '../src/analysis/analyze.js';
import { PrometheusProvider, ProviderCache } from '../src/analysis/prometheus.js';
import { releaseNames } from '../src/rollout/names.js';
import { startPrometheus } from '../test/support/prometheus-basic.js';

const RELEASES = Number(process.env.RELEASES ?? 200);
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const started = Date.now();

function exposition(): string {
  const t = (Date.now() - started) / 1000 + 100;
  const name = 'http_server_request_duration_seconds';
  const out = [`# TYPE ${name} histogram`];
  for (let i = 0; i < RELEASES; i++)
    for (const [pod, errors] of [
      [`app-${i}-6d4b9c7f8-x2k9p`, 1],
      [`app-${i}-primary-5c8d7b6f4-q7w2m`, 0],
    ] as const)
      for (const [code, rate] of [
        ['200', 10],
        ['500', errors],
      ] as const) {
        const l = `namespace="bench",pod="${pod}",http_response_status_code="${code}"`;
        const n = rate * t;
        for (const le of ['0.05', '0.1', '0.5', '+Inf'])
          out.push(`${name}_bucket{${l},le="${le}"} ${le === '0.05' ? n / 2 : n}`);
        out.push(`${name}_sum{${l}} ${n * 0.05}`, `${name}_count{${l}} ${n}`);
      }
  return `${out.join('\n')}\n`;
}

function release(i: number, address: string): CanaryRelease {
  return {
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { name: `app-${i}`, namespace: 'bench' },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: `app-${i}` },
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
        provider: { type: 'prometheus', address, timeout: '10s' },
        metrics: [
          {
            name: 'success',
            builtin: 'requestSuccessRate',
            thresholdRange: { min: 0.99 },
            weight: 1,
            onNoData: 'hold',
          },
          {
            name: 'p99',
            builtin: 'requestDuration',
            thresholdRange: { max: 500 },
            weight: 1,
            onNoData: 'hold',
          },
          {
            name: 'traffic',
            query:
              'sum(rate(http_server_request_duration_seconds_count{namespace="{{ namespace }}",pod=~"{{ canary }}-[a-z0-9]+-[a-z0-9]+"}[{{ interval }}]))',
            thresholdRange: { min: 1 },
            weight: 1,
            onNoData: 'hold',
          },
        ],
      },
      skipAnalysis: false,
      gitWriteBack: { mode: 'none' },
    },
  } as CanaryRelease;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;

async function main(): Promise<void> {
  const exporter = createServer((_q, res) => res.end(exposition()));
  await new Promise<void>((r) => exporter.listen(0, '127.0.0.1', r));
  const prom = await startPrometheus({
    targets: [`127.0.0.1:${(exporter.address() as AddressInfo).port}`],
    scrapeInterval: '1s',
  });
  try {
    const direct = new PrometheusProvider(prom.url);
    for (;;) {
      try {
        if ((await direct.instant('count_over_time(up[15s])')) >= 5) break;
      } catch {
        /* not scraped yet */
      }
      await new Promise((r) => setTimeout(r, 500));
    }
    let created = 0;
    let sent = 0;
    const providers = new ProviderCache({
      create: (a, auth) => {
        created++;
        const client = new PrometheusProvider(a, auth);
        const instantValue = client.instantValue.bind(client);
        client.instantValue = (...args) => {
          sent++;
          return instantValue(...args);
        };
        return client;
      },
    });
    const deps = { template: async () => undefined, secret: async () => undefined, providers };
    const releases = Array.from({ length: RELEASES }, (_, i) => release(i, prom.url));
    const rss0 = process.memoryUsage().rss;
    const latencies: number[] = [];
    const rounds: number[] = [];
    const verdicts: Record<string, number> = {};
    for (let round = 0; round < ROUNDS; round++) {
      const t0 = performance.now();
      await Promise.all(
        releases.map(async (r) => {
          const t = performance.now();
          const res = await analyze(
            { release: r, cluster: 'bench', names: releaseNames(r), canaryWeight: 10, now: new Date() },
            deps,
          );
          latencies.push(performance.now() - t);
          verdicts[res.verdict] = (verdicts[res.verdict] ?? 0) + 1;
        }),
      );
      rounds.push(performance.now() - t0);
    }
    const figures = {
      releases: RELEASES,
      metricsPerRelease: 3,
      rounds: ROUNDS,
      roundWallMsP50: Math.round(pct(rounds, 0.5)),
      roundWallMsMax: Math.round(Math.max(...rounds)),
      analysisMsP50: Math.round(pct(latencies, 0.5)),
      analysisMsP99: Math.round(pct(latencies, 0.99)),
      queriesSent: sent,
      queriesPerRound: sent / ROUNDS,
      providerClientsCreated: created,
      rssGrowthMB: Math.round((process.memoryUsage().rss - rss0) / 1e6),
      verdicts,
    };
    console.log(JSON.stringify(figures));
    console.log(
      `${RELEASES} releases × 3 metrics: one round in ${figures.roundWallMsP50} ms (p50 of ${ROUNDS}), analysis p99 ${figures.analysisMsP99} ms, ${figures.queriesPerRound} queries/round, ${created} client(s)`,
    );
  } finally {
    await prom.stop();
    exporter.close();
  }
}

await main();
