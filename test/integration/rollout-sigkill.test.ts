// Killed at any instant, the controller resumes from status and reaches the same end: the built
// `sluice controller` process is SIGKILLed at random instants while RUNS releases progress (half
// of them good, half failing their metric on a real Prometheus), restarted each time, and then
// every release must end in its right terminal state with no traffic split left half-done.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CanaryRelease } from '../../src/api/canary-release.js';
import { TOTAL_ANNOTATION } from '../../src/traffic/replicas.js';
import { TEMPLATE_HASH_ANNOTATION, type DeploymentLike } from '../../src/rollout/workload.js';
import { eventually, kubeconfigPath, testClient, uniqueName } from '../support/clusters.js';
import { ControllerProcess, controllerArgs } from '../support/controller-process.js';
import { deploymentManifest } from '../support/manifests.js';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-basic.js';
import { createNamespace, deleteObject, ensureCrds } from '../support/sluice-objects.js';

const RUNS = Number(process.env.SLUICE_SIGKILL_RUNS ?? 20);
const KILLS = Number(process.env.SLUICE_SIGKILL_KILLS ?? 12);
const hub = testClient('hub');
const ns = uniqueName('kill');
let prom: PrometheusHandle;
let controller: ControllerProcess | undefined;
const flags = controllerArgs(kubeconfigPath('hub'), uniqueName('lease'), ['--leader-elect=false']);

async function apply(obj: Record<string, unknown>): Promise<void> {
  await hub.raw.applyRaw(obj as unknown as KubernetesObject, { fieldManager: 'sluice-test', force: true });
}

const names = Array.from({ length: RUNS }, (_, i) => `w${i}`);
const good = (name: string) => Number(name.slice(1)) % 2 === 0;

async function get(name: string): Promise<CanaryRelease> {
  return hub.raw.getRaw<CanaryRelease & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: ns, name },
  });
}
const deployment = (name: string) =>
  hub.raw.getRaw<DeploymentLike>({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { namespace: ns, name },
  });

async function start(): Promise<ControllerProcess> {
  const c = new ControllerProcess(flags);
  controller = c;
  await c.waitForLog((l) => l.message === 'controllers started', 60_000);
  return c;
}

beforeAll(async () => {
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  prom = await startPrometheus();
});

afterAll(async () => {
  await controller?.kill('SIGKILL');
  await prom?.stop();
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

describe('CanaryRelease controller killed at random instants', () => {
  it(`GIVEN ${RUNS} releases in flight WHEN the controller is SIGKILLed ${KILLS} times THEN each ends in its right terminal state`, async () => {
    for (const name of names) {
      const d = deploymentManifest(name, 2);
      await apply({ ...d, metadata: { name, namespace: ns } });
      await apply({
        apiVersion: 'sluice.dev/v1',
        kind: 'CanaryRelease',
        metadata: { namespace: ns, name },
        spec: {
          targetRef: { kind: 'Deployment', name },
          service: { port: 80 },
          strategy: 'canary',
          trafficRouting: { provider: 'replicas' },
          steps: { weights: [25, 50] },
          interval: '2s',
          analysis: {
            failureLimit: 2,
            provider: { type: 'prometheus', address: prom.url, timeout: '5s' },
            metrics: [
              {
                name: 'success-rate',
                query: good(name) ? 'vector(0.999)' : 'vector(0.5)',
                thresholdRange: { min: 0.99 },
              },
            ],
          },
        },
      });
    }
    await start();
    const initial = new Map<string, string>();
    await eventually(async () => {
      for (const name of names) {
        const r = await get(name);
        if (r.status?.phase !== 'Succeeded') return false;
        initial.set(name, r.status.lastPromotedTemplateHash!);
      }
      return true;
    }, 120_000);
    await controller!.kill('SIGTERM');

    // The new version, then kills at random instants while the runs progress.
    for (const name of names) {
      await hub.raw.mergePatch(
        { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { namespace: ns, name } },
        { spec: { template: { metadata: { annotations: { 'sluice.dev/test-version': 'v2' } } } } },
      );
    }
    let seed = 12345;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let k = 0; k < KILLS; k++) {
      await start();
      await new Promise((r) => setTimeout(r, 300 + Math.floor(rand() * 3000)));
      await controller!.kill('SIGKILL');
    }
    await start();

    const end = await eventually(
      async () => {
        const all = await Promise.all(names.map(get));
        return all.every((r) => r.status?.phase === 'Succeeded' || r.status?.phase === 'RolledBack')
          ? all
          : undefined;
      },
      180_000,
      1000,
    );
    for (const r of end) {
      const name = r.metadata.name!;
      const primary = await deployment(`${name}-primary`);
      const target = await deployment(name);
      expect({ name, phase: r.status?.phase }).toEqual({
        name,
        phase: good(name) ? 'Succeeded' : 'RolledBack',
      });
      if (good(name)) {
        expect(r.status?.lastPromotedTemplateHash).not.toBe(initial.get(name));
      } else {
        expect(r.status?.lastPromotedTemplateHash).toBe(initial.get(name));
        expect(r.status?.rollback?.reason).toBe('AnalysisFailed');
      }
      expect(primary.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION]).toBe(
        r.status?.lastPromotedTemplateHash,
      );
      // No split left behind: all traffic on the primary, which holds every replica again.
      expect({ name, target: target.spec?.replicas, primary: primary.spec?.replicas }).toEqual({
        name,
        target: 0,
        primary: 2,
      });
      expect(primary.metadata?.annotations?.[TOTAL_ANNOTATION]).toBeUndefined();
    }
  }, 600_000);
});
