/**
 * `make demo`: Sluice on embedded local clusters, with the examples.
 *
 * Chapter 1 — clusters: starts kube-local (hub, member-1..3), installs the CRDs on the hub,
 * registers the members from examples/clusters/ (kubeconfigs in Secrets), starts the
 * controller and prints what it sees.
 * Chapter 2 — GitOps delivery (scripts/demo-delivery.ts).
 * Chapter 3 — progressive delivery on a real data plane (scripts/demo-canary.ts).
 *
 * DEMO_ONCE=1 runs unattended: exit 0 once every chapter succeeded, non-zero otherwise,
 * and leaves no process behind. Without it the demo keeps running (Ctrl-C stops it).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Cluster } from '../src/api/cluster.js';
import { installCrds } from '../src/api/install.js';
import { serverSideApply } from '../src/kube/apply.js';
import { clusterClient, loadKubeConfig } from '../src/kube/clients.js';
import { ControllerProcess, SLUICE_CLI } from '../test/support/controller-process.js';
import type { GitServer } from '../test/support/git-server.js';
import { canaryChapter } from './demo-canary.js';
import { deliveryChapter } from './demo-delivery.js';
import { REPO_ROOT, startKubeLocal } from '../test/support/kube-local.mjs';

const once = process.env.DEMO_ONCE === '1';
const dir = join(REPO_ROOT, '.work', 'demo');
const say = (text: string) => console.log(`\x1b[1m▸ ${text}\x1b[0m`);

function table(clusters: Cluster[]): string {
  const rows = [['NAME', 'ENV', 'REGION', 'AVAILABLE', 'VERSION', 'CPU', 'MEMORY', 'MESSAGE']];
  for (const c of clusters) {
    const a = c.status?.conditions?.find((x) => x.type === 'Available');
    rows.push([
      c.metadata?.name ?? '',
      c.metadata?.labels?.env ?? '',
      c.metadata?.labels?.region ?? '',
      a?.status ?? 'Unknown',
      c.status?.version ?? '',
      c.status?.allocatable?.cpu ?? '',
      c.status?.allocatable?.memory ?? '',
      a?.message ?? '',
    ]);
  }
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => cell.padEnd(widths[i]!)).join('  ')).join('\n');
}

say('starting kube-local: hub, member-1..3 (real kube-apiserver, etcd, controller-manager)');
const kubeLocal = await startKubeLocal({ clusters: 4, dir });
const MEMBERS = ['member-1', 'member-2', 'member-3'];
let controller: ControllerProcess | undefined;
let exitCode = 1;
let git: GitServer | undefined;
const cleanup = async () => {
  await controller?.kill('SIGTERM');
  await git?.stop();
  await kubeLocal.stop();
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
process.once('SIGTERM', () => void cleanup().then(() => process.exit(143)));

try {
  console.log(`  ready in ${kubeLocal.readySeconds.toFixed(1)}s; kubeconfigs in ${dir}/<cluster>/kubeconfig`);
  const hubKubeconfig = join(dir, 'hub', 'kubeconfig');
  const hub = clusterClient('hub', loadKubeConfig({ kubeconfig: hubKubeconfig }));

  say('installing the CRDs on the hub');
  for (const name of await installCrds(hub)) console.log(`  customresourcedefinition/${name} established`);

  say('registering member-1..3 from examples/clusters/');
  const apply = (obj: KubernetesObject) =>
    serverSideApply(hub, obj, { fieldManager: 'sluice-demo', force: true });
  await apply({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sluice-system' } });
  for (const member of MEMBERS) {
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: 'sluice-system', name: `${member}-kubeconfig` },
      stringData: { kubeconfig: readFileSync(join(dir, member, 'kubeconfig'), 'utf8') },
    } as KubernetesObject);
  }
  const examples = join(REPO_ROOT, 'examples', 'clusters');
  for (const file of readdirSync(examples).sort()) {
    for (const doc of parseAllDocuments(readFileSync(join(examples, file), 'utf8'))) {
      const obj = doc.toJS() as KubernetesObject;
      await apply(obj);
      console.log(`  ${obj.kind?.toLowerCase()}/${obj.metadata?.name} applied (${file})`);
    }
  }

  say('starting the controller: sluice controller --kubeconfig .work/demo/hub/kubeconfig');
  controller = new ControllerProcess([
    '--kubeconfig',
    hubKubeconfig,
    '--metrics-bind-address',
    '127.0.0.1:0',
    '--health-probe-bind-address',
    '127.0.0.1:0',
    '--webhook-bind-address',
    '127.0.0.1:0',
    '--storage-path',
    join(dir, 'storage'),
    '--leader-election-namespace',
    'sluice-system',
    '--cluster-probe-interval',
    '10s',
  ]);
  await controller.waitForLog((l) => l.message === 'controllers started', 60_000);
  console.log('  leader elected, controllers started');

  say('what the controller sees');
  const list = async () =>
    (await hub.raw.listRaw<Cluster>('sluice.dev/v1', 'Cluster')).items.sort((a, b) =>
      (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
  const deadline = Date.now() + 60_000;
  let clusters = await list();
  const allAvailable = (cs: Cluster[]) =>
    cs.length > 0 &&
    cs.every((c) => c.status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True'));
  while (!allAvailable(clusters) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 500));
    clusters = await list();
  }
  console.log(table(clusters));
  if (!allAvailable(clusters)) throw new Error('not every member cluster became Available within 60s');

  const started = await controller.waitForLog((l) => l.message === 'controller starting');
  const members = Object.fromEntries(
    MEMBERS.map((m) => [m, clusterClient(m, loadKubeConfig({ kubeconfig: join(dir, m, 'kubeconfig') }))]),
  );
  git = await deliveryChapter({
    hub,
    members,
    apply,
    webhookPort: Number(started.webhookPort),
    relabel: async (name, labels) => {
      const cluster = clusters.find((c) => c.metadata?.name === name)!;
      await apply({
        apiVersion: cluster.apiVersion,
        kind: cluster.kind,
        metadata: { name, labels },
        spec: cluster.spec,
      } as KubernetesObject);
    },
  });
  say('sluice get deliveries -A');
  console.log(
    execFileSync(process.execPath, [SLUICE_CLI, 'get', 'deliveries', '-A', '--kubeconfig', hubKubeconfig], {
      encoding: 'utf8',
    }),
  );
  await canaryChapter({
    hub,
    hubKubeconfig,
    cluster: 'member-1',
    memberKubeconfig: join(dir, 'member-1', 'kubeconfig'),
    apply,
    git,
  });
  exitCode = 0;
  if (!once) {
    say('running; the table refreshes every 10 s (Ctrl-C stops the demo and the clusters)');
    for (;;) {
      await new Promise((r) => setTimeout(r, 10_000));
      console.log(`\n${table(await list())}`);
    }
  }
} catch (err) {
  console.error(`demo failed: ${err instanceof Error ? err.message : String(err)}`);
  if (controller) console.error(controller.tail());
  exitCode = 1;
} finally {
  await cleanup();
}
say(exitCode === 0 ? 'done: every chapter succeeded' : 'demo failed');
process.exit(exitCode);
