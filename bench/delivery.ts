/**
 * bench/delivery — GitOps delivery figures on kube-local (hub + 3 members), a real git
 * http-backend and the real `sluice controller` process.
 *
 *   make bench-delivery      (or: npx tsx bench/delivery.ts)
 *
 * - push-to-applied latency with the webhook, 100 objects, on 1 and on 3 clusters: p50 and
 *   p95 over PUSHES pushes (commit → webhook → every placed cluster serves the new value);
 * - fresh apply of 1,000 objects to 3 clusters: objects per minute;
 * - no-op resync of those 1,000 objects: write calls the members' apiservers counted
 *   (apiserver_request_total for configmaps, non-dry-run POST/PUT/PATCH/DELETE) and wall time;
 * - controller RSS (VmRSS and peak VmHWM) with 100 Deliveries × 3 clusters × 50 objects.
 *
 * Prints one JSON object, then one human line per figure.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { installCrds } from '../src/api/install.js';
import { requestReconcile } from '../src/api/reconcile-request.js';
import { serverSideApply } from '../src/kube/apply.js';
import { clusterClient, loadKubeConfig, type ClusterClient } from '../src/kube/clients.js';
import { isNotFound } from '../src/kube/errors.js';
import { ControllerProcess, controllerArgs } from '../test/support/controller-process.js';
import { commitFiles, createRepo, startGitServer } from '../test/support/git-server.js';
import { REPO_ROOT, startKubeLocal } from '../test/support/kube-local.mjs';

const PUSHES = Number(process.env.PUSHES ?? 12);
const SMALL_DELIVERIES = Number(process.env.SMALL_DELIVERIES ?? 100);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const dir = join(REPO_ROOT, '.work', 'bench-delivery');
const NS = 'bench';
const TOKEN = 'bench-token';

const configMaps = (n: number, prefix: string, value: string) =>
  Array.from(
    { length: n },
    (_, i) =>
      `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${prefix}-${i}\ndata:\n  value: "${value}"\n`,
  ).join('---\n');

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
}

/** Non-dry-run ConfigMap writes the apiserver served so far (apiserver_request_total). */
async function writeCount(c: ClusterClient): Promise<number> {
  const text = await c.raw.requestText({ method: 'GET', path: '/metrics' });
  let total = 0;
  for (const line of String(text).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    if (!/verb="(POST|PUT|PATCH|DELETE)"/.test(line) || !/dry_run=""/.test(line)) continue;
    // The bench's objects and the inventories are ConfigMaps; nothing else writes them.
    if (!/resource="configmaps"/.test(line)) continue;
    total += Number(line.split(' ').pop());
  }
  return total;
}

async function valueOn(c: ClusterClient, ns: string, name: string): Promise<string | undefined> {
  try {
    const cm = await c.raw.getRaw<KubernetesObject & { data?: { value?: string } }>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: ns, name },
    });
    return cm.data?.value;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

const kl = await startKubeLocal({ clusters: 4, dir });
const git = await startGitServer({ username: 'bench', password: 'bench' });
let controller: ControllerProcess | undefined;
try {
  const client = (n: string) => clusterClient(n, loadKubeConfig({ kubeconfig: join(dir, n, 'kubeconfig') }));
  const hub = client('hub');
  const members = ['member-1', 'member-2', 'member-3'].map(client);
  const apply = (o: object) =>
    serverSideApply(hub, o as KubernetesObject, { fieldManager: 'bench', force: true });
  await installCrds(hub);
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
  await apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: NS, name: 'git' },
    stringData: { username: 'bench', password: 'bench' },
  });
  await apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: NS, name: 'hook' },
    stringData: { token: TOKEN },
  });
  for (const m of members) {
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: NS, name: `${m.name}-kubeconfig` },
      stringData: { kubeconfig: readFileSync(join(dir, m.name, 'kubeconfig'), 'utf8') },
    });
    await apply({
      apiVersion: 'sluice.dev/v1',
      kind: 'Cluster',
      metadata: { name: m.name, labels: { bench: 'yes' } },
      spec: { kubeconfigSecretRef: { namespace: NS, name: `${m.name}-kubeconfig`, key: 'kubeconfig' } },
    });
  }
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: NS, name: 'one' },
    spec: { clusters: [{ name: 'member-1' }] },
  });
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: NS, name: 'three' },
    spec: { clusterSelector: { matchLabels: { bench: 'yes' } } },
  });

  // Target namespaces exist on the members, as with Flux's targetNamespace.
  const namespaces = [
    'lat-1',
    'lat-3',
    'big',
    ...Array.from({ length: SMALL_DELIVERIES }, (_, i) => `small-${i}`),
  ];
  for (const m of members) {
    for (const name of namespaces) {
      await serverSideApply(
        m,
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
        { fieldManager: 'bench', force: true },
      );
    }
  }
  const { url } = await createRepo(git, 'bench', {
    'lat1/cms.yaml': configMaps(100, 'lat', 'v0'),
    'lat3/cms.yaml': configMaps(100, 'lat', 'v0'),
    'big/cms.yaml': configMaps(1000, 'big', 'v0'),
    'fifty/cms.yaml': configMaps(50, 'small', 'v0'),
  });
  controller = new ControllerProcess(
    controllerArgs(join(dir, 'hub', 'kubeconfig'), 'bench-lease', ['--leader-elect=false']),
  );
  const started = await controller.waitForLog((l) => l.message === 'controller starting');
  const webhookPort = Number(started.webhookPort);

  const source = (name: string, interval = '10m') =>
    apply({
      apiVersion: 'sluice.dev/v1',
      kind: 'GitSource',
      metadata: { namespace: NS, name },
      spec: {
        url,
        ref: { branch: 'main' },
        interval,
        secretRef: { name: 'git' },
        webhook: { secretRef: { name: 'hook' } },
      },
    });
  const delivery = (name: string, src: string, path: string, placement: string, targetNamespace: string) =>
    apply({
      apiVersion: 'sluice.dev/v1',
      kind: 'Delivery',
      metadata: { namespace: NS, name },
      spec: {
        sourceRef: { kind: 'GitSource', name: src },
        path,
        placementRef: { name: placement },
        targetNamespace,
        interval: '10m',
        prune: true,
      },
    });
  const deliveryStatus = async (name: string) =>
    (
      await hub.raw.getRaw<
        KubernetesObject & { status?: { clusters?: Array<{ phase: string; objects?: number }> } }
      >({ apiVersion: 'sluice.dev/v1', kind: 'Delivery', metadata: { namespace: NS, name } })
    ).status;
  const allHealthy = async (name: string, clusters: number) => {
    const s = await deliveryStatus(name);
    return (s?.clusters ?? []).filter((c) => c.phase === 'Healthy').length === clusters;
  };
  const until = async (check: () => Promise<boolean>, timeoutMs: number, what: string) => {
    const t = Date.now();
    while (!(await check())) {
      if (Date.now() - t > timeoutMs) throw new Error(`timed out: ${what}`);
      await sleep(20);
    }
  };

  // 1. Push-to-applied latency.
  const latency: Record<string, { p50: number; p95: number; samples: number[] }> = {};
  for (const [label, path, placement, targets] of [
    ['1', 'lat1', 'one', members.slice(0, 1)],
    ['3', 'lat3', 'three', members],
  ] as const) {
    const src = `src-${label}`;
    await source(src);
    await delivery(`lat-${label}`, src, path, placement, `lat-${label}`);
    await until(() => allHealthy(`lat-${label}`, targets.length), 180_000, `lat-${label} healthy`);
    const samples: number[] = [];
    for (let i = 1; i <= PUSHES; i++) {
      const value = `v${i}`;
      const sha = await commitFiles(git, 'bench', {
        add: { [`${path}/cms.yaml`]: configMaps(100, 'lat', value) },
        message: `push ${i}`,
      });
      const body = JSON.stringify({ ref: 'refs/heads/main', after: sha, repository: { clone_url: url } });
      const t0 = Date.now();
      const res = await fetch(`http://127.0.0.1:${webhookPort}/hooks/${NS}/${src}`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'X-GitHub-Event': 'push',
          'X-Hub-Signature-256': `sha256=${createHmac('sha256', TOKEN).update(body).digest('hex')}`,
        },
        body,
      });
      if (res.status !== 200) throw new Error(`webhook answered ${res.status}: ${await res.text()}`);
      // Applied = the last object of the set serves the new value on every placed cluster.
      await until(
        async () =>
          (await Promise.all(targets.map((m) => valueOn(m, `lat-${label}`, 'lat-99')))).every(
            (v) => v === value,
          ),
        60_000,
        `push ${i}`,
      );
      samples.push(Date.now() - t0);
    }
    latency[label] = { p50: percentile(samples, 50), p95: percentile(samples, 95), samples };
  }

  // 2. Fresh apply of 1,000 objects to 3 clusters.
  await source('src-big');
  const t1 = Date.now();
  await delivery('big', 'src-big', 'big', 'three', 'big');
  await until(() => allHealthy('big', 3), 600_000, 'big healthy');
  const freshSeconds = (Date.now() - t1) / 1000;
  const objectsPerMinute = (3000 / freshSeconds) * 60;

  // 3. No-op resync of the same 1,000 objects.
  const before = await Promise.all(members.map(writeCount));
  const since = controller.lines.length;
  await requestReconcile(hub, { apiVersion: 'sluice.dev/v1', kind: 'Delivery', namespace: NS, name: 'big' });
  const line = await controller.waitForLog(
    (l) =>
      controller!.lines.indexOf(l) >= since &&
      l.message === 'reconciled' &&
      l.controller === 'delivery' &&
      l.key === `${NS}/big`,
    300_000,
  );
  await sleep(1000);
  const after = await Promise.all(members.map(writeCount));
  const noopWrites = after.reduce((s, v, i) => s + v - before[i]!, 0);
  const noopSeconds = Number(line.durationMs) / 1000;

  // 4. RSS with 100 Deliveries × 3 clusters × 50 objects.
  await source('src-small');
  for (let i = 0; i < SMALL_DELIVERIES; i++)
    await delivery(`small-${i}`, 'src-small', 'fifty', 'three', `small-${i}`);
  await until(
    async () => {
      const list = await hub.raw.listRaw<
        KubernetesObject & { status?: { clusters?: Array<{ phase: string }> } }
      >('sluice.dev/v1', 'Delivery', { namespace: NS });
      const small = list.items.filter((d) => d.metadata?.name?.startsWith('small-'));
      return (
        small.length === SMALL_DELIVERIES &&
        small.every((d) => (d.status?.clusters ?? []).filter((c) => c.phase === 'Healthy').length === 3)
      );
    },
    1_200_000,
    'small deliveries healthy',
  );
  await sleep(5000);
  const status = readFileSync(`/proc/${controller.child.pid}/status`, 'utf8');
  const kib = (f: string) => Number(new RegExp(`^${f}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);

  const result = {
    bench: 'delivery',
    pushes: PUSHES,
    push_to_applied_ms_1_cluster_p50: latency['1']!.p50,
    push_to_applied_ms_1_cluster_p95: latency['1']!.p95,
    push_to_applied_ms_3_clusters_p50: latency['3']!.p50,
    push_to_applied_ms_3_clusters_p95: latency['3']!.p95,
    fresh_apply_1000x3_seconds: Number(freshSeconds.toFixed(1)),
    fresh_apply_objects_per_minute: Math.round(objectsPerMinute),
    noop_resync_1000x3_write_calls: noopWrites,
    noop_resync_1000x3_seconds: Number(noopSeconds.toFixed(2)),
    rss_mib_100_deliveries_x3x50: Math.round(kib('VmRSS') / 1024),
    peak_rss_mib_100_deliveries_x3x50: Math.round(kib('VmHWM') / 1024),
  };
  console.log(JSON.stringify(result));
  console.log(
    `push-to-applied (webhook, 100 objects): 1 cluster p50 ${result.push_to_applied_ms_1_cluster_p50} ms, p95 ${result.push_to_applied_ms_1_cluster_p95} ms; 3 clusters p50 ${result.push_to_applied_ms_3_clusters_p50} ms, p95 ${result.push_to_applied_ms_3_clusters_p95} ms (${PUSHES} pushes each)`,
  );
  console.log(
    `fresh apply of 1,000 objects to 3 clusters: ${result.fresh_apply_1000x3_seconds} s = ${result.fresh_apply_objects_per_minute} objects/min`,
  );
  console.log(
    `no-op resync of 1,000 objects on 3 clusters: ${noopWrites} write calls, ${result.noop_resync_1000x3_seconds} s`,
  );
  console.log(
    `controller RSS with ${SMALL_DELIVERIES} Deliveries × 3 clusters × 50 objects: ${result.rss_mib_100_deliveries_x3x50} MiB (peak ${result.peak_rss_mib_100_deliveries_x3x50} MiB)`,
  );
} finally {
  await controller?.kill('SIGTERM');
  await git.stop();
  await kl.stop();
}
