/**
 * `make demo`, chapter 4 — API evolution.
 *
 * A release engineer applies the CanaryRelease they already write (v1alpha1) with kubectl; the
 * controller's conversion webhook stores it as v1 and it reads back as the equivalent v1 (the
 * success rate a floor, the p95 latency a ceiling). A metric whose name says neither is
 * refused at admission with its field path. Then `sluice scan` and `sluice fix` run over a
 * folder of old manifests (examples/api-migration/old-manifests).
 *
 * `apiChapter` runs on a hub the caller set up (scripts/demo.ts); run directly
 * (`npx tsx scripts/demo-api.ts`), it starts its own one-cluster kube-local. DEMO_ONCE=1:
 * exit 0 when the chapter succeeded, leaving no process behind.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { installCrds } from '../src/api/install.js';
import { serverSideApply } from '../src/kube/apply.js';
import { clusterClient, loadKubeConfig, type ClusterClient } from '../src/kube/clients.js';
import { unregisterValidatingWebhooks } from '../src/webhooks/registration.js';
import { ControllerProcess, SLUICE_CLI } from '../test/support/controller-process.js';
import { REPO_ROOT, startKubeLocal } from '../test/support/kube-local.mjs';

const say = (text: string) => console.log(`\x1b[1m▸ ${text}\x1b[0m`);
const indent = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n');

const EXAMPLES = join(REPO_ROOT, 'examples', 'api-migration');
const NAMESPACE = 'demo-api';

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function kubectl(kubeconfig: string, args: string[], stdin?: string): Promise<Run> {
  return new Promise((done) => {
    const p = spawn('kubectl', [...args, '--kubeconfig', kubeconfig]);
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => done({ code: code ?? -1, stdout, stderr }));
    p.stdin.end(stdin ?? '');
  });
}

/** Drops kubectl's deprecation warning line (v1alpha1 is served but deprecated). */
const withoutWarnings = (text: string) =>
  text
    .split('\n')
    .filter((l) => !l.startsWith('Warning:'))
    .join('\n');

function sluice(args: string[]): Run {
  const r = spawnSync(process.execPath, [SLUICE_CLI, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** What chapter 4 needs from the caller. */
export interface ApiChapterOptions {
  hub: ClusterClient;
  hubKubeconfig: string;
  /** Where the chapter's controller keeps its artifacts. */
  storagePath: string;
}

/** A running chapter: `stop` ends its controller and removes its webhook registration. */
export interface ApiChapter {
  stop(): Promise<void>;
}

/** Runs chapter 4; throws when something the chapter shows did not happen. */
export async function apiChapter(opts: ApiChapterOptions): Promise<ApiChapter> {
  const { hub, hubKubeconfig } = opts;
  say('chapter 4 — API evolution: CanaryRelease v1alpha1 next to v1, and removed Kubernetes APIs');
  say('a controller replica serving the conversion and admission webhooks (TLS, generated CA)');
  // Webhooks run on every replica, leader or not: this one may stand by for the Lease.
  const controller = new ControllerProcess([
    '--kubeconfig',
    hubKubeconfig,
    '--metrics-bind-address',
    '127.0.0.1:0',
    '--health-probe-bind-address',
    '127.0.0.1:0',
    '--webhook-bind-address',
    '0',
    '--webhook-port',
    '0',
    '--feature-gates',
    'StorageMigration=true',
    '--storage-path',
    opts.storagePath,
    '--leader-election-namespace',
    'sluice-system',
  ]);
  const stop = async () => {
    await controller.kill('SIGTERM');
    // The CanaryRelease webhook fails closed: leave no registration pointing at a stopped process.
    await unregisterValidatingWebhooks(hub);
  };
  try {
    const serving = await controller.waitForLog((l) => l.message === 'webhooks serving', 60_000);
    console.log(
      `  webhooks on https://127.0.0.1:${String(serving.port)} (caBundle written to the CRD and the webhook configuration)`,
    );
    await serverSideApply(
      hub,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } },
      {
        fieldManager: 'sluice-demo',
      },
    );

    const example = join(EXAMPLES, 'canary-release-v1alpha1.yaml');
    say(`kubectl apply -n ${NAMESPACE} -f examples/api-migration/canary-release-v1alpha1.yaml   # v1alpha1`);
    let applied: Run = { code: -1, stdout: '', stderr: '' };
    // The apiserver loads the webhook's caBundle asynchronously: the first seconds may refuse.
    for (let i = 0; i < 40 && applied.code !== 0; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 500));
      applied = await kubectl(hubKubeconfig, ['apply', '-n', NAMESPACE, '-f', example]);
    }
    if (applied.code !== 0) throw new Error(`kubectl apply failed: ${applied.stderr}`);
    console.log(indent(withoutWarnings(applied.stderr + applied.stdout)));

    say('kubectl get canaryreleases.v1.sluice.dev payment-service-v2 -o yaml   # read back as v1');
    const v1 = await kubectl(hubKubeconfig, [
      'get',
      'canaryreleases.v1.sluice.dev',
      'payment-service-v2',
      '-n',
      NAMESPACE,
      '-o',
      'jsonpath={.apiVersion}{"\\n"}{.spec}',
    ]);
    if (v1.code !== 0) throw new Error(`kubectl get v1 failed: ${v1.stderr}`);
    const [apiVersion, specJson] = v1.stdout.split('\n');
    const spec = JSON.parse(specJson!) as {
      steps: { weights: number[] };
      analysis: {
        metrics: Array<{ name: string; thresholdRange: { min?: number; max?: number }; weight: number }>;
      };
    };
    console.log(`  apiVersion: ${apiVersion}`);
    console.log(
      `  steps.weights: ${JSON.stringify(spec.steps.weights)}   (trafficSplit canary 10 → one step, then promote)`,
    );
    for (const m of spec.analysis.metrics)
      console.log(
        `  metric ${m.name.padEnd(28)} thresholdRange ${JSON.stringify(m.thresholdRange).padEnd(14)} weight ${m.weight}`,
      );
    const [success, latency] = spec.analysis.metrics;
    if (
      apiVersion !== 'sluice.dev/v1' ||
      success?.thresholdRange.min !== 0.995 ||
      latency?.thresholdRange.max !== 800
    )
      throw new Error('the v1 view does not mean what the v1alpha1 author meant');

    say('kubectl get canaryreleases.v1alpha1.sluice.dev payment-service-v2   # and still as v1alpha1');
    const alpha = await kubectl(hubKubeconfig, [
      'get',
      'canaryreleases.v1alpha1.sluice.dev',
      'payment-service-v2',
      '-n',
      NAMESPACE,
      '-o',
      'jsonpath={.spec.trafficSplit}{"\\n"}{.spec.metrics[*].name}',
    ]);
    if (alpha.code !== 0) throw new Error(`kubectl get v1alpha1 failed: ${alpha.stderr}`);
    console.log(indent(alpha.stdout));

    say('a v1alpha1 metric whose name says neither floor nor ceiling is refused at admission');
    const bad = readFileSync(example, 'utf8')
      .replace('payment-service-v2', 'payment-service-v3')
      .replace('p95_latency_ms', 'checkout_orders');
    const refused = await kubectl(hubKubeconfig, ['apply', '-n', NAMESPACE, '-f', '-'], bad);
    if (refused.code === 0) throw new Error('an undecidable threshold was accepted');
    console.log(indent(withoutWarnings(refused.stderr).slice(0, 400) + '…'));

    const old = join(EXAMPLES, 'old-manifests');
    say('sluice scan examples/api-migration/old-manifests --target-version 1.29');
    const scan = sluice(['scan', old, '--target-version', '1.29']);
    console.log(indent(scan.stdout + scan.stderr));
    console.log(`  (exit ${scan.code})`);
    if (!/removed/i.test(scan.stdout))
      throw new Error(`sluice scan found no removed API (exit ${scan.code})`);

    say(
      'sluice fix examples/api-migration/old-manifests --target-version 1.29   # prints the diff; --write applies it',
    );
    const fix = sluice(['fix', old, '--target-version', '1.29']);
    console.log(indent(fix.stdout + fix.stderr));
    console.log(`  (exit ${fix.code})`);
    if (!/FIXED|FLAG/.test(fix.stdout)) throw new Error(`sluice fix reported nothing (exit ${fix.code})`);
    return { stop };
  } catch (err) {
    console.error(controller.tail());
    await stop();
    throw err;
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const once = process.env.DEMO_ONCE === '1';
  const dir = join(REPO_ROOT, '.work', 'demo-api');
  say('starting kube-local: hub');
  const kubeLocal = await startKubeLocal({ clusters: 1, dir });
  let chapter: ApiChapter | undefined;
  let exitCode = 1;
  const cleanup = async () => {
    await chapter?.stop().catch(() => undefined);
    await kubeLocal.stop();
  };
  process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));
  process.once('SIGTERM', () => void cleanup().then(() => process.exit(143)));
  try {
    const hubKubeconfig = join(dir, 'hub', 'kubeconfig');
    const hub = clusterClient('hub', loadKubeConfig({ kubeconfig: hubKubeconfig }));
    await installCrds(hub);
    await serverSideApply(
      hub,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'sluice-system' } },
      {
        fieldManager: 'sluice-demo',
      },
    );
    chapter = await apiChapter({ hub, hubKubeconfig, storagePath: join(dir, 'storage') });
    exitCode = 0;
    if (!once) {
      say(
        `running; try kubectl --kubeconfig ${hubKubeconfig} get canaryreleases.v1alpha1.sluice.dev -A (Ctrl-C stops)`,
      );
      await new Promise(() => undefined);
    }
  } catch (err) {
    console.error(`chapter 4 failed: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    await cleanup();
  }
  say(exitCode === 0 ? 'done: chapter 4 succeeded' : 'chapter 4 failed');
  process.exit(exitCode);
}
