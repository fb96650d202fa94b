/**
 * bench/rollback — time to safety after a failed analysis: ROUNDS bad commits, each pushed to a
 * real Git server, synced by a Delivery onto member-1, analysed against a real Prometheus (the
 * metric fails at once, failureLimit 1) and rolled back by the real `sluice controller` process
 * (dist/) with `gitWriteBack: revert`.
 *
 *   make bench-rollback      (or: npx tsx bench/rollback.ts)
 *   SLUICE_TEST_CLUSTERS_DIR=/tmp/kl npx tsx bench/rollback.ts   (reuse running clusters)
 *
 * Figures, from the controller's `sluice_canary_rollback_seconds{stage}` summary (measured from
 * the start of the analysis tick that crossed the failure limit):
 * - traffic: until every cluster's router and target are confirmed at 100% primary (goal ≤ 1 s);
 * - gitWriteBack: until the revert commit is pushed (goal ≤ 3 s).
 * Each round is also checked from outside: the target at 0 replicas, the primary at its count,
 * the revert at the tip of the branch naming the metric, the Delivery back on a good revision.
 * Prints one JSON object, then one human line.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { CanaryRelease } from '../src/api/canary-release.js';
import type { Delivery } from '../src/api/delivery.js';
import { installCrds } from '../src/api/install.js';
import { clusterClient, loadKubeConfig, type ClusterClient } from '../src/kube/clients.js';
import type { DeploymentLike } from '../src/rollout/workload.js';
import { ControllerProcess, controllerArgs } from '../test/support/controller-process.js';
import { commitFiles, createRepo, runGit, startGitServer } from '../test/support/git-server.js';
import { REPO_ROOT, startKubeLocal } from '../test/support/kube-local.mjs';
import { deploymentManifest } from '../test/support/manifests.js';
import { startPrometheus } from '../test/support/prometheus-basic.js';
import { applyAsBench, registerMember, sleep, unregisterMember } from './support.js';

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const run = `bench-rollback-${Date.now().toString(36)}`;
const NS = run;
const CLUSTER = `${run}-m1`;

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(200);
  }
}

/** A quantile of a prom-client summary, e.g. `name{quantile="0.5",stage="traffic"} 0.41`. */
function quantile(text: string, name: string, stage: string, q: string): number | undefined {
  const line = text
    .split('\n')
    .find((l) => l.startsWith(`${name}{`) && l.includes(`stage="${stage}"`) && l.includes(`quantile="${q}"`));
  const v = line ? Number(line.split(' ').pop()) : NaN;
  return Number.isFinite(v) ? v : undefined;
}
function count(text: string, name: string, stage: string): number {
  const prefix = `${name}_count{stage="${stage}"} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line ? Number(line.slice(prefix.length)) : 0;
}

function manifest(version: string): string {
  const d = deploymentManifest('web', 2);
  d.spec.template.spec.containers[0] = {
    ...d.spec.template.spec.containers[0]!,
    env: [{ name: 'VERSION', value: version }],
  } as never;
  return stringify(d);
}

const shared = process.env.SLUICE_TEST_CLUSTERS_DIR;
const dir = shared ?? join(REPO_ROOT, '.work', 'bench-rollback');
const kl = shared ? undefined : await startKubeLocal({ clusters: 2, dir });
const prom = await startPrometheus();
const git = await startGitServer();
const storage = mkdtempSync(join(tmpdir(), 'sluice-bench-rollback-'));
let controller: ControllerProcess | undefined;
const client = (n: string): ClusterClient =>
  clusterClient(n, loadKubeConfig({ kubeconfig: join(dir, n, 'kubeconfig') }));
const hub = client('hub');
const member = client('member-1');
const apply = applyAsBench;
const get = <T>(c: ClusterClient, apiVersion: string, kind: string, name: string) =>
  c.raw.getRaw<T & KubernetesObject>({ apiVersion, kind, metadata: { namespace: NS, name } });
const release = () => get<CanaryRelease>(hub, 'sluice.dev/v1', 'CanaryRelease', 'web');
const delivery = () => get<Delivery>(hub, 'sluice.dev/v1', 'Delivery', 'apps');
const deployment = (name: string) => get<DeploymentLike>(member, 'apps/v1', 'Deployment', name);

try {
  await installCrds(hub);
  await registerMember(hub, member, dir, NS, CLUSTER);
  await createRepo(git, 'app', { 'deploy/web.yaml': manifest('v0') });
  const creds = git.credentials();
  await apply(hub, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: NS, name: 'git-auth' },
    stringData: { username: creds.username, password: creds.password },
  });
  await apply(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: NS, name: 'app' },
    spec: { url: git.url('app'), ref: { branch: 'main' }, interval: '1s', secretRef: { name: 'git-auth' } },
  });
  await apply(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: NS, name: 'one' },
    spec: { clusters: [{ name: CLUSTER }] },
  });
  await apply(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: NS, name: 'apps' },
    spec: {
      sourceRef: { kind: 'GitSource', name: 'app' },
      placementRef: { name: 'one' },
      path: './deploy',
      targetNamespace: NS,
      interval: '2s',
    },
  });
  await apply(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: NS, name: 'web' },
    spec: {
      deliveryRef: { name: 'apps' },
      targetRef: { kind: 'Deployment', name: 'web' },
      service: { port: 80 },
      strategy: 'canary',
      trafficRouting: { provider: 'replicas' },
      steps: { weights: [50] },
      interval: '2s',
      analysis: {
        failureLimit: 1,
        provider: { type: 'prometheus', address: prom.url, timeout: '5s' },
        // Fails on every analysis: each new version is rolled back at its first analysis tick.
        metrics: [{ name: 'success-rate', query: 'vector(0.5)', thresholdRange: { min: 0.99 } }],
      },
      gitWriteBack: { mode: 'revert' },
    },
  });

  controller = new ControllerProcess(
    controllerArgs(join(dir, 'hub', 'kubeconfig'), `${run}-lease`, ['--leader-elect=false']),
  );
  const starting = await controller.waitForLog((l) => l.message === 'controller starting', 120_000);
  const metricsPort = Number(starting.metricsPort);
  await until(
    'the first version initialised',
    async () => ((await release()).status?.phase === 'Succeeded' ? true : undefined),
    300_000,
  );

  const rounds: Array<{ round: number; wall_s: number; revert: string }> = [];
  for (let i = 1; i <= ROUNDS; i++) {
    const pushedAt = Date.now();
    const bad = await commitFiles(git, 'app', {
      add: { 'deploy/web.yaml': manifest(`v${i}`) },
      message: `ship v${i}`,
    });
    const revision = `main@sha1:${bad}`;
    const rolled = await until(
      `round ${i}: ${revision} rolled back and reverted`,
      async () => {
        const r = await release();
        return r.status?.phase === 'RolledBack' &&
          r.status.rollback?.revision === revision &&
          r.status.rollback.writeBack?.commit
          ? r
          : undefined;
      },
      120_000,
    );
    const revert = rolled.status!.rollback!.writeBack!.commit!;
    // From outside: the revert is the tip and names the metric; all traffic on the primary.
    const tip = await runGit(['--git-dir', join(git.root, 'app.git'), 'rev-parse', 'main']);
    const message = await runGit([
      '--git-dir',
      join(git.root, 'app.git'),
      'log',
      '-1',
      '--format=%B',
      'main',
    ]);
    if (tip !== revert || !message.includes('success-rate') || !message.includes(`Sluice-Reverts: ${bad}`))
      throw new Error(
        `round ${i}: the tip ${tip} is not the revert ${revert} naming the metric:\n${message}`,
      );
    const target = await deployment('web');
    const primary = await deployment('web-primary');
    if (target.spec?.replicas !== 0 || primary.spec?.replicas !== 2)
      throw new Error(
        `round ${i}: target at ${target.spec?.replicas} replicas, primary at ${primary.spec?.replicas}`,
      );
    // The Delivery applies the revert before the next round (never the bad revision again).
    await until(
      `round ${i}: the Delivery at the revert`,
      async () =>
        (await delivery()).status?.lastAppliedRevision === `main@sha1:${revert}` ? true : undefined,
      120_000,
    );
    rounds.push({ round: i, wall_s: Number(((Date.now() - pushedAt) / 1000).toFixed(1)), revert });
  }

  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const name = 'sluice_canary_rollback_seconds';
  const ms = (stage: string, q: string) => {
    const v = quantile(text, name, stage, q);
    return v === undefined ? null : Math.round(v * 1000);
  };
  const result = {
    bench: 'rollback',
    rounds: ROUNDS,
    traffic_observed: count(text, name, 'traffic'),
    traffic_ms_p50: ms('traffic', '0.5'),
    traffic_ms_p90: ms('traffic', '0.9'),
    traffic_ms_max: ms('traffic', '1'),
    git_write_back_observed: count(text, name, 'gitWriteBack'),
    git_write_back_ms_p50: ms('gitWriteBack', '0.5'),
    git_write_back_ms_p90: ms('gitWriteBack', '0.9'),
    git_write_back_ms_max: ms('gitWriteBack', '1'),
    push_to_reverted_s_mean: Number((rounds.reduce((a, r) => a + r.wall_s, 0) / rounds.length).toFixed(1)),
  };
  console.log(JSON.stringify(result));
  console.log(
    `${ROUNDS} rollbacks (failing analysis tick → …): 100% primary p50 ${result.traffic_ms_p50} ms, max ${result.traffic_ms_max} ms (goal ≤ 1000); ` +
      `revert pushed p50 ${result.git_write_back_ms_p50} ms, max ${result.git_write_back_ms_max} ms (goal ≤ 3000); ` +
      `bad commit pushed → revert applied by the Delivery ${result.push_to_reverted_s_mean} s on average`,
  );
} finally {
  await controller?.kill('SIGTERM');
  await prom.stop();
  await git.stop();
  await unregisterMember(hub, member, NS, CLUSTER);
  rmSync(storage, { recursive: true, force: true });
  await kl?.stop();
}
