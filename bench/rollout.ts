/**
 * bench/rollout — the CanaryRelease controller under load: RELEASES releases (default 200), each
 * following a Delivery onto one member cluster, 3 metrics each on a real Prometheus, a 10 s
 * interval, the replica router; the real `sluice controller` process (dist/).
 *
 *   make bench-rollout      (or: npx tsx bench/rollout.ts)
 *   SLUICE_TEST_CLUSTERS_DIR=/tmp/kl-shared npx tsx bench/rollout.ts   (reuse running clusters)
 *
 * Figures, over WINDOW_S seconds (default 60) once every release is Progressing:
 * - tick lag p50/p99: how late timed ticks ran (`sluice_canary_tick_lag_seconds`, exact summary);
 * - controller RSS: VmRSS at the end and the largest seen (sampled every second);
 * - queries per second Prometheus served on /api/v1/query (its own request counter).
 * Prints one JSON object, then one human line.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { installCrds } from '../src/api/install.js';
import { clusterClient, loadKubeConfig, type ClusterClient } from '../src/kube/clients.js';
import { writeStatus } from '../src/kube/status.js';
import { ControllerProcess, controllerArgs } from '../test/support/controller-process.js';
import { REPO_ROOT, startKubeLocal } from '../test/support/kube-local.mjs';
import { startPrometheus } from '../test/support/prometheus-basic.js';
import { applyAsBench, registerMember, sleep, unregisterMember } from './support.js';

const RELEASES = Number(process.env.RELEASES ?? 200);
const WINDOW_S = Number(process.env.WINDOW_S ?? 60);
const INTERVAL = process.env.INTERVAL ?? '10s';
const run = `bench-rollout-${Date.now().toString(36)}`;
const NS = run;
const CLUSTER = `${run}-m1`;
const REVISION = `main@sha1:${'b'.repeat(40)}`;

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(1000);
  }
}

/** Runs `fn` over `items` with at most `n` at once. */
async function pool<T>(items: readonly T[], n: number, fn: (x: T) => Promise<unknown>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) await fn(items[i++]!);
    }),
  );
}

function metricValue(text: string, name: string, labels: RegExp = /.*/): number {
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name) || !labels.test(line)) continue;
    const v = Number(line.split(' ').pop());
    if (Number.isFinite(v)) total += v;
  }
  return total;
}

const shared = process.env.SLUICE_TEST_CLUSTERS_DIR;
const dir = shared ?? join(REPO_ROOT, '.work', 'bench-rollout');
const kl = shared ? undefined : await startKubeLocal({ clusters: 2, dir });
const prom = await startPrometheus();
let controller: ControllerProcess | undefined;
const client = (n: string): ClusterClient =>
  clusterClient(n, loadKubeConfig({ kubeconfig: join(dir, n, 'kubeconfig') }));
const hub = client('hub');
const member = client('member-1');
const apply = applyAsBench;
const names = Array.from({ length: RELEASES }, (_, i) => `w${i}`);
try {
  // On shared clusters an earlier run's namespace may still be terminating with its 400 pods,
  // which would leave this run's pods Pending on the one node: wait until it is gone.
  await until(
    'earlier bench namespaces gone from member-1',
    async () =>
      (await member.raw.listRaw<KubernetesObject>('v1', 'Namespace')).items.every(
        (n) => !n.metadata?.name?.startsWith('bench-rollout-'),
      ),
    600_000,
  );
  await installCrds(hub);
  await registerMember(hub, member, dir, NS, CLUSTER);
  // A suspended Delivery whose status the bench writes (the Delivery controller leaves a
  // suspended Delivery alone): the releases follow it onto member-1.
  await apply(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: NS, name: 'src' },
    spec: { url: 'http://127.0.0.1:1/none.git', ref: { branch: 'main' }, interval: '1h', suspend: true },
  });
  await writeStatus(
    hub,
    { apiVersion: 'sluice.dev/v1', kind: 'GitSource', plural: 'gitsources', namespace: NS, name: 'src' },
    {
      artifact: {
        revision: REVISION,
        digest: `sha256:${'0'.repeat(64)}`,
        lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    },
  );
  await apply(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: NS, name: 'apps' },
    spec: { sourceRef: { kind: 'GitSource', name: 'src' }, placementRef: { name: 'none' }, suspend: true },
  });
  await writeStatus(
    hub,
    { apiVersion: 'sluice.dev/v1', kind: 'Delivery', plural: 'deliveries', namespace: NS, name: 'apps' },
    { lastAppliedRevision: REVISION, clusters: [{ name: CLUSTER, revision: REVISION, phase: 'Healthy' }] },
  );
  const weights = Array.from({ length: 20 }, (_, i) => i + 1);
  await pool(names, 8, async (name) => {
    await apply(member, {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace: NS, name },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: { containers: [{ name: 'web', image: 'example.invalid/web:1' }] },
        },
      },
    });
    await apply(hub, {
      apiVersion: 'sluice.dev/v1',
      kind: 'CanaryRelease',
      metadata: { namespace: NS, name },
      spec: {
        deliveryRef: { name: 'apps' },
        targetRef: { kind: 'Deployment', name },
        service: { port: 80 },
        strategy: 'canary',
        trafficRouting: { provider: 'replicas' },
        steps: { weights },
        interval: INTERVAL,
        analysis: {
          failureLimit: 3,
          provider: { type: 'prometheus', address: prom.url, timeout: '5s' },
          metrics: [
            { name: 'success-rate', query: 'vector(0.999)', thresholdRange: { min: 0.99 } },
            { name: 'latency-p99', query: 'vector(120)', thresholdRange: { max: 500 } },
            { name: 'saturation', query: 'vector(0.4)', thresholdRange: { max: 0.8 } },
          ],
        },
      },
    });
  });

  controller = new ControllerProcess(
    controllerArgs(join(dir, 'hub', 'kubeconfig'), `${run}-lease`, ['--leader-elect=false']),
  );
  const starting = await controller.waitForLog((l) => l.message === 'controller starting', 120_000);
  const metricsPort = Number(starting.metricsPort);
  // The bench reads only the start line; keep the process's memory, not the bench's, in the figure.
  controller.lines.length = 0;
  const phases = async () =>
    (
      await hub.raw.listRaw<KubernetesObject & { status?: { phase?: string; step?: string } }>(
        'sluice.dev/v1',
        'CanaryRelease',
        { namespace: NS },
      )
    ).items;
  await until(
    'every release initialised',
    async () => (await phases()).every((r) => r.status?.phase === 'Succeeded'),
    900_000,
  );

  // A new version everywhere: every release starts its 20 steps.
  await pool(names, 8, (name) =>
    member.raw.mergePatch(
      { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: NS, name } },
      { spec: { template: { metadata: { annotations: { 'bench/version': 'v2' } } } } },
    ),
  );
  await until(
    'every release progressing',
    async () =>
      (await phases()).every(
        (r) =>
          r.status?.phase === 'Progressing' && r.status.step !== undefined && !r.status.step.startsWith('0/'),
      ),
    600_000,
  );

  const promMetrics = async () => (await fetch(`${prom.url}/metrics`)).text();
  const ctlMetrics = async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const rssKib = () => {
    const status = readFileSync(`/proc/${controller!.child.pid}/status`, 'utf8');
    return Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  };
  const cpuSeconds = () => {
    const f = readFileSync(`/proc/${controller!.child.pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  };
  const cpuBefore = cpuSeconds();
  const queriesBefore = metricValue(
    await promMetrics(),
    'prometheus_http_requests_total',
    /handler="\/api\/v1\/query"/,
  );
  const analysesBefore = metricValue(await ctlMetrics(), 'sluice_canary_analyses_total');
  let maxRss = 0;
  const started = Date.now();
  while (Date.now() - started < WINDOW_S * 1000) {
    maxRss = Math.max(maxRss, rssKib());
    await sleep(1000);
  }
  const seconds = (Date.now() - started) / 1000;
  const queriesAfter = metricValue(
    await promMetrics(),
    'prometheus_http_requests_total',
    /handler="\/api\/v1\/query"/,
  );
  const ctl = await ctlMetrics();
  const analysesAfter = metricValue(ctl, 'sluice_canary_analyses_total');
  const lag = (q: string) =>
    metricValue(ctl, 'sluice_canary_tick_lag_seconds{', new RegExp(`quantile="${q}"`));
  const finalRss = rssKib();
  const heapMib = (name: string) => Math.round(metricValue(ctl, `${name} `) / 2 ** 20);
  const cpuPercent = Math.round(((cpuSeconds() - cpuBefore) / seconds) * 100);
  const reconcileMs = Math.round(
    (metricValue(ctl, 'sluice_reconcile_duration_seconds_sum', /controller="canaryrelease"/) /
      Math.max(
        1,
        metricValue(ctl, 'sluice_reconcile_duration_seconds_count', /controller="canaryrelease"/),
      )) *
      1000,
  );
  maxRss = Math.max(maxRss, finalRss);
  const final = await phases();
  const still = final.filter((r) => r.status?.phase === 'Progressing').length;
  const steps = final.map((r) => Number((r.status?.step ?? '0/0').split('/')[0]));
  // What the releases wait for, by message (digits folded), so a stall shows in the output.
  const waiting: Record<string, number> = {};
  for (const r of final as Array<
    KubernetesObject & { status?: { conditions?: Array<{ type: string; message?: string }> } }
  >) {
    const m = (r.status?.conditions?.find((c) => c.type === 'Reconciling')?.message ?? '').replace(
      /\d+/g,
      'N',
    );
    if (m) waiting[m] = (waiting[m] ?? 0) + 1;
  }

  const result = {
    bench: 'rollout',
    releases: RELEASES,
    metrics_per_release: 3,
    interval: INTERVAL,
    window_s: Math.round(seconds),
    tick_lag_ms_p50: Math.round(lag('0.5') * 1000),
    tick_lag_ms_p99: Math.round(lag('0.99') * 1000),
    controller_rss_mib: Math.round(finalRss / 1024),
    controller_rss_mib_max: Math.round(maxRss / 1024),
    prometheus_queries_per_s: Number(((queriesAfter - queriesBefore) / seconds).toFixed(1)),
    controller_heap_used_mib: heapMib('nodejs_heap_size_used_bytes'),
    controller_heap_total_mib: heapMib('nodejs_heap_size_total_bytes'),
    controller_external_mib: heapMib('nodejs_external_memory_bytes'),
    controller_cpu_percent: cpuPercent,
    reconcile_ms_mean: reconcileMs,
    analyses_per_s: Number(((analysesAfter - analysesBefore) / seconds).toFixed(1)),
    still_progressing: still,
    waiting,
    mean_step_reached: Number((steps.reduce((a, b) => a + b, 0) / Math.max(1, steps.length)).toFixed(1)),
  };
  console.log(JSON.stringify(result));
  console.log(
    `${RELEASES} CanaryReleases × 3 metrics at ${INTERVAL} over ${result.window_s} s: tick lag p50 ${result.tick_lag_ms_p50} ms, p99 ${result.tick_lag_ms_p99} ms; controller RSS ${result.controller_rss_mib} MiB (max ${result.controller_rss_mib_max} MiB); Prometheus ${result.prometheus_queries_per_s} queries/s (${result.analyses_per_s} analyses/s; ${still} still progressing); controller CPU ${cpuPercent}%, mean tick ${reconcileMs} ms`,
  );
} finally {
  await controller?.kill('SIGTERM');
  await prom.stop();
  await unregisterMember(hub, member, NS, CLUSTER);
  await kl?.stop();
}
