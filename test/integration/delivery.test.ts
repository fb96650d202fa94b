import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject, V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { Delivery } from '../../src/api/delivery.js';
import { ArtifactStore } from '../../src/git/artifact.js';
import { kubectlKustomize } from '../../src/delivery/kustomize.js';
import { INVENTORY_NAMESPACE, inventorySelector } from '../../src/delivery/inventory-store.js';
import { CLUSTER_LABEL, DELIVERY_LABEL } from '../../src/delivery/objects.js';
import { requestReconcile as requestReconcileOf } from '../../src/api/reconcile-request.js';
import { registerDeliveryControllers } from '../../src/delivery/register.js';
import type { ClusterClient } from '../../src/kube/clients.js';
import { isNotFound } from '../../src/kube/errors.js';
import { Manager } from '../../src/kube/manager.js';
import { writeStatus } from '../../src/kube/status.js';
import { silentLogger } from '../../src/log.js';
import { MemberClients } from '../../src/placement/member-clients.js';
import { eventually, startCluster, stopCluster, testClient, uniqueName } from '../support/clusters.js';
import { createNamespace, deleteObject, ensureCrds } from '../support/sluice-objects.js';
import { configMapManifest, deploymentManifest, namespaceManifest, yamlDocs } from '../support/manifests.js';

const hub = testClient('hub');
const ns = uniqueName('dlv');
const MEMBERS = ['member-1', 'member-2', 'member-3'] as const;
type Member = (typeof MEMBERS)[number];

/** Member clients whose real (non-dry-run) writes are counted. */
interface Counted {
  client: ClusterClient;
  writes: number;
  /** Inventory reads per label selector: one per full sync of a Delivery on this member. */
  inventoryReads: Map<string, number>;
}
const counted = new Map<Member, Counted>();
function countedClient(name: Member): Counted {
  const c: Counted = { client: testClient(name), writes: 0, inventoryReads: new Map() };
  const raw = c.client.raw;
  const apply = raw.applyRaw.bind(raw);
  const del = raw.deleteRaw.bind(raw);
  const list = raw.listRaw.bind(raw);
  raw.applyRaw = (obj, opts) => {
    if (!opts.dryRun) c.writes += 1;
    return apply(obj, opts);
  };
  raw.deleteRaw = (obj, opts) => {
    c.writes += 1;
    return del(obj, opts);
  };
  raw.listRaw = (apiVersion, kind, opts) => {
    if (opts?.namespace === INVENTORY_NAMESPACE && opts.labelSelector) {
      c.inventoryReads.set(opts.labelSelector, (c.inventoryReads.get(opts.labelSelector) ?? 0) + 1);
    }
    return list(apiVersion, kind, opts);
  };
  return c;
}
const member = (name: Member): ClusterClient => counted.get(name)!.client;

/** What the tests created on the members, removed at the end. */
const created = { namespaces: [] as string[], deliveries: [] as string[], crds: [] as string[] };

let manager: Manager;
let artifacts: ArtifactStore;
let artifactDir: string;
const members = new MemberClients();

type Files = Record<string, string>;
let revisionCounter = 0;

async function publish(source: string, files: Files): Promise<string> {
  const art = await artifacts.put(
    Object.entries(files).map(([path, text]) => ({
      path,
      kind: 'file' as const,
      content: Buffer.from(text),
    })),
  );
  revisionCounter += 1;
  const revision = `main@sha1:${revisionCounter.toString(16).padStart(40, '0')}`;
  await writeStatus(
    hub,
    { apiVersion: 'sluice.dev/v1', kind: 'GitSource', plural: 'gitsources', namespace: ns, name: source },
    {
      artifact: {
        revision,
        digest: art.digest,
        lastUpdateTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
      },
    },
  );
  return revision;
}

async function place(rule: string, clusters: readonly string[]): Promise<void> {
  await writeStatus(
    hub,
    {
      apiVersion: 'sluice.dev/v1',
      kind: 'PlacementRule',
      plural: 'placementrules',
      namespace: ns,
      name: rule,
    },
    { decisions: clusters.map((clusterName) => ({ clusterName })) },
  );
}

async function apply(obj: Record<string, unknown>): Promise<void> {
  await hub.raw.applyRaw(obj as unknown as KubernetesObject, { fieldManager: 'sluice-test', force: true });
}

/** A GitSource, a PlacementRule (both with status written here) and a Delivery. */
async function setup(name: string, clusters: readonly string[], spec: Record<string, unknown> = {}) {
  created.deliveries.push(name);
  if (typeof spec.targetNamespace === 'string') created.namespaces.push(spec.targetNamespace);
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name },
    spec: { url: 'http://127.0.0.1:1/repo.git', ref: { branch: 'main' }, interval: '1m' },
  });
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: ns, name },
    spec: { clusters: clusters.map((c) => ({ name: c })) },
  });
  await place(name, clusters);
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name },
    spec: {
      sourceRef: { kind: 'GitSource', name },
      placementRef: { name },
      path: './deploy',
      interval: '3s',
      prune: true,
      ...spec,
    },
  });
}

async function getDelivery(name: string): Promise<Delivery> {
  return hub.raw.getRaw<Delivery & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name },
  });
}

const ready = (d: Delivery) => d.status?.conditions?.find((c) => c.type === 'Ready');

/** Waits for the Delivery's Ready condition (and optionally more) to hold. */
async function waitFor(name: string, check: (d: Delivery) => boolean, timeoutMs = 90_000): Promise<Delivery> {
  let last: Delivery | undefined;
  try {
    return await eventually(async () => {
      last = await getDelivery(name);
      return check(last) ? last : undefined;
    }, timeoutMs);
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status, null, 1)}`);
  }
}

const readyWith = (revision: string) => (d: Delivery) =>
  ready(d)?.status === 'True' &&
  d.status?.lastAppliedRevision === revision &&
  d.status.observedGeneration === d.metadata?.generation;

async function getCm(
  client: ClusterClient,
  namespace: string,
  name: string,
): Promise<V1ConfigMap | undefined> {
  try {
    return await client.raw.getRaw<V1ConfigMap & KubernetesObject>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace, name },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function getDeployment(client: ClusterClient, namespace: string, name: string) {
  try {
    return await client.raw.getRaw<V1Deployment & KubernetesObject>({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace, name },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

async function requestReconcile(name: string): Promise<string> {
  return requestReconcileOf(hub, { apiVersion: 'sluice.dev/v1', kind: 'Delivery', namespace: ns, name });
}

/** Waits until `n` more full syncs of Delivery `name` touched `m` (each reads its inventory there once). */
async function fullSyncs(m: Member, name: string, n: number): Promise<void> {
  const c = counted.get(m)!;
  const key = inventorySelector({ namespace: ns, name });
  const start = c.inventoryReads.get(key) ?? 0;
  await eventually(async () => (c.inventoryReads.get(key) ?? 0) >= start + n, 60_000);
}

const namespaceDoc = namespaceManifest;

const configMapDoc = configMapManifest;
const deploymentDoc = deploymentManifest;
const docs = yamlDocs;

beforeAll(async () => {
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  for (const m of MEMBERS) {
    const c = countedClient(m);
    counted.set(m, c);
    members.set(m, c.client);
  }
  artifactDir = await mkdtemp(join(tmpdir(), 'sluice-dlv-'));
  artifacts = new ArtifactStore(artifactDir);
  manager = new Manager({ client: hub, logger: silentLogger(), leaderElection: false });
  registerDeliveryControllers(manager, {
    members,
    artifacts,
    kustomize: kubectlKustomize(),
    healthPollMs: 500,
    retryMs: 1000,
    applyTimeoutMs: 60_000,
  });
  await manager.start();
});

afterAll(async () => {
  await manager?.stop();
  for (const m of MEMBERS) {
    const c = member(m);
    for (const n of created.namespaces)
      await deleteObject(c, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: n } });
    for (const n of created.crds)
      await deleteObject(c, {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name: n },
      });
    for (const d of created.deliveries) {
      const inv = await c.raw.listRaw('v1', 'ConfigMap', {
        namespace: INVENTORY_NAMESPACE,
        labelSelector: inventorySelector({ namespace: ns, name: d }),
      });
      for (const cm of inv.items) await deleteObject(c, { ...cm, apiVersion: 'v1', kind: 'ConfigMap' });
    }
  }
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  if (artifactDir) await rm(artifactDir, { recursive: true, force: true });
});

describe('Delivery on real clusters', () => {
  const app = 'app';
  const target = uniqueName('app');
  let rev1: string;
  let rev2: string;

  const appFiles = (extra: Files = {}): Files => ({
    'deploy/namespace.yaml': stringify(namespaceDoc(target)),
    'deploy/app.yaml': docs(configMapDoc('settings', { color: 'blue' }), deploymentDoc('web', 2)),
    'deploy/extra.yaml': stringify(configMapDoc('extra', { x: '1' })),
    'README.md': 'not a manifest',
    ...extra,
  });

  it('GIVEN a Delivery placed on two members THEN every object is applied to both with owner labels, an inventory on each member, and status Healthy', async () => {
    await setup(app, ['member-1', 'member-2'], { targetNamespace: target });
    rev1 = await publish(app, appFiles());
    const d = await waitFor(app, readyWith(rev1));
    expect(d.status?.clusters).toEqual([
      expect.objectContaining({ name: 'member-1', phase: 'Healthy', revision: rev1, objects: 4 }),
      expect.objectContaining({ name: 'member-2', phase: 'Healthy', revision: rev1, objects: 4 }),
    ]);
    expect(ready(d)?.reason).toBe('ReconciliationSucceeded');
    expect(d.status?.history?.map((h) => h.revision)).toEqual([rev1]);
    for (const m of ['member-1', 'member-2'] as const) {
      const cm = await getCm(member(m), target, 'settings');
      expect(cm?.data).toEqual({ color: 'blue' });
      expect(cm?.metadata?.labels).toEqual({ [DELIVERY_LABEL]: `${ns}.${app}`, [CLUSTER_LABEL]: m });
      expect(await getDeployment(member(m), target, 'web')).toBeDefined();
      const inv = await member(m).raw.listRaw<V1ConfigMap & KubernetesObject>('v1', 'ConfigMap', {
        namespace: INVENTORY_NAMESPACE,
        labelSelector: inventorySelector({ namespace: ns, name: app }),
      });
      expect(inv.items).toHaveLength(1);
      expect(inv.items[0]?.data?.inventory).toContain(`${target}/settings`);
    }
    expect(await getCm(member('member-3'), target, 'settings')).toBeUndefined();
    const events = await hub.raw.listRaw<KubernetesObject & { reason?: string; message?: string }>(
      'v1',
      'Event',
      {
        namespace: ns,
      },
    );
    const applied = events.items.filter((e) => e.reason === 'Applied').map((e) => e.message);
    expect(applied).toEqual(
      expect.arrayContaining([
        `member-1: revision ${rev1}: 4 created, 0 configured, 0 unchanged, 0 deleted`,
        `member-2: revision ${rev1}: 4 created, 0 configured, 0 unchanged, 0 deleted`,
      ]),
    );
  });

  it('GIVEN nothing changed WHEN it resyncs THEN no write call is made on any member', async () => {
    await fullSyncs('member-1', app, 1);
    for (const m of MEMBERS) counted.get(m)!.writes = 0;
    const at = await requestReconcile(app);
    await waitFor(app, (x) => x.status?.lastHandledReconcileAt === at);
    await fullSyncs('member-1', app, 3);
    await fullSyncs('member-2', app, 1);
    expect(MEMBERS.map((m) => counted.get(m)!.writes)).toEqual([0, 0, 0]);
    expect(ready(await getDelivery(app))?.status).toBe('True');
  });

  it('GIVEN a file deleted in Git THEN its object is pruned on every member', async () => {
    const files = appFiles();
    delete files['deploy/extra.yaml'];
    rev2 = await publish(app, files);
    const d = await waitFor(app, readyWith(rev2));
    expect(d.status?.clusters?.map((c) => [c.name, c.objects])).toEqual([
      ['member-1', 3],
      ['member-2', 3],
    ]);
    for (const m of ['member-1', 'member-2'] as const) {
      expect(await getCm(member(m), target, 'extra')).toBeUndefined();
      expect(await getCm(member(m), target, 'settings')).toBeDefined();
    }
    expect(d.status?.history?.map((h) => h.revision)).toEqual([rev2, rev1]);
  });

  it('GIVEN a broken manifest THEN Ready=False BuildFailed naming file:line, nothing applied or pruned, the previous revision stays live', async () => {
    const files = appFiles({
      'deploy/app.yaml': docs(configMapDoc('settings', { color: 'red' })),
      'deploy/broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n',
    });
    const bad = await publish(app, files);
    const d = await waitFor(app, (x) => ready(x)?.reason === 'BuildFailed');
    expect(ready(d)?.status).toBe('False');
    expect(ready(d)?.message).toMatch(
      new RegExp(
        `^revision ${bad}: deploy/broken\\.yaml:\\d+:\\d+: invalid YAML: .*; nothing was applied or pruned$`,
      ),
    );
    expect(d.status?.conditions?.find((c) => c.type === 'Stalled')?.status).toBe('True');
    expect(d.status?.lastAppliedRevision).toBe(rev2);
    for (const m of ['member-1', 'member-2'] as const) {
      expect((await getCm(member(m), target, 'settings'))?.data).toEqual({ color: 'blue' });
      expect(await getDeployment(member(m), target, 'web')).toBeDefined();
    }
  });

  it('GIVEN a manifest the API server rejects (unknown kind, invalid field) THEN BuildFailed naming file:line and nothing applied anywhere', async () => {
    const withBad = (file: string, text: string): Files =>
      appFiles({
        'deploy/app.yaml': docs(configMapDoc('settings', { color: 'green' }), deploymentDoc('web', 2)),
        'deploy/fine.yaml': stringify(configMapDoc('fine', { a: 'b' })),
        [file]: text,
      });
    const unknownKind = await publish(
      app,
      withBad(
        'deploy/widget.yaml',
        docs(configMapDoc('fine2', { a: 'b' }), {
          apiVersion: 'widgets.example.com/v1',
          kind: 'Widget',
          metadata: { name: 'w', namespace: target },
        }),
      ),
    );
    let d = await waitFor(app, (x) => (ready(x)?.message ?? '').includes(unknownKind));
    expect(ready(d)?.reason).toBe('BuildFailed');
    expect(ready(d)?.message).toBe(
      `revision ${unknownKind}: rejected by member-1, member-2: deploy/widget.yaml:8:1: cannot tell whether widgets.example.com/Widget is namespaced: no CustomResourceDefinition for it in the render or on the cluster; nothing was applied or pruned`,
    );

    const invalidField = await publish(
      app,
      withBad(
        'deploy/svc.yaml',
        stringify({
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'svc' },
          spec: { ports: [{ port: 'eighty' }] },
        }),
      ),
    );
    d = await waitFor(app, (x) => (ready(x)?.message ?? '').includes(invalidField));
    expect(ready(d)?.reason).toBe('BuildFailed');
    expect(ready(d)?.message).toMatch(
      new RegExp(
        `^revision ${invalidField}: rejected by member-1, member-2: deploy/svc\\.yaml:1:1: Service ${target}/svc: .*port`,
      ),
    );
    for (const m of ['member-1', 'member-2'] as const) {
      expect((await getCm(member(m), target, 'settings'))?.data).toEqual({ color: 'blue' });
      expect(await getCm(member(m), target, 'fine')).toBeUndefined();
      expect(await getDeployment(member(m), target, 'web')).toBeDefined();
    }
    expect(d.status?.lastAppliedRevision).toBe(rev2);

    // Back to a good revision.
    const good = appFiles();
    delete good['deploy/extra.yaml'];
    rev2 = await publish(app, good);
    await waitFor(app, readyWith(rev2));
  });

  it('GIVEN a manual edit on a member THEN it is reverted within one interval', async () => {
    await member('member-1').raw.mergePatch(
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: target, name: 'settings' } },
      { data: { color: 'hacked', extra: 'added' } },
      { fieldManager: 'kubectl-edit' },
    );
    expect((await getCm(member('member-1'), target, 'settings'))?.data?.color).toBe('hacked');
    await eventually(
      async () => (await getCm(member('member-1'), target, 'settings'))?.data?.color === 'blue',
      30_000,
    );
  });

  it('GIVEN an autoscaler owning spec.replicas THEN Sluice does not fight it, and says so in status', async () => {
    await member('member-1').raw.applyRaw(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { namespace: target, name: 'web' },
        spec: { replicas: 5 },
      } as KubernetesObject,
      { fieldManager: 'hpa-sim', force: true },
    );
    await requestReconcile(app);
    const d = await waitFor(app, (x) =>
      (x.status?.clusters?.find((c) => c.name === 'member-1')?.message ?? '').includes(
        'spec.replicas (hpa-sim)',
      ),
    );
    expect(d.status?.conditions?.find((c) => c.reason === 'ApplyFailed')).toBeUndefined();
    await fullSyncs('member-1', app, 3);
    expect((await getDeployment(member('member-1'), target, 'web'))?.spec?.replicas).toBe(5);
    expect((await getDeployment(member('member-2'), target, 'web'))?.spec?.replicas).toBe(2);
    await waitFor(app, readyWith(rev2));
  });

  it('GIVEN a cluster removed from the decisions THEN its objects are pruned there, its inventory removed, and status says so', async () => {
    await place(app, ['member-1']);
    const d = await waitFor(app, (x) => (x.status?.clusters ?? []).map((c) => c.name).join() === 'member-1');
    expect(ready(d)?.status).toBe('True');
    await eventually(async () => !(await getCm(member('member-2'), target, 'settings')), 30_000);
    expect(await getDeployment(member('member-2'), target, 'web')).toBeUndefined();
    const inv = await member('member-2').raw.listRaw('v1', 'ConfigMap', {
      namespace: INVENTORY_NAMESPACE,
      labelSelector: inventorySelector({ namespace: ns, name: app }),
    });
    expect(inv.items).toHaveLength(0);
    expect(await getCm(member('member-1'), target, 'settings')).toBeDefined();
    const events = await hub.raw.listRaw<KubernetesObject & { reason?: string; message?: string }>(
      'v1',
      'Event',
      {
        namespace: ns,
      },
    );
    expect(events.items.filter((e) => e.reason === 'Removed').map((e) => e.message)).toEqual([
      expect.stringMatching(/^member-2: removed from placement: \d+ objects pruned, inventory deleted$/),
    ]);
  });

  it('GIVEN a member whose apiserver is stopped during an apply THEN the others finish, it is Unreachable, and it converges after it returns', async () => {
    await stopCluster('member-3');
    let rev3: string;
    try {
      await place(app, ['member-1', 'member-2', 'member-3']);
      const files = appFiles();
      files['deploy/app.yaml'] = docs(configMapDoc('settings', { color: 'purple' }), deploymentDoc('web', 2));
      rev3 = await publish(app, files);
      const d = await waitFor(app, (x) => {
        const byName = new Map((x.status?.clusters ?? []).map((c) => [c.name, c]));
        return (
          byName.get('member-1')?.revision === rev3 &&
          byName.get('member-2')?.revision === rev3 &&
          byName.get('member-1')?.phase === 'Healthy' &&
          byName.get('member-2')?.phase === 'Healthy' &&
          byName.get('member-3')?.phase === 'Unreachable'
        );
      });
      expect(ready(d)?.status).toBe('False');
      expect(d.status?.lastAppliedRevision).toBe(rev2);
      expect(d.status?.clusters?.find((c) => c.name === 'member-3')?.message).toContain('unreachable');
      expect((await getCm(member('member-2'), target, 'settings'))?.data).toEqual({ color: 'purple' });
    } finally {
      await startCluster('member-3');
    }
    const d = await waitFor(app, readyWith(rev3), 120_000);
    expect(d.status?.clusters?.map((c) => [c.name, c.phase, c.revision])).toEqual([
      ['member-1', 'Healthy', rev3],
      ['member-2', 'Healthy', rev3],
      ['member-3', 'Healthy', rev3],
    ]);
    expect((await getCm(member('member-3'), target, 'settings'))?.data).toEqual({ color: 'purple' });
  });
});

describe('Delivery of a CRD and its custom resources', () => {
  const name = 'crds';
  const target = uniqueName('crd');
  const group = `${uniqueName('g')}.example.com`;

  it('GIVEN a CRD and a custom resource in one commit THEN the CRD is applied and Established first, then the resource', async () => {
    await setup(name, ['member-1'], { targetNamespace: target });
    created.crds.push(`gadgets.${group}`);
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `gadgets.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } },
              },
            },
          },
        ],
      },
    };
    const rev = await publish(name, {
      'deploy/crd.yaml': stringify(crd),
      'deploy/ns.yaml': stringify(namespaceDoc(target)),
      'deploy/gadget.yaml': stringify({
        apiVersion: `${group}/v1`,
        kind: 'Gadget',
        metadata: { name: 'g1' },
        spec: { size: 3 },
      }),
    });
    const d = await waitFor(name, readyWith(rev));
    expect(d.status?.clusters).toEqual([
      expect.objectContaining({ name: 'member-1', phase: 'Healthy', objects: 3 }),
    ]);
    const gadget = await member('member-1').raw.request<{ spec?: { size?: number } }>({
      method: 'GET',
      path: `/apis/${group}/v1/namespaces/${target}/gadgets/g1`,
    });
    expect(gadget.spec?.size).toBe(3);
  });
});

describe('Delivery of a kustomization', () => {
  const name = 'kust';
  const target = uniqueName('kust');

  it('GIVEN a Kustomize overlay THEN its build output is applied (through kubectl kustomize)', async () => {
    await setup(name, ['member-2'], { targetNamespace: target, path: './deploy/overlay' });
    const rev = await publish(name, {
      'deploy/base/kustomization.yaml': stringify({ resources: ['cm.yaml', 'ns.yaml'] }),
      'deploy/base/cm.yaml': stringify(configMapDoc('conf', { v: 'base' })),
      'deploy/base/ns.yaml': stringify(namespaceDoc(target)),
      'deploy/overlay/kustomization.yaml': stringify({
        resources: ['../base'],
        namePrefix: 'prod-',
        patches: [
          {
            target: { kind: 'ConfigMap' },
            patch: stringify([{ op: 'replace', path: '/data/v', value: 'prod' }]),
          },
        ],
      }),
    });
    const d = await waitFor(name, readyWith(rev));
    expect(d.status?.clusters?.map((c) => [c.name, c.objects])).toEqual([['member-2', 2]]);
    expect((await getCm(member('member-2'), target, 'prod-conf'))?.data).toEqual({ v: 'prod' });
  });
});

describe('Delivery of 1,000 objects', () => {
  const big = 'big';
  const target = uniqueName('big');

  it('GIVEN 1,000 ConfigMaps THEN they apply, status stays small, and a resync makes no write call', async () => {
    await setup(big, ['member-1', 'member-2'], { targetNamespace: target });
    const items = Array.from({ length: 1000 }, (_, i) => configMapDoc(`cm-${i}`, { i: String(i) }));
    const rev = await publish(big, {
      'deploy/namespace.yaml': stringify(namespaceDoc(target)),
      'deploy/many.yaml': stringify({ apiVersion: 'v1', kind: 'List', items }),
    });
    const d = await waitFor(big, readyWith(rev), 170_000);
    expect(d.status?.clusters?.map((c) => c.objects)).toEqual([1001, 1001]);
    expect(JSON.stringify(d.status).length).toBeLessThan(4096);
    const list = await member('member-2').raw.listRaw('v1', 'ConfigMap', {
      namespace: target,
      labelSelector: `${DELIVERY_LABEL}=${ns}.${big}`,
    });
    expect(list.items).toHaveLength(1000);

    await fullSyncs('member-1', big, 1);
    for (const m of MEMBERS) counted.get(m)!.writes = 0;
    await requestReconcile(big);
    await fullSyncs('member-1', big, 3);
    expect(MEMBERS.map((m) => counted.get(m)!.writes)).toEqual([0, 0, 0]);
  });
});
