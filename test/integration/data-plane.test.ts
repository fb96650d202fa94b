// The test bed's real data plane, end to end: kube-local runs the demo app's pods as real
// processes with their own addresses; the real endpointslice controller publishes them;
// Traefik (built from its Go module) routes real HTTP by HTTPRoute weights; Debian's
// Prometheus scrapes the pods' OpenTelemetry metrics through kubernetes_sd.
//
// Needs kube-local built from this tree (test/cluster/build.sh) running as root, and
// bin/traefik (test/traefik/build.sh); `make test` provides both.
import { readdirSync, readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject, V1Pod } from '@kubernetes/client-node';
import { FieldManager, serverSideApply } from '../../src/kube/apply.js';
import { eventually, kubeconfigPath, testClient, uniqueName } from '../support/clusters.js';
import {
  demoDeployment,
  demoService,
  startDataPlane,
  weightedRoute,
  type DataPlane,
  type Gateway,
} from '../support/data-plane.js';
import { startLoad, versionShare } from '../support/load.js';
import type { ClusterPrometheus } from '../support/prometheus.js';

const CLUSTER = 'member-1';
const client = testClient(CLUSTER);
const ns = uniqueName('dataplane');
const GOOD = 'v1';
const BAD = 'v2-erroring';
const apply = (obj: KubernetesObject) =>
  serverSideApply(
    client,
    { ...obj, metadata: { ...obj.metadata, namespace: ns } },
    {
      fieldManager: FieldManager.delivery,
      force: true,
    },
  );

let dataPlane: DataPlane;
let gw: Gateway;
let prom: ClusterPrometheus;

async function readyPods(release: string): Promise<V1Pod[]> {
  const list = await client.raw.listRaw<V1Pod>('v1', 'Pod', {
    namespace: ns,
    labelSelector: `release=${release}`,
  });
  return list.items.filter(
    (p) =>
      !p.metadata?.deletionTimestamp &&
      p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'),
  );
}

/** PIDs of processes the node agent started for `pod` (it passes POD_NAME/POD_NAMESPACE). */
function podProcesses(pod: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (env.includes(`POD_NAME=${pod}`) && env.includes(`POD_NAMESPACE=${ns}`)) pids.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return pids;
}

async function setRoute(good: number, bad: number): Promise<void> {
  await apply(
    weightedRoute('demo', ns, gw.parentRef, [
      ['demo-good', good],
      ['demo-bad', bad],
    ]),
  );
}

beforeAll(async () => {
  await serverSideApply(
    client,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    { fieldManager: FieldManager.delivery },
  );
  await apply(demoDeployment('demo-good', GOOD, { replicas: 2 }));
  await apply(demoDeployment('demo-bad', BAD, { replicas: 1 }));
  await apply(demoService('demo-good', 'demo-good'));
  await apply(demoService('demo-bad', 'demo-bad'));
  dataPlane = await startDataPlane({
    kubeconfig: kubeconfigPath(CLUSTER),
    namespace: ns,
    namespaces: [ns],
  });
  ({ gateway: gw, prometheus: prom } = dataPlane);
  await eventually(
    async () => (await readyPods('demo-good')).length === 2 && (await readyPods('demo-bad')).length === 1,
    90_000,
    500,
  ).catch((err: Error) => {
    throw new Error(
      `${err.message}: demo pods never became Ready. Is kube-local built from this tree and running as root? See ${kubeconfigPath(CLUSTER).replace(/kubeconfig$/, 'log')}`,
    );
  });
  // Faked pods get unroutable 10.244.x.y addresses; real ones come from the agent's 10.250/16.
  const ip = (await readyPods('demo-good'))[0]!.status!.podIP!;
  if (!ip.startsWith('10.250.'))
    throw new Error(
      `demo pods are faked (podIP ${ip}), not run: kube-local must be built from this tree (make kube-local) and run as root with iproute2; its log says why (${kubeconfigPath(CLUSTER).replace(/kubeconfig$/, 'log')}, "real pods")`,
    );
}, 180_000);

afterAll(async () => {
  await dataPlane?.stop();
  await client.raw
    .deleteRaw({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } })
    .catch(() => undefined);
});

describe('the real data plane', () => {
  it('GIVEN demo pods WHEN they run THEN each has its own routable address, published in EndpointSlices by the endpointslice controller', async () => {
    const pods = [...(await readyPods('demo-good')), ...(await readyPods('demo-bad'))];
    const ips = pods.map((p) => p.status!.podIP!);
    expect(new Set(ips).size).toBe(3);
    for (const pod of pods) {
      // Straight from the host to the pod's namespace: a real process answers with its version.
      const res = await fetch(`http://${pod.status!.podIP}:8080/`, { signal: AbortSignal.timeout(5000) });
      expect(res.headers.get('x-demo-version')).toBe(pod.metadata!.labels!.version);
    }
    const slices = await eventually(async () => {
      const list = await client.raw.listRaw<
        KubernetesObject & { endpoints?: { addresses: string[]; conditions?: { ready?: boolean } }[] }
      >('discovery.k8s.io/v1', 'EndpointSlice', {
        namespace: ns,
        labelSelector: 'kubernetes.io/service-name=demo-good',
      });
      const ready = list.items.flatMap((s) =>
        (s.endpoints ?? []).filter((e) => e.conditions?.ready).flatMap((e) => e.addresses),
      );
      return ready.length === 2 ? list.items : undefined;
    }, 30_000);
    expect(slices[0]!.metadata!.labels!['endpointslice.kubernetes.io/managed-by']).toBe(
      'endpointslice-controller.k8s.io',
    );
    const goodIps = (await readyPods('demo-good')).map((p) => p.status!.podIP).sort();
    const sliceIps = slices
      .flatMap((s) => (s as { endpoints?: { addresses: string[] }[] }).endpoints ?? [])
      .flatMap((e) => e.addresses)
      .sort();
    expect(sliceIps).toEqual(goodIps);
  });

  it('GIVEN an HTTPRoute weighted 80/20 WHEN steady load runs through Traefik THEN versions split 80/20 and only the erroring one answers 5xx', async () => {
    await setRoute(80, 20);
    // Route edits apply after Traefik's throttle: wait until both versions answer.
    await eventually(async () => {
      const probe = await startLoad(gw.url, { rps: 50, durationMs: 1000 }).done;
      return (probe.byVersion[GOOD] ?? 0) > 0 && (probe.byVersion[BAD] ?? 0) > 0 && probe.errors === 0;
    }, 30_000);
    const counts = await startLoad(gw.url, { rps: 40, durationMs: 10_000 }).done;
    expect(counts.errors).toBe(0);
    expect(counts.total).toBeGreaterThanOrEqual(350);
    // Traefik's weighted round robin is deterministic; 5 points leave room for in-flight edges.
    expect(versionShare(counts, GOOD)).toBeGreaterThan(0.75);
    expect(versionShare(counts, GOOD)).toBeLessThan(0.85);
    expect(counts.byVersionStatus[GOOD]).toEqual({ '200': counts.byVersion[GOOD] });
    const badErrors = counts.byVersionStatus[BAD]?.['500'] ?? 0;
    expect(badErrors / counts.byVersion[BAD]!).toBeGreaterThan(0.05);
    expect(badErrors / counts.byVersion[BAD]!).toBeLessThan(0.4);
  });

  it('GIVEN weights 100/0 THEN every request reaches the good version; GIVEN 0/100 THEN every request reaches the erroring one', async () => {
    for (const [good, bad, only] of [
      [100, 0, GOOD],
      [0, 100, BAD],
    ] as const) {
      await setRoute(good, bad);
      await eventually(async () => {
        const probe = await startLoad(gw.url, { rps: 50, durationMs: 600 }).done;
        return probe.total > 0 && versionShare(probe, only) === 1;
      }, 30_000);
      const counts = await startLoad(gw.url, { rps: 40, durationMs: 3000 }).done;
      expect(counts.errors).toBe(0);
      expect(Object.keys(counts.byVersion)).toEqual([only]);
    }
  });

  it('GIVEN that traffic THEN Prometheus reports per pod the erroring version at ~20% 5xx and the good one at 100% success, with the OTel resource', async () => {
    const successQuery = `sum by (pod, version) (http_server_request_duration_seconds_count{namespace="${ns}",http_route="/",http_response_status_code!~"5.."}) / sum by (pod, version) (http_server_request_duration_seconds_count{namespace="${ns}",http_route="/"})`;
    // The last scrape must include the traffic above: at 1 s intervals, wait for a fresh one.
    await new Promise((r) => setTimeout(r, 2500));
    const rates = await eventually(async () => {
      const r = await prom.query(successQuery);
      return r.length === 3 ? r : undefined;
    }, 30_000);
    for (const series of rates) {
      const rate = Number(series.value[1]);
      if (series.metric.version === BAD) {
        expect(rate).toBeGreaterThan(0.7);
        expect(rate).toBeLessThan(0.92);
      } else {
        expect(series.metric.version).toBe(GOOD);
        expect(rate).toBe(1);
      }
    }
    const info = await prom.query(`target_info{namespace="${ns}"}`);
    expect(
      info.map((s) => [s.metric.service_name, s.metric.service_version, s.metric.version]).sort(),
    ).toEqual([
      ['demo-app', GOOD, GOOD],
      ['demo-app', GOOD, GOOD],
      ['demo-app', BAD, BAD],
    ]);
  });

  it('GIVEN Prometheus paused (an outage) THEN queries fail; resumed THEN it answers on the same URL with its data kept', async () => {
    await prom.waitForTargets(3);
    const before = await eventually(async () => {
      const r = await prom.query(`sum(target_info{namespace="${ns}"})`);
      return r.length === 1 && Number(r[0]!.value[1]) === 3 ? r : undefined;
    }, 10_000);
    expect(before).toHaveLength(1);
    await prom.pause();
    await expect(prom.query('up')).rejects.toThrow();
    await prom.resume();
    // Samples written before the pause are still there (same TSDB), at the same URL.
    const kept = await prom.query(`count(count_over_time(target_info{namespace="${ns}"}[5m]))`);
    expect(Number(kept[0]!.value[1])).toBe(3);
    await prom.waitForTargets(3);
  });

  it('GIVEN a pod process that dies THEN the agent restarts it (restartCount 1) and the pod is Ready again', async () => {
    const [pod] = await readyPods('demo-bad');
    const name = pod!.metadata!.name!;
    const pids = podProcesses(name);
    expect(pids.length).toBeGreaterThan(0);
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    const restarted = await eventually(async () => {
      const live = await client.raw.getRaw<V1Pod>({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: ns },
      });
      const cs = live.status?.containerStatuses?.[0];
      return cs?.restartCount === 1 && cs.ready ? live : undefined;
    }, 30_000);
    expect(restarted.status!.podIP).toBe(pod!.status!.podIP);
    expect(podProcesses(name).some((p) => !pids.includes(p))).toBe(true);
  });

  it('GIVEN a deleted pod THEN its process is gone and its network namespace removed', async () => {
    const [pod] = await readyPods('demo-bad');
    const name = pod!.metadata!.name!;
    const uid8 = pod!.metadata!.uid!.replaceAll('-', '').slice(0, 8);
    expect(execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' })).toContain(uid8);
    await client.raw.deleteRaw({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: ns } });
    await eventually(async () => podProcesses(name).length === 0, 20_000);
    await eventually(
      async () => !execFileSync('ip', ['netns', 'list'], { encoding: 'utf8' }).includes(uid8),
      10_000,
    );
  });
});
