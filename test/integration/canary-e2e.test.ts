// Issue 4's acceptance, end to end on the real test bed: the built `sluice controller` process
// on the hub; member-1 runs the demo app's pods as real processes (kube-local's node agent),
// Traefik routes real requests by the HTTPRoute weights Sluice sets, Debian's Prometheus
// scrapes the pods' OpenTelemetry metrics, a load generator sends steady traffic through the
// gateway, and a real Git server holds examples/canary/deploy. The suite drives the system
// only as a user would — commits to Git, stopping Prometheus, stopping the traffic — and
// checks what the user would: who answers requests, `git log`, the Delivery and the release's
// status.
//
// The cases run in order on one release: each pushes the next version on top of the last.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CanaryRelease } from '../../src/api/canary-release.js';
import type { Delivery } from '../../src/api/delivery.js';
import type { DeploymentLike } from '../../src/rollout/workload.js';
import { isNotFound } from '../../src/kube/errors.js';
import { eventually, kubeconfigPath, testClient, uniqueName } from '../support/clusters.js';
import { ControllerProcess, controllerArgs } from '../support/controller-process.js';
import { startGateway, type Gateway } from '../support/data-plane.js';
import { commitFiles, createRepo, runGit, startGitServer, type GitServer } from '../support/git-server.js';
import { canaryDeployFiles, canaryHubObjects, retryOnPortTaken } from '../support/canary-example.js';
import { startLoad, versionShare, type Load, type LoadCounts } from '../support/load.js';
import { startClusterPrometheus, type ClusterPrometheus } from '../support/prometheus.js';
import {
  available,
  createNamespace,
  deleteObject,
  ensureCrds,
  getCluster,
  kubeconfigSecret,
  registerCluster,
  secret,
} from '../support/sluice-objects.js';

const hub = testClient('hub');
const m1 = testClient('member-1');
const run = uniqueName('canary-e2e');
/** Hub namespace of the Sluice objects and member-1 namespace of the workload (they must match). */
const ns = run;
const member = `${run}-member-1`;
const RPS = 50;

let git: GitServer;
let gateway: Gateway | undefined;
let prom: ClusterPrometheus | undefined;
let controller: ControllerProcess | undefined;
let load: Load | undefined;
let spec: CanaryRelease['spec'];

/** Pushes `version` of examples/canary/deploy; resolves with the revision the GitSource will report. */
async function push(version: string): Promise<string> {
  const sha = await commitFiles(git, 'demo-app', {
    add: canaryDeployFiles(version),
    message: `demo-app ${version}`,
  });
  return `main@sha1:${sha}`;
}

// ---------------------------------------------------------------------------------------------
// Reads

async function apply(obj: KubernetesObject): Promise<void> {
  await hub.raw.applyRaw(obj, { fieldManager: 'sluice-test', force: true });
}

const getRelease = () =>
  hub.raw.getRaw<CanaryRelease & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: ns, name: 'demo-app' },
  });

const getDelivery = () =>
  hub.raw.getRaw<Delivery & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name: 'demo-app' },
  });

async function deployment(name: string): Promise<DeploymentLike | undefined> {
  try {
    return await m1.raw.getRaw<DeploymentLike>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace: ns, name },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

const imageOf = (d: DeploymentLike | undefined): string | undefined =>
  (d?.spec?.template?.spec?.containers as Array<{ image?: string }> | undefined)?.[0]?.image;

/** Polls the release until `check` holds; on timeout the error shows its status and the controller's log. */
async function waitRelease(
  check: (r: CanaryRelease) => boolean,
  timeoutMs = 120_000,
  onEach?: (r: CanaryRelease) => void,
): Promise<CanaryRelease> {
  let last: CanaryRelease | undefined;
  try {
    return await eventually(
      async () => {
        last = await getRelease();
        onEach?.(last);
        return check(last) ? last : undefined;
      },
      timeoutMs,
      100,
    );
  } catch (err) {
    const s = last?.status;
    throw new Error(
      `${(err as Error).message}\nphase ${s?.phase} step ${s?.step} weight ${s?.canaryWeight}\n` +
        `conditions ${JSON.stringify(s?.conditions)}\ntransitions ${JSON.stringify(s?.transitions?.slice(-6), null, 1)}\n` +
        `measurements ${JSON.stringify(s?.measurements?.slice(-4))}\ncontroller:\n${controller?.tail()}`,
    );
  }
}

/**
 * Waits for a 2 s window in which only `version` answered and no request failed; the error
 * shows the last window and Traefik's log. Requests that failed in the windows before (the
 * switch) are printed: they are what users saw while it happened.
 */
async function untilOnly(version: string, timeoutMs = 20_000): Promise<LoadCounts> {
  let last: LoadCounts | undefined;
  let failedBefore = 0;
  try {
    const clean = await eventually(async () => {
      if (last) failedBefore += last.errors;
      last = await trafficFor(2000);
      return last.byVersion[version] && versionShare(last, version) === 1 && last.errors === 0
        ? last
        : undefined;
    }, timeoutMs);
    if (failedBefore > 0)
      console.log(`${failedBefore} request(s) failed before only ${version} answered cleanly`);
    return clean;
  } catch (err) {
    throw new Error(
      `${(err as Error).message}: not only ${version}: ${JSON.stringify(last)}\ntraefik:\n${gateway?.log().slice(-3000)}`,
    );
  }
}

/** Counts of what answered during the next `ms`. */
async function trafficFor(ms: number): Promise<LoadCounts> {
  load!.reset();
  await new Promise((r) => setTimeout(r, ms));
  return load!.counts();
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Watches a run from outside: when the canary first answered a request and when it last did
 * (from the load's counts, polled every 50 ms), and when the release was first seen RollingBack.
 */
function watchCanary(version: string): {
  firstAnswer: () => number | undefined;
  lastAnswer: () => number | undefined;
  stop: () => void;
} {
  let first: number | undefined;
  let last: number | undefined;
  let seen = load!.counts().byVersion[version] ?? 0;
  const timer = setInterval(() => {
    const n = load!.counts().byVersion[version] ?? 0;
    if (n < seen) seen = 0; // the counts were reset
    if (n > seen) {
      first ??= Date.now();
      last = Date.now();
    }
    seen = n;
  }, 50);
  // A failing case throws before stop(): the timer must not keep jest alive.
  timer.unref();
  return { firstAnswer: () => first, lastAnswer: () => last, stop: () => clearInterval(timer) };
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  git = await startGitServer();
  await createRepo(git, 'demo-app', canaryDeployFiles('v1'), 'demo-app v1');
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  await createNamespace(m1, ns);
  await secret(hub, ns, 'demo-app-git-auth', git.credentials());
  await kubeconfigSecret(hub, ns, 'member-1-kubeconfig', 'member-1');
  await registerCluster(hub, member, { namespace: ns, name: 'member-1-kubeconfig' });
  // The data plane of member-1: the Gateway the HTTPRoute from Git attaches to (same namespace),
  // and Prometheus scraping this namespace's demo pods.
  gateway = await retryOnPortTaken(() =>
    startGateway({ kubeconfig: kubeconfigPath('member-1'), namespace: ns, watchNamespaces: [ns] }),
  );
  prom = await retryOnPortTaken(() =>
    startClusterPrometheus({ kubeconfig: kubeconfigPath('member-1'), namespaces: [ns] }),
  );
  const flags = controllerArgs(kubeconfigPath('hub'), uniqueName('lease'), [
    '--leader-elect=false',
    '--cluster-probe-interval',
    '2s',
  ]);
  controller = new ControllerProcess(flags);
  await controller.waitForLog((l) => l.message === 'controllers started');
  await eventually(async () => available(await getCluster(hub, member))?.status === 'True', 60_000);
  const objects = canaryHubObjects({
    namespace: ns,
    gitUrl: git.url('demo-app'),
    gitInterval: '1s',
    cluster: member,
    prometheusUrl: prom.url,
  });
  spec = objects.find((o) => o.kind === 'CanaryRelease')!.spec as unknown as CanaryRelease['spec'];
  for (const o of objects) await apply(o);
  // First sighting: v1 becomes the primary with all the traffic.
  await waitRelease((r) => r.status?.phase === 'Succeeded' && r.status.lastPromotedRevision !== undefined);
  load = startLoad(gateway.url, { rps: RPS, timeoutMs: 3000 });
  const warm = await untilOnly('v1', 60_000);
  expect(warm.byStatus['200']).toBe(warm.total);
}, 300_000);

afterAll(async () => {
  await load?.stop();
  await deleteObject(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name: 'demo-app' },
  } as KubernetesObject);
  await controller?.kill('SIGTERM');
  await gateway?.stop();
  await prom?.stop();
  await git?.stop();
  await deleteObject(hub, { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: { name: member } });
  await deleteObject(m1, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
}, 120_000);

describe('CanaryRelease on the real data plane (examples/canary)', () => {
  it('GIVEN v1 on the primary WHEN v2 (good) is pushed THEN it is promoted through 10/30/60% and the primary serves all traffic with it', async () => {
    load!.reset();
    const revision = await push('v2');
    const steps = new Set<string>();
    const watch = watchCanary('v2');
    const done = await waitRelease(
      (r) => r.status?.phase === 'Succeeded' && r.status.lastPromotedRevision === revision,
      120_000,
      (r) => {
        if (r.status?.revision === revision && r.status.phase === 'Progressing' && r.status.step)
          steps.add(`${r.status.step}@${r.status.canaryWeight}`);
      },
    );
    watch.stop();
    // Every step was taken, each after a passing analysis.
    const advanced = (done.status?.transitions ?? []).filter((t) => t.reason === 'StepAdvanced');
    expect(advanced.slice(-3).map((t) => t.canaryWeight)).toEqual([10, 30, 60]);
    expect(done.status?.transitions?.some((t) => t.reason === 'AnalysisPassed')).toBe(true);
    expect(
      done.status?.measurements?.filter((m) => m.outcome === 'Successful').length,
    ).toBeGreaterThanOrEqual(6);
    expect(watch.firstAnswer()).toBeDefined();
    console.log(`v2 promoted; steps seen while polling: ${[...steps].join(' ')}`);

    expect(imageOf(await deployment('demo-app-primary'))).toBe('sluice.dev/demo-app:v2');
    const after = await untilOnly('v2');
    expect(after.byVersion.v1).toBeUndefined();
    expect(after.errors).toBe(0);
    // The target keeps its pods for scaleDownDelay (10s in the example) after the switch, then goes.
    expect(done.status?.primaryRoutedAt).toBeDefined();
    await eventually(async () => (await deployment('demo-app'))?.spec?.replicas === 0, 60_000);
    // Across the whole release — every step, the switch, the scale-down — the gateway answered
    // every request from a live pod: no 502/503 from a backend that was already gone.
    await sleep(2000);
    const whole = load!.counts();
    console.log(
      `v2 release under load: ${whole.total} requests, ${JSON.stringify(whole.byStatus)}, transport errors ${whole.errors}`,
    );
    expect(Object.keys(whole.byStatus)).toEqual(['200']);
  }, 180_000);

  it('GIVEN v2 promoted WHEN v3-erroring is pushed THEN it is rolled back within failureLimit × interval + 5 s, all traffic on the primary, a revert in Git naming the metric, and the Delivery never applies it again', async () => {
    const revision = await push('v3-erroring');
    const sha = revision.replace('main@sha1:', '');
    const watch = watchCanary('v3-erroring');
    let crossingSeen: number | undefined;
    let stepSeen: number | undefined;
    const rolled = await waitRelease(
      (r) => r.status?.phase === 'RolledBack' && r.status.rollback?.revision === revision,
      120_000,
      (r) => {
        if (r.status?.revision === revision && r.status.step === '1/3') stepSeen ??= Date.now();
        const phase = r.status?.phase;
        if ((phase === 'RollingBack' || phase === 'RolledBack') && r.status?.rollback?.revision === revision)
          crossingSeen ??= Date.now();
      },
    );
    // The canary's last answers are still in flight when the route changes: let them land.
    await sleep(2000);
    watch.stop();
    const first = watch.firstAnswer();
    const last = watch.lastAnswer();
    expect(first).toBeDefined();
    expect(last).toBeDefined();
    const limitMs = spec.analysis.failureLimit * 5000 + 5000;
    const exposedMs = last! - first!;
    console.log(
      `rollback: canary v3-erroring served traffic for ${(exposedMs / 1000).toFixed(2)} s ` +
        `(bound failureLimit × interval + 5 s = ${limitMs / 1000} s); ` +
        `step 1/3 first seen → first canary answer ${(((first ?? 0) - (stepSeen ?? 0)) / 1000).toFixed(2)} s; ` +
        `first answer → RollingBack first seen (the crossing tick) ${(((crossingSeen ?? 0) - first!) / 1000).toFixed(2)} s; ` +
        `crossing tick → last canary answer ${((last! - (crossingSeen ?? 0)) / 1000).toFixed(2)} s; ` +
        `transitions ${JSON.stringify(rolled.status?.transitions?.filter((t) => Date.parse(t.at) >= (first ?? 0) - 10_000).map((t) => `${t.at} ${t.reason}`))}`,
    );
    expect(exposedMs).toBeLessThanOrEqual(limitMs);

    const r = rolled.status!.rollback!;
    expect(r.reason).toBe('AnalysisFailed');
    expect(r.metric).toBe('success-rate');
    expect(Number(r.value)).toBeLessThan(0.95);

    // All traffic on the primary (v2), none on the erroring canary.
    const after = await trafficFor(3000);
    expect(versionShare(after, 'v2')).toBe(1);
    expect(after.byStatus['500']).toBeUndefined();

    // The revert commit in Git names the release, the metric and its value.
    const written = await waitRelease((x) => x.status?.rollback?.writeBack?.commit !== undefined, 60_000);
    const revert = written.status!.rollback!.writeBack!.commit!;
    const log = await runGit(['log', '--format=%H%n%B', '-3', 'main'], { cwd: git.repoPath('demo-app') });
    console.log(`git log of the test repo after the rollback:\n${log}`);
    expect(log.startsWith(revert)).toBe(true);
    const message = log.split(`\n${sha}\n`)[0]!;
    expect(message).toMatch(/success-rate/);
    expect(message).toContain(r.value!);
    expect(message).toMatch(/demo-app/);
    expect(message).toContain(`Sluice-Reverts: ${sha}`);

    // The Delivery applies the revert (v2 again on the target) and never the bad revision again.
    const applied = await eventually(async () => {
      const d = await getDelivery();
      return d.status?.lastAppliedRevision?.endsWith(revert) ? d : undefined;
    }, 60_000);
    expect(applied.status?.history?.filter((h) => h.revision === revision).length).toBeLessThanOrEqual(1);
    for (let i = 0; i < 10; i++) {
      expect(imageOf(await deployment('demo-app'))).toBe('sluice.dev/demo-app:v2');
      await sleep(500);
    }
    const final = await getRelease();
    expect(final.status?.phase).toBe('RolledBack');
    expect(final.status?.lastPromotedTemplateHash).toBe(rolled.status?.lastPromotedTemplateHash);
    expect(final.status?.conditions?.find((c) => c.type === 'Stalled')?.message).toMatch(/success-rate/);
    expect(versionShare(await trafficFor(2000), 'v2')).toBe(1);
  }, 240_000);

  it('GIVEN v2 on the primary WHEN v4-slow is pushed THEN the latency metric fails while the success rate passes, and it is rolled back', async () => {
    const revision = await push('v4-slow');
    const rolled = await waitRelease(
      (r) => r.status?.phase === 'RolledBack' && r.status.rollback?.revision === revision,
      150_000,
    );
    const r = rolled.status!.rollback!;
    expect(r.reason).toBe('AnalysisFailed');
    expect(r.metric).toBe('latency-p99');
    const max = spec.analysis.metrics!.find((m) => m.name === 'latency-p99')!.thresholdRange!.max!;
    expect(Number(r.value)).toBeGreaterThan(max);
    // In the analyses of this run, the success rate passed every time the latency failed.
    const run = (rolled.status?.measurements ?? []).filter(
      (m) => Date.parse(m.measuredAt) >= Date.parse(r.at) - 60_000,
    );
    const latencyFails = run.filter((m) => m.metric === 'latency-p99' && m.outcome === 'Failed');
    expect(latencyFails.length).toBeGreaterThanOrEqual(spec.analysis.failureLimit);
    for (const f of latencyFails) {
      const sr = run.find((m) => m.metric === 'success-rate' && m.measuredAt === f.measuredAt);
      expect(sr?.outcome).toBe('Successful');
    }
    expect(rolled.status?.lastScore).toBeLessThan(spec.analysis.scoreThreshold);
    // Requests the slow canary had in flight at the switch take up to 350 ms to land.
    await sleep(1000);
    expect(versionShare(await trafficFor(2000), 'v2')).toBe(1);
    // Git says v2 again.
    await waitRelease((x) => x.status?.rollback?.writeBack?.commit !== undefined, 60_000);
    const head = await runGit(['show', 'main:deploy/deployment.yaml'], { cwd: git.repoPath('demo-app') });
    expect(head).toContain('sluice.dev/demo-app:v2');
  }, 240_000);

  it('GIVEN no traffic WHEN v5 is pushed THEN it is never promoted and the status says there is no data; WHEN traffic returns but Prometheus stops mid-analysis THEN no promotion until it is back', async () => {
    await load!.stop();
    const revision = await push('v5');
    // Held: at step 1, the analysis finds no data for 3 intervals.
    await waitRelease(
      (r) => r.status?.revision === revision && r.status.phase === 'Progressing' && r.status.step === '1/3',
    );
    await sleep(16_000);
    const held = await getRelease();
    expect(held.status?.phase).toBe('Progressing');
    expect(held.status?.step).toBe('1/3');
    expect(held.status?.lastPromotedRevision).not.toBe(revision);
    const why = held.status?.conditions?.find((c) => c.type === 'Reconciling')?.message ?? '';
    console.log(`no traffic: ${why}`);
    expect(why).toMatch(/held|no data/i);

    // Traffic back, then Prometheus down as soon as the run moves: it must hold, not promote.
    load = startLoad(gateway!.url, { rps: RPS, timeoutMs: 3000 });
    await waitRelease((r) => r.status?.revision === revision && r.status.step === '2/3');
    await prom!.pause();
    await sleep(16_000);
    const down = await getRelease();
    expect(down.status?.phase).toBe('Progressing');
    expect(down.status?.step).toBe('2/3');
    const downWhy = down.status?.conditions?.find((c) => c.type === 'Reconciling')?.message ?? '';
    console.log(`prometheus stopped: ${downWhy}`);
    expect(downWhy).toMatch(/held|prometheus|connect|fetch/i);

    await prom!.resume();
    await waitRelease(
      (r) => r.status?.phase === 'Succeeded' && r.status.lastPromotedRevision === revision,
      120_000,
    );
    expect(imageOf(await deployment('demo-app-primary'))).toBe('sluice.dev/demo-app:v5');
    const after = await untilOnly('v5');
    expect(after.errors).toBe(0);
  }, 300_000);
});
