import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { CanaryRelease } from '../../src/api/canary-release.js';
import type { Delivery } from '../../src/api/delivery.js';
import { requestReconcile } from '../../src/api/reconcile-request.js';
import { registerDeliveryControllers } from '../../src/delivery/register.js';
import { registerSourceControllers } from '../../src/git/register.js';
import { isNotFound } from '../../src/kube/errors.js';
import { Manager } from '../../src/kube/manager.js';
import { writeStatus } from '../../src/kube/status.js';
import { silentLogger } from '../../src/log.js';
import { MemberClients } from '../../src/placement/member-clients.js';
import { registerRolloutControllers } from '../../src/rollout/register.js';
import type { DeploymentLike } from '../../src/rollout/workload.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';
import { commitFiles, createRepo, runGit, startGitServer, type GitServer } from '../support/git-server.js';
import { deploymentManifest } from '../support/manifests.js';
import { startPrometheus, type PrometheusHandle } from '../support/prometheus-basic.js';
import { createNamespace, deleteObject, ensureCrds, eventsAbout, secret } from '../support/sluice-objects.js';

// The GitOps loop with the real controllers in one process (GitSource, Delivery, CanaryRelease),
// a real Git server, Prometheus and member-1: a bad commit is rolled back, the Delivery refuses
// to apply it again, the revert is pushed to Git and the Delivery applies the reverted manifests.
const hub = testClient('hub');
const m1 = testClient('member-1');
const ns = uniqueName('rgo');
let git: GitServer;
let prom: PrometheusHandle;
let manager: Manager;
let storage: string;

function manifest(version: string): string {
  const d = deploymentManifest('web', 2);
  d.spec.template.spec.containers[0] = {
    ...d.spec.template.spec.containers[0]!,
    env: [{ name: 'VERSION', value: version }],
  } as never;
  return stringify(d);
}

async function apply(obj: Record<string, unknown>): Promise<void> {
  await hub.raw.applyRaw(obj as unknown as KubernetesObject, { fieldManager: 'sluice-test', force: true });
}

const getRelease = () =>
  hub.raw.getRaw<CanaryRelease & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: ns, name: 'web' },
  });
const getDelivery = () =>
  hub.raw.getRaw<Delivery & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name: 'apps' },
  });

async function waitFor<T>(read: () => Promise<T>, check: (x: T) => boolean, timeoutMs = 90_000): Promise<T> {
  let last: T | undefined;
  try {
    return await eventually(async () => {
      last = await read();
      return check(last) ? last : undefined;
    }, timeoutMs);
  } catch (err) {
    throw new Error(
      `${(err as Error).message}; last: ${JSON.stringify((last as { status?: unknown } | undefined)?.status, null, 1)}`,
    );
  }
}

async function target(): Promise<DeploymentLike | undefined> {
  try {
    return await m1.raw.getRaw<DeploymentLike>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace: ns, name: 'web' },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}
const versionOf = (d: DeploymentLike | undefined) =>
  ((d?.spec?.template?.spec?.containers as Array<{ env?: Array<{ value?: string }> }> | undefined)?.[0]
    ?.env ?? [])[0]?.value;

beforeAll(async () => {
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  await createNamespace(m1, ns);
  git = await startGitServer();
  prom = await startPrometheus();
  storage = await mkdtemp(join(tmpdir(), 'sluice-rgo-'));
  await createRepo(git, 'app', { 'deploy/web.yaml': manifest('v1') });
  const creds = git.credentials();
  await secret(hub, ns, 'git-auth', { username: creds.username, password: creds.password });
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name: 'app' },
    spec: { url: git.url('app'), ref: { branch: 'main' }, interval: '1s', secretRef: { name: 'git-auth' } },
  });
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: ns, name: 'one' },
    spec: { clusters: [{ name: 'member-1' }] },
  });
  await writeStatus(
    hub,
    {
      apiVersion: 'sluice.dev/v1',
      kind: 'PlacementRule',
      plural: 'placementrules',
      namespace: ns,
      name: 'one',
    },
    { decisions: [{ clusterName: 'member-1' }] },
  );
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name: 'apps' },
    spec: {
      sourceRef: { kind: 'GitSource', name: 'app' },
      placementRef: { name: 'one' },
      path: './deploy',
      targetNamespace: ns,
      interval: '2s',
    },
  });
  const members = new MemberClients();
  members.set('member-1', m1);
  manager = new Manager({ client: hub, logger: silentLogger(), leaderElection: false });
  const { artifacts } = registerSourceControllers(manager, { storagePath: storage });
  const { deliveries } = registerDeliveryControllers(manager, { members, artifacts });
  registerRolloutControllers(manager, { members, deliveries, storagePath: storage });
  await manager.start();
});

afterAll(async () => {
  await manager?.stop();
  await prom?.stop();
  await git?.stop();
  await deleteObject(m1, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  if (storage) await rm(storage, { recursive: true, force: true });
});

describe('CanaryRelease with a Delivery from Git', () => {
  it('GIVEN the release scaled the target to 0 WHEN the Delivery re-applies the same Deployment THEN spec.replicas stays 0 (sluice-rollout owns it)', async () => {
    await apply({
      apiVersion: 'sluice.dev/v1',
      kind: 'CanaryRelease',
      metadata: { namespace: ns, name: 'web' },
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
          metrics: [{ name: 'success-rate', query: 'vector(0.5)', thresholdRange: { min: 0.99 } }],
        },
        gitWriteBack: { mode: 'none' },
      },
    });
    const init = await waitFor(getRelease, (r) => r.status?.phase === 'Succeeded');
    expect(init.status?.lastPromotedRevision).toMatch(/^main@sha1:/);
    expect((await target())?.spec?.replicas).toBe(0);
    const before = (await getDelivery()).status?.conditions?.find(
      (c) => c.type === 'Ready',
    )?.lastTransitionTime;
    await requestReconcile(hub, {
      apiVersion: 'sluice.dev/v1',
      kind: 'Delivery',
      namespace: ns,
      name: 'apps',
    });
    await waitFor(getDelivery, (d) => d.status?.lastHandledReconcileAt !== undefined);
    expect((await target())?.spec?.replicas).toBe(0);
    expect(before).toBeDefined();
  });

  it('GIVEN a bad commit rolled back WHEN the Delivery syncs it again THEN it refuses (RevisionRolledBack), keeps what runs; the revert pushed later is applied', async () => {
    const bad = await commitFiles(git, 'app', {
      add: { 'deploy/web.yaml': manifest('v2') },
      message: 'web v2',
    });
    const r = await waitFor(getRelease, (x) => x.status?.phase === 'RolledBack');
    expect(r.status?.rollback?.revision).toBe(`main@sha1:${bad}`);
    expect(r.status?.rolledBackRevisions).toEqual([`main@sha1:${bad}`]);
    expect((await target())?.spec?.replicas).toBe(0);

    await requestReconcile(hub, {
      apiVersion: 'sluice.dev/v1',
      kind: 'Delivery',
      namespace: ns,
      name: 'apps',
    });
    const refused = await waitFor(
      getDelivery,
      (d) =>
        d.status?.conditions?.some((c) => c.type === 'Stalled' && c.reason === 'RevisionRolledBack') === true,
    );
    expect(refused.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      /rolled back by CanaryRelease/,
    );
    expect(versionOf(await target())).toBe('v2');
    expect((await eventsAbout(hub, ns, 'Delivery', 'apps')).map((e) => e.reason)).toContain(
      'RevisionRolledBack',
    );

    // Git write-back switched on after the fact: the pending rollback is written back.
    await hub.raw.mergePatch(
      { apiVersion: 'sluice.dev/v1', kind: 'CanaryRelease', metadata: { namespace: ns, name: 'web' } },
      { spec: { gitWriteBack: { mode: 'revert' } } },
    );
    const written = await waitFor(getRelease, (x) => x.status?.rollback?.writeBack?.commit !== undefined);
    expect(written.status?.rollback?.writeBack).toMatchObject({ mode: 'revert', method: 'revert' });
    const log = await runGit(['log', '-1', '--format=%B', 'main'], { cwd: git.repoPath('app') });
    expect(log).toMatch(/success-rate/);
    expect(log).toMatch(new RegExp(`Sluice-Reverts: ${bad}`));

    const applied = await waitFor(getDelivery, (d) =>
      (d.status?.lastAppliedRevision ?? '').endsWith(written.status!.rollback!.writeBack!.commit!),
    );
    expect(applied.status?.history?.filter((h) => h.revision === `main@sha1:${bad}`)).toHaveLength(1);
    expect(versionOf(await target())).toBe('v1');
    const after = await getRelease();
    expect(after.status?.phase).toBe('RolledBack');
    expect(after.status?.lastPromotedTemplateHash).toBe(r.status?.lastPromotedTemplateHash);
  });
});
