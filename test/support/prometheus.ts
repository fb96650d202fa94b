// The test bed's Prometheus: Debian's /usr/bin/prometheus scraping the demo app's pods of one
// kube-local cluster every second. Pods run as real processes with real addresses
// (test/cluster/podexec.go), so the scrape reaches them directly.
// test/support/prometheus-basic.ts is the cluster-less variant.
//
// Discovery: Debian's build of Prometheus 2.42 has kubernetes_sd compiled out (promtool:
// "field kubernetes_sd_configs not found"). So this helper serves the same targets over
// http_sd from the test process: it lists the cluster's pods (that cluster's kubeconfig) on
// every refresh (1 s) and labels each pod port with kubernetes_sd's own meta labels
// (`__meta_kubernetes_namespace`, `__meta_kubernetes_pod_label_<name>`, …), so the relabel
// rules below are exactly those a kubernetes_sd `role: pod` job would use.
//
// The Debian package's own service is never used (this machine's policy-rc.d keeps it from
// starting; if one runs, it is on :9090, which this helper never takes): each call runs its
// own Prometheus on a free loopback port with a temp TSDB.
//
// No jest imports here.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { V1Pod } from '@kubernetes/client-node';
import { clusterClient, loadKubeConfig } from '../../src/kube/clients.js';
import { PROMETHEUS_BIN, freePort } from './prometheus-basic.js';

/** Options for {@link startClusterPrometheus}. */
export interface ClusterPrometheusOptions {
  /** The cluster whose pods are scraped (kube-local's DIR/<name>/kubeconfig). */
  kubeconfig: string;
  /** Only pods in these namespaces (default: all). */
  namespaces?: string[];
  /** Only pods with this `app` label value (default: `demo-app`); `null` keeps every pod. */
  app?: string | null;
  /** The container port name scraped (default `metrics`). */
  metricsPortName?: string;
  /** Default `1s`. */
  scrapeInterval?: string;
}

/** A running Prometheus. `stop()` removes the TSDB; `pause()`/`resume()` keep it. */
export interface ClusterPrometheus {
  /** Base URL, e.g. `http://127.0.0.1:41234` (stable across pause/resume). */
  readonly url: string;
  /** Stops the process but keeps port and TSDB: queries fail until `resume()` (outage tests). */
  pause(): Promise<void>;
  /** Starts it again on the same port and data; resolves when ready. */
  resume(): Promise<void>;
  /** Stops it for good and removes its data. Idempotent. */
  stop(): Promise<void>;
  /** One instant query; the `data.result` vector, or throws with Prometheus' error. */
  query(promql: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /**
   * Resolves once at least `count` targets are up (discovery reaches the scrape loop about
   * 5 s after a change: Prometheus' discovery manager batches updates).
   */
  waitForTargets(count: number, timeoutMs?: number): Promise<void>;
  /** Its stderr so far, for failure messages. */
  log(): string;
}

/** One http_sd target group. */
export interface TargetGroup {
  targets: string[];
  labels: Record<string, string>;
}

/** Label names as kubernetes_sd sanitises them: every invalid character becomes `_`. */
const sanitize = (name: string) => name.replace(/[^a-zA-Z0-9_]/g, '_');

/**
 * The target groups kubernetes_sd (`role: pod`) would produce for `pods`: one per declared
 * container port of each pod with an address, with its `__meta_kubernetes_*` labels. Pure.
 */
export function podTargetGroups(pods: readonly V1Pod[]): TargetGroup[] {
  const groups: TargetGroup[] = [];
  for (const pod of pods) {
    const ip = pod.status?.podIP;
    if (!ip) continue;
    const meta: Record<string, string> = {
      __meta_kubernetes_namespace: pod.metadata?.namespace ?? '',
      __meta_kubernetes_pod_name: pod.metadata?.name ?? '',
      __meta_kubernetes_pod_ip: ip,
      __meta_kubernetes_pod_uid: pod.metadata?.uid ?? '',
      __meta_kubernetes_pod_node_name: pod.spec?.nodeName ?? '',
      __meta_kubernetes_pod_phase: pod.status?.phase ?? '',
      __meta_kubernetes_pod_ready: String(
        pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
      ),
    };
    for (const [k, v] of Object.entries(pod.metadata?.labels ?? {})) {
      meta[`__meta_kubernetes_pod_label_${sanitize(k)}`] = v;
      meta[`__meta_kubernetes_pod_labelpresent_${sanitize(k)}`] = 'true';
    }
    for (const c of pod.spec?.containers ?? []) {
      for (const p of c.ports ?? []) {
        groups.push({
          targets: [`${ip}:${p.containerPort}`],
          labels: {
            ...meta,
            __meta_kubernetes_pod_container_name: c.name,
            __meta_kubernetes_pod_container_image: c.image ?? '',
            __meta_kubernetes_pod_container_port_name: p.name ?? '',
            __meta_kubernetes_pod_container_port_number: String(p.containerPort),
            __meta_kubernetes_pod_container_port_protocol: p.protocol ?? 'TCP',
          },
        });
      }
    }
  }
  return groups;
}

/**
 * The scrape configuration: pods discovered through `sdUrl` (see the file comment), keeping
 * only running pods' `metrics` port and the labels tests and Sluice's queries use
 * (`namespace`, `pod`, `app`, `version`). Pure, so its shape is unit-testable.
 */
export function scrapeConfig(opts: ClusterPrometheusOptions, sdUrl: string): string {
  const interval = opts.scrapeInterval ?? '1s';
  const portName = opts.metricsPortName ?? 'metrics';
  const app = opts.app === undefined ? 'demo-app' : opts.app;
  const keepApp =
    app === null
      ? ''
      : `
      - source_labels: [__meta_kubernetes_pod_label_app]
        regex: ${JSON.stringify(escapeRegex(app))}
        action: keep`;
  return `global:
  scrape_interval: ${interval}
  evaluation_interval: ${interval}
scrape_configs:
  - job_name: demo-app
    honor_labels: false
    http_sd_configs:
      - url: ${JSON.stringify(sdUrl)}
        refresh_interval: ${interval}
    relabel_configs:
      - source_labels: [__meta_kubernetes_pod_container_port_name]
        regex: ${JSON.stringify(escapeRegex(portName))}
        action: keep
      - source_labels: [__meta_kubernetes_pod_phase]
        regex: Running
        action: keep${keepApp}
      - source_labels: [__meta_kubernetes_namespace]
        target_label: namespace
      - source_labels: [__meta_kubernetes_pod_name]
        target_label: pod
      - source_labels: [__meta_kubernetes_pod_label_app]
        target_label: app
      - source_labels: [__meta_kubernetes_pod_label_version]
        regex: (.+)
        target_label: version
    metric_relabel_configs:
      # The OTel JS Prometheus exporter does not append the unit suffix that the OTel
      # specification's Prometheus translation adds (the Go exporter, the collector and
      # Prometheus' own OTLP receiver all name it http_server_request_duration_seconds).
      # Sluice's built-in OTel queries use the specified name, so add it here.
      - source_labels: [__name__]
        regex: http_server_request_duration_(bucket|sum|count)
        target_label: __name__
        replacement: http_server_request_duration_seconds_\${1}
`;
}

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Starts Prometheus for one cluster's demo pods; resolves once `/-/ready` answers. */
export async function startClusterPrometheus(
  opts: ClusterPrometheusOptions,
  timeoutMs = 30_000,
): Promise<ClusterPrometheus> {
  const sd = await serveDiscovery(opts);
  const dir = mkdtempSync(join(tmpdir(), 'sluice-prom-sd-'));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  writeFileSync(join(dir, 'prometheus.yml'), scrapeConfig(opts, sd.url));
  const args = [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ];
  let stderr = '';
  let child: ChildProcess | undefined;
  let exit: Promise<void> = Promise.resolve();
  let removed = false;

  const launch = async (): Promise<void> => {
    const c = spawn(PROMETHEUS_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child = c;
    c.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-20_000);
    });
    exit = new Promise<void>((resolve) => c.once('exit', () => resolve()));
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (c.exitCode !== null || c.signalCode !== null)
        throw new Error(`prometheus exited before it was ready:\n${stderr}`);
      try {
        const res = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1000) });
        if (res.status === 200) return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`prometheus not ready within ${timeoutMs} ms:\n${stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const kill = async (): Promise<void> => {
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    c.kill('SIGTERM');
    const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
    await exit;
    clearTimeout(timer);
  };

  const handle: ClusterPrometheus = {
    url,
    log: () => stderr,
    pause: kill,
    async resume() {
      if (removed) throw new Error('prometheus was stopped for good');
      if (child && child.exitCode === null && child.signalCode === null) return;
      await launch();
    },
    async stop() {
      await kill();
      if (!removed) rmSync(dir, { recursive: true, force: true });
      removed = true;
      await new Promise((r) => sd.server.close(r));
    },
    async waitForTargets(count, waitMs = 30_000) {
      const deadline = Date.now() + waitMs;
      let up = 0;
      while (Date.now() < deadline) {
        // The targets API, not `up`: after a restart, old `up` samples are still in the lookback.
        up = await fetch(`${url}/api/v1/targets?state=active`, { signal: AbortSignal.timeout(2000) })
          .then((r) => r.json() as Promise<{ data?: { activeTargets?: { health: string }[] } }>)
          .then((b) => (b.data?.activeTargets ?? []).filter((t) => t.health === 'up').length)
          .catch(() => 0);
        if (up >= count) return;
        await new Promise((r) => setTimeout(r, 250));
      }
      throw new Error(`prometheus: ${up} of ${count} targets up after ${waitMs} ms`);
    },
    async query(promql) {
      const res = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`, {
        signal: AbortSignal.timeout(5000),
      });
      const body = (await res.json()) as {
        status: string;
        error?: string;
        data?: { result: { metric: Record<string, string>; value: [number, string] }[] };
      };
      if (body.status !== 'success') throw new Error(`prometheus query ${promql}: ${body.error}`);
      return body.data!.result;
    },
  };
  try {
    await launch();
  } catch (err) {
    await handle.stop();
    throw err;
  }
  return handle;
}

/** Serves http_sd targets for the cluster's pods on a free loopback port. */
async function serveDiscovery(opts: ClusterPrometheusOptions): Promise<{ url: string; server: Server }> {
  const client = clusterClient('prometheus-sd', loadKubeConfig({ kubeconfig: opts.kubeconfig }));
  const list = async (): Promise<V1Pod[]> => {
    if (!opts.namespaces?.length) return (await client.raw.listRaw<V1Pod>('v1', 'Pod')).items;
    const lists = await Promise.all(
      opts.namespaces.map((namespace) => client.raw.listRaw<V1Pod>('v1', 'Pod', { namespace })),
    );
    return lists.flatMap((l) => l.items);
  };
  const server = createServer((_req, res) => {
    list().then(
      (pods) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(podTargetGroups(pods)));
      },
      (err: unknown) => {
        // Prometheus keeps the last good targets when discovery fails (cluster briefly down).
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end(err instanceof Error ? err.message : String(err));
      },
    );
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/targets`, server };
}
