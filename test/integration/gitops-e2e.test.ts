// Issue 3's acceptance checks, end to end: the built `sluice controller` process against the
// kube-local hub and three members, with a real Git server (git http-backend) as the source.
// Every case drives the system only as a user would — commits, webhooks, Cluster labels, edits
// on a member, a stopped apiserver, a killed controller — and checks status, Events and the
// objects on the member clusters. Component depth is left to delivery/git-source/placement tests.
import { createHmac } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject, V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { Delivery } from '../../src/api/delivery.js';
import type { GitSource } from '../../src/api/git-source.js';
import type { PlacementRule, PlacementRuleSpec } from '../../src/api/placement-rule.js';
import { RECONCILE_REQUESTED_ANNOTATION } from '../../src/api/reconcile-request.js';
import { INVENTORY_NAMESPACE, inventorySelector } from '../../src/delivery/inventory-store.js';
import { INVENTORY_DATA_KEY, decodeInventory } from '../../src/delivery/inventory.js';
import { CLUSTER_LABEL, DELIVERY_LABEL, boundedLabelValue } from '../../src/delivery/objects.js';
import type { ClusterClient } from '../../src/kube/clients.js';
import type { Condition } from '../../src/kube/conditions.js';
import { isNotFound } from '../../src/kube/errors.js';
import {
  eventually,
  kubeconfigPath,
  startCluster,
  stopCluster,
  testClient,
  uniqueName,
} from '../support/clusters.js';
import { ControllerProcess, controllerArgs } from '../support/controller-process.js';
import {
  commitFiles,
  createBranch,
  createRepo,
  deleteBranch,
  startGitServer,
  type GitServer,
  type RepoFiles,
} from '../support/git-server.js';
import {
  available,
  createNamespace,
  deleteObject,
  ensureCrds,
  eventsAbout,
  getCluster,
  kubeconfigSecret,
  labelCluster,
  registerCluster,
  secret,
} from '../support/sluice-objects.js';
import { configMapManifest, deploymentManifest, namespaceManifest, yamlDocs } from '../support/manifests.js';

const MEMBERS = ['member-1', 'member-2', 'member-3'] as const;
type Member = (typeof MEMBERS)[number];

const hub = testClient('hub');
const member: Record<Member, ClusterClient> = {
  'member-1': testClient('member-1'),
  'member-2': testClient('member-2'),
  'member-3': testClient('member-3'),
};
/** This run: the hub namespace, the prefix of its Cluster names and the label selecting them. */
const run = uniqueName('e2e');
const ns = run;
const RUN_LABEL = 'sluice-e2e-run';
const clusterOf = (m: Member): string => `${run}-${m}`;
const [c1, c2, c3] = MEMBERS.map(clusterOf) as [string, string, string];
const WEBHOOK_TOKEN = 'e2e-webhook-token';

let git: GitServer;
let controllerFlags: string[];
let controller: ControllerProcess | undefined;
let webhookPort = 0;
/** Deliveries and member namespaces this suite created (removed in afterAll). */
const deliveries: string[] = [];
const targets: string[] = [];
const storageDirs: string[] = [];

// ---------------------------------------------------------------------------------------------
// The controller process

/** `sluice controller` flags for this suite, with a fresh artifact storage directory (a new pod's). */
function newControllerFlags(): string[] {
  const flags = controllerArgs(kubeconfigPath('hub'), uniqueName('lease'), [
    '--leader-elect=false',
    '--cluster-probe-interval',
    '2s',
    '--placement-debounce',
    '2s',
  ]);
  storageDirs.push(flags[flags.indexOf('--storage-path') + 1]!);
  return flags;
}

async function startController(): Promise<ControllerProcess> {
  const c = new ControllerProcess(controllerFlags);
  controller = c;
  const starting = await c.waitForLog((l) => l.message === 'controller starting');
  webhookPort = Number(starting.webhookPort);
  await c.waitForLog((l) => l.message === 'controllers started');
  return c;
}

// ---------------------------------------------------------------------------------------------
// Hub objects

async function apply(obj: Record<string, unknown>): Promise<void> {
  await hub.raw.applyRaw(obj as unknown as KubernetesObject, { fieldManager: 'sluice-test', force: true });
}

async function placementRule(name: string, spec: PlacementRuleSpec): Promise<void> {
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: ns, name },
    spec,
  });
}

async function gitSource(
  name: string,
  spec: { url: string; branch?: string; interval: string; webhook?: boolean; secretName?: string },
): Promise<void> {
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name },
    spec: {
      url: spec.url,
      ref: { branch: spec.branch ?? 'main' },
      interval: spec.interval,
      secretRef: { name: spec.secretName ?? 'git-auth' },
      ...(spec.webhook ? { webhook: { secretRef: { name: 'git-webhook' } } } : {}),
    },
  });
}

async function delivery(
  name: string,
  spec: { source: string; placement: string; target: string; interval: string },
): Promise<void> {
  deliveries.push(name);
  targets.push(spec.target);
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name },
    spec: {
      sourceRef: { kind: 'GitSource', name: spec.source },
      placementRef: { name: spec.placement },
      path: './deploy',
      targetNamespace: spec.target,
      prune: true,
      interval: spec.interval,
    },
  });
}

async function deleteDelivery(name: string): Promise<void> {
  await deleteObject(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name },
  } as KubernetesObject);
}

const getDelivery = (name: string): Promise<Delivery> =>
  hub.raw.getRaw<Delivery & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name },
  });

const getSource = (name: string): Promise<GitSource> =>
  hub.raw.getRaw<GitSource & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name },
  });

const getRule = (name: string): Promise<PlacementRule> =>
  hub.raw.getRaw<PlacementRule & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: ns, name },
  });

function cond(
  obj: { status?: { conditions?: Condition[] } } | undefined,
  type: string,
): Condition | undefined {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

/** Waits until `check` holds for Delivery `name`; on timeout the error shows its last status. */
async function waitDelivery(
  name: string,
  check: (d: Delivery) => boolean,
  timeoutMs = 120_000,
): Promise<Delivery> {
  let last: Delivery | undefined;
  try {
    return await eventually(
      async () => {
        last = await getDelivery(name);
        return check(last) ? last : undefined;
      },
      timeoutMs,
      500,
    );
  } catch (err) {
    throw new Error(
      `Delivery ${name}: ${(err as Error).message}; last status: ${JSON.stringify(last?.status, null, 1)}`,
    );
  }
}

async function waitSource(name: string, check: (s: GitSource) => boolean, timeoutMs = 90_000) {
  let last: GitSource | undefined;
  try {
    return await eventually(
      async () => {
        last = await getSource(name);
        return check(last) ? last : undefined;
      },
      timeoutMs,
      250,
    );
  } catch (err) {
    throw new Error(
      `GitSource ${name}: ${(err as Error).message}; last status: ${JSON.stringify(last?.status, null, 1)}`,
    );
  }
}

/** Ready=True for the current generation, `revision` applied and Healthy on exactly `clusters`. */
const convergedOn =
  (revision: string, clusters: readonly string[]) =>
  (d: Delivery): boolean =>
    cond(d, 'Ready')?.status === 'True' &&
    d.status?.observedGeneration === d.metadata.generation &&
    d.status?.lastAppliedRevision === revision &&
    JSON.stringify(d.status.clusters?.map((c) => [c.name, c.phase, c.revision])) ===
      JSON.stringify(clusters.map((c) => [c, 'Healthy', revision]));

/**
 * Warning Events of Delivery `name` as `reason: message`, except the one a Delivery created
 * together with its GitSource may get before the first fetch finished.
 */
async function warningsAbout(name: string): Promise<string[]> {
  return (await eventsAbout(hub, ns, 'Delivery', name))
    .filter((e) => e.type === 'Warning')
    .map((e) => `${e.reason}: ${e.message}`)
    .filter((w) => w !== `ArtifactFailed: GitSource ${ns}/${name} has no artifact yet`);
}

const mainRev = (sha: string): string => `main@sha1:${sha}`;
const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

// ---------------------------------------------------------------------------------------------
// Member objects

async function getObject<T>(
  m: Member,
  apiVersion: string,
  kind: string,
  namespace: string,
  name: string,
): Promise<T | undefined> {
  try {
    return await member[m].raw.getRaw<T & KubernetesObject>({
      apiVersion,
      kind,
      metadata: { namespace, name },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

const getCm = (m: Member, namespace: string, name: string) =>
  getObject<V1ConfigMap>(m, 'v1', 'ConfigMap', namespace, name);
const getDeployment = (m: Member, namespace: string, name: string) =>
  getObject<V1Deployment>(m, 'apps/v1', 'Deployment', namespace, name);

const ownerSelector = (name: string): string => `${DELIVERY_LABEL}=${boundedLabelValue(`${ns}.${name}`)}`;

/** Names of the ConfigMaps (in every namespace) on `m` that carry Delivery `name`'s owner label, sorted. */
async function ownedConfigMaps(m: Member, name: string, limit?: number): Promise<string[]> {
  const names: string[] = [];
  let continueToken: string | undefined;
  do {
    const page = await member[m].raw.listRaw<V1ConfigMap & KubernetesObject>('v1', 'ConfigMap', {
      labelSelector: ownerSelector(name),
      limit: limit ?? 500,
      continueToken,
    });
    names.push(...page.items.map((cm) => `${cm.metadata?.namespace}/${cm.metadata?.name}`));
    if (limit) break;
    continueToken = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
  } while (continueToken);
  return names.sort();
}

/** Delivery `name`'s inventory on `m`: the decoded entry ids (sorted) and the number of shards. */
async function inventoryOn(m: Member, name: string): Promise<{ ids: string[]; shards: number; ok: boolean }> {
  const list = await member[m].raw.listRaw<V1ConfigMap & KubernetesObject>('v1', 'ConfigMap', {
    namespace: INVENTORY_NAMESPACE,
    labelSelector: inventorySelector({ namespace: ns, name }),
  });
  const decoded = decodeInventory(list.items.map((cm) => cm.data?.[INVENTORY_DATA_KEY] ?? ''));
  return { ids: decoded.entries.map((e) => e.id).sort(), shards: list.items.length, ok: decoded.ok };
}

// ---------------------------------------------------------------------------------------------
// Manifests

const namespaceYaml = (name: string): string => yamlDocs(namespaceManifest(name));
const configMapYaml = (name: string, data: Record<string, string>): string =>
  yamlDocs(configMapManifest(name, data));
const deploymentYaml = (name: string, replicas: number): string =>
  yamlDocs(deploymentManifest(name, replicas));
const docs = (...texts: string[]): string => texts.join('---\n');

/** A small app: its namespace, ConfigMap `settings` (with `data`), Deployment `web`, ConfigMap `extra`. */
function appFiles(target: string, data: Record<string, string>): RepoFiles {
  return {
    'deploy/namespace.yaml': namespaceYaml(target),
    'deploy/app.yaml': docs(configMapYaml('settings', data), deploymentYaml('web', 2)),
    'deploy/extra.yaml': configMapYaml('extra', { kept: 'until deleted in Git' }),
    'README.md': 'not a manifest\n',
  };
}

/** `count` ConfigMaps `cm-<i>` in one `kind: List`, and their namespace. */
function bulkFiles(target: string, count: number): RepoFiles {
  const items = Array.from({ length: count }, (_, i) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: `cm-${i}` },
    data: { index: String(i), filler: 'x'.repeat(64) },
  }));
  return {
    'deploy/namespace.yaml': namespaceYaml(target),
    'deploy/many.yaml': stringify({ apiVersion: 'v1', kind: 'List', items }),
  };
}

/** What bulkFiles(target, count) renders to, as inventory ids. */
function bulkIds(target: string, count: number): string[] {
  return [
    `/Namespace//${target}`,
    ...Array.from({ length: count }, (_, i) => `/ConfigMap/${target}/cm-${i}`),
  ].sort();
}

async function firstObjectOn(m: Member, name: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await ownedConfigMaps(m, name, 1)).length === 0) {
    if (Date.now() > deadline)
      throw new Error(`no object of Delivery ${name} on ${m} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function sendPushWebhook(source: string, sha: string, url: string) {
  const body = JSON.stringify({ ref: 'refs/heads/main', after: sha, repository: { clone_url: url } });
  const res = await fetch(`http://127.0.0.1:${webhookPort}/hooks/${ns}/${source}`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-GitHub-Event': 'push',
      'X-Hub-Signature-256': `sha256=${createHmac('sha256', WEBHOOK_TOKEN).update(body).digest('hex')}`,
    },
    body,
  });
  return { status: res.status, text: (await res.text()).trim() };
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  git = await startGitServer();
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  await secret(hub, ns, 'git-auth', git.credentials());
  await secret(hub, ns, 'git-webhook', { token: WEBHOOK_TOKEN });
  for (const m of MEMBERS) {
    await kubeconfigSecret(hub, ns, `${m}-kubeconfig`, m);
    await registerCluster(
      hub,
      clusterOf(m),
      { namespace: ns, name: `${m}-kubeconfig` },
      { [RUN_LABEL]: run, env: m === 'member-3' ? 'staging' : 'prod' },
    );
  }
  // Every Cluster labelled env=prod (of this run), as examples/delivery/web.yaml places the web app.
  await placementRule('prod', {
    clusterSelector: { matchLabels: { [RUN_LABEL]: run, env: 'prod' } },
    clusterConditions: [{ type: 'Available', status: 'True' }],
  });
  // By name, for the large cases (member-3 is stopped in one of them, so no clusterConditions).
  await placementRule('trio', { clusters: [{ name: c1 }, { name: c2 }, { name: c3 }] });
  await placementRule('pair', { clusters: [{ name: c1 }, { name: c2 }] });
  await placementRule('solo', { clusters: [{ name: c2 }] });
  controllerFlags = newControllerFlags();
  await startController();
  for (const c of [c1, c2, c3]) {
    await eventually(async () => available(await getCluster(hub, c))?.status === 'True', 60_000);
  }
});

afterAll(async () => {
  // Deliveries first, so the controller stops applying; then the controller; then the objects.
  for (const d of deliveries) await deleteDelivery(d);
  await controller?.kill('SIGTERM');
  for (const m of MEMBERS) {
    for (const t of targets)
      await deleteObject(member[m], { apiVersion: 'v1', kind: 'Namespace', metadata: { name: t } });
    for (const d of deliveries) {
      const inv = await member[m].raw.listRaw('v1', 'ConfigMap', {
        namespace: INVENTORY_NAMESPACE,
        labelSelector: inventorySelector({ namespace: ns, name: d }),
      });
      for (const cm of inv.items)
        await deleteObject(member[m], { ...cm, apiVersion: 'v1', kind: 'ConfigMap' });
    }
  }
  for (const c of [c1, c2, c3])
    await deleteObject(hub, { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: { name: c } });
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await git?.stop();
  for (const dir of storageDirs) rmSync(dir, { recursive: true, force: true });
});

// ---------------------------------------------------------------------------------------------

describe('GitOps delivery end to end (issue 3 acceptance)', () => {
  // The app that cases 1 (polling), 2, 3 and 4 move through Git, in order.
  const app = 'app';
  const appTarget = uniqueName('app');
  let appRev = '';

  it('1a. GIVEN a GitSource polled every 10m with a webhook WHEN a commit is pushed and announced THEN it is applied on every placed cluster', async () => {
    const target = uniqueName('hooked');
    const { url, sha } = await createRepo(git, 'hooked', appFiles(target, { greeting: 'v1' }));
    await gitSource('hooked', { url, interval: '10m', webhook: true });
    await delivery('hooked', { source: 'hooked', placement: 'prod', target, interval: '30s' });
    await waitDelivery('hooked', convergedOn(mainRev(sha), [c1, c2]));

    const next = await commitFiles(git, 'hooked', {
      add: {
        'deploy/app.yaml': docs(configMapYaml('settings', { greeting: 'v2' }), deploymentYaml('web', 2)),
      },
      message: 'greeting v2',
    });
    // A 10m interval: only the webhook can bring this commit within the test.
    const res = await sendPushWebhook('hooked', next, url);
    expect(res).toEqual({
      status: 200,
      text: `reconcile of GitSource ${ns}/hooked requested for a push to refs/heads/main`,
    });
    const d = await waitDelivery('hooked', convergedOn(mainRev(next), [c1, c2]));
    expect(cond(d, 'Ready')?.message).toBe(`applied revision ${mainRev(next)} to 2 clusters, all healthy`);
    const source = await getSource('hooked');
    expect(cond(source, 'Ready')).toMatchObject({
      status: 'True',
      message: `stored artifact for revision ${mainRev(next)}`,
    });
    // The fetch that brought it was the one the webhook asked for.
    const requested = source.metadata.annotations?.[RECONCILE_REQUESTED_ANNOTATION];
    expect(requested).toBeDefined();
    expect(source.status?.lastHandledReconcileAt).toBe(requested);
    for (const m of ['member-1', 'member-2'] as const) {
      expect((await getCm(m, target, 'settings'))?.data).toEqual({ greeting: 'v2' });
    }
    expect(await getCm('member-3', target, 'settings')).toBeUndefined();
  });

  it('1b. GIVEN a GitSource polled every 2s without a webhook WHEN a commit is pushed THEN polling alone applies it on every placed cluster', async () => {
    const { url, sha } = await createRepo(git, app, appFiles(appTarget, { greeting: 'v1' }));
    await gitSource(app, { url, interval: '2s' });
    await delivery(app, { source: app, placement: 'prod', target: appTarget, interval: '30s' });
    await waitDelivery(app, convergedOn(mainRev(sha), [c1, c2]));

    const next = await commitFiles(git, app, {
      add: {
        'deploy/app.yaml': docs(configMapYaml('settings', { greeting: 'v2' }), deploymentYaml('web', 2)),
      },
      message: 'greeting v2',
    });
    appRev = mainRev(next);
    const d = await waitDelivery(app, convergedOn(appRev, [c1, c2]));
    expect(d.status?.clusters?.map((c) => c.objects)).toEqual([4, 4]);
    expect(d.status?.history?.map((h) => h.revision)).toEqual([appRev, mainRev(sha)]);
    for (const m of ['member-1', 'member-2'] as const) {
      const cm = await getCm(m, appTarget, 'settings');
      expect(cm?.data).toEqual({ greeting: 'v2' });
      expect(cm?.metadata?.labels).toEqual({
        [DELIVERY_LABEL]: `${ns}.${app}`,
        [CLUSTER_LABEL]: clusterOf(m),
      });
    }
    expect(await getCm('member-3', appTarget, 'settings')).toBeUndefined();
  });

  it('2. GIVEN a Cluster labelled env=prod THEN the app arrives there; WHEN the label is removed THEN it is pruned there and the status says so', async () => {
    await labelCluster(hub, c3, { env: 'prod' });
    await eventually(async () =>
      (await getRule('prod')).status?.decisions?.some((x) => x.clusterName === c3),
    );
    let d = await waitDelivery(app, convergedOn(appRev, [c1, c2, c3]));
    expect(d.status?.clusters?.find((c) => c.name === c3)).toMatchObject({ phase: 'Healthy', objects: 4 });
    expect((await getCm('member-3', appTarget, 'settings'))?.data).toEqual({ greeting: 'v2' });
    expect(await getDeployment('member-3', appTarget, 'web')).toBeDefined();
    expect((await inventoryOn('member-3', app)).ids).toHaveLength(4);
    const applied = (await eventsAbout(hub, ns, 'Delivery', app)).filter((e) => e.reason === 'Applied');
    expect(applied.map((e) => e.message)).toContain(
      `${c3}: revision ${appRev}: 4 created, 0 configured, 0 unchanged, 0 deleted`,
    );

    await labelCluster(hub, c3, { env: null });
    d = await waitDelivery(app, convergedOn(appRev, [c1, c2]));
    expect(d.status?.clusters?.map((c) => c.name)).toEqual([c1, c2]);
    await eventually(async () => {
      const removed = (await eventsAbout(hub, ns, 'Delivery', app)).filter((e) => e.reason === 'Removed');
      return removed.length > 0;
    });
    const removed = (await eventsAbout(hub, ns, 'Delivery', app)).filter((e) => e.reason === 'Removed');
    expect(removed.map((e) => [e.type, e.message])).toEqual([
      ['Normal', `${c3}: removed from placement: 4 objects pruned, inventory deleted`],
    ]);
    await eventually(async () => (await getCm('member-3', appTarget, 'settings')) === undefined, 60_000);
    expect(await getDeployment('member-3', appTarget, 'web')).toBeUndefined();
    expect(await inventoryOn('member-3', app)).toEqual({ ids: [], shards: 0, ok: true });
    for (const m of ['member-1', 'member-2'] as const) {
      expect((await getCm(m, appTarget, 'settings'))?.data).toEqual({ greeting: 'v2' });
    }
  });

  it('3. GIVEN a file deleted in Git THEN its object is pruned on every placed cluster', async () => {
    const sha = await commitFiles(git, app, { remove: ['deploy/extra.yaml'], message: 'drop extra' });
    appRev = mainRev(sha);
    const d = await waitDelivery(app, convergedOn(appRev, [c1, c2]));
    expect(d.status?.clusters?.map((c) => c.objects)).toEqual([3, 3]);
    for (const m of ['member-1', 'member-2'] as const) {
      expect(await getCm(m, appTarget, 'extra')).toBeUndefined();
      expect(await getCm(m, appTarget, 'settings')).toBeDefined();
      expect((await inventoryOn(m, app)).ids).not.toContain(`/ConfigMap/${appTarget}/extra`);
    }
    const applied = (await eventsAbout(hub, ns, 'Delivery', app))
      .filter((e) => e.reason === 'Applied' && e.message?.includes(appRev))
      .map((e) => e.message)
      .sort();
    expect(applied).toEqual([
      `${c1}: revision ${appRev}: 0 created, 0 configured, 3 unchanged, 1 deleted`,
      `${c2}: revision ${appRev}: 0 created, 0 configured, 3 unchanged, 1 deleted`,
    ]);
  });

  it('4. GIVEN a broken manifest (bad YAML, unknown kind, invalid field) THEN Ready=False naming file and line, nothing applied or pruned, the previous revision live everywhere; fixing it recovers', async () => {
    const good = appRev;
    // Every broken commit also changes settings, drops the Deployment and adds ConfigMap
    // `fine`: any apply or prune would show on the members.
    const base = {
      'deploy/app.yaml': configMapYaml('settings', { greeting: 'v3' }),
      'deploy/fine.yaml': configMapYaml('fine', { a: 'b' }),
    };
    const expectNothingChanged = async (bad: string) => {
      const d = await waitDelivery(app, (x) => (cond(x, 'Ready')?.message ?? '').includes(bad));
      expect(cond(d, 'Ready')).toMatchObject({ status: 'False', reason: 'BuildFailed' });
      expect(cond(d, 'Stalled')).toMatchObject({ status: 'True', reason: 'BuildFailed' });
      expect(d.status?.lastAppliedRevision).toBe(good);
      expect(d.status?.clusters?.map((c) => [c.name, c.revision])).toEqual([
        [c1, good],
        [c2, good],
      ]);
      for (const m of ['member-1', 'member-2'] as const) {
        expect((await getCm(m, appTarget, 'settings'))?.data).toEqual({ greeting: 'v2' });
        expect(await getDeployment(m, appTarget, 'web')).toBeDefined();
        expect(await getCm(m, appTarget, 'fine')).toBeUndefined();
      }
      return cond(d, 'Ready')?.message;
    };

    const badYaml = mainRev(
      await commitFiles(git, app, {
        add: {
          ...base,
          'deploy/broken.yaml': docs(
            configMapYaml('ok', { a: 'b' }),
            'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: broken\ndata:\n  key: a: b\n',
          ),
        },
        message: 'bad yaml',
      }),
    );
    expect(await expectNothingChanged(badYaml)).toBe(
      `revision ${badYaml}: deploy/broken.yaml:13:8: invalid YAML: Nested mappings are not allowed in compact mappings; nothing was applied or pruned`,
    );

    const unknownKind = mainRev(
      await commitFiles(git, app, {
        remove: ['deploy/broken.yaml'],
        add: {
          'deploy/widget.yaml': docs(
            configMapYaml('fine2', { a: 'b' }),
            'apiVersion: widgets.example.com/v1\nkind: Widget\nmetadata:\n  name: w\n',
          ),
        },
        message: 'unknown kind',
      }),
    );
    expect(await expectNothingChanged(unknownKind)).toBe(
      `revision ${unknownKind}: rejected by ${c1}, ${c2}: deploy/widget.yaml:8:1: cannot tell whether widgets.example.com/Widget is namespaced: no CustomResourceDefinition for it in the render or on the cluster; nothing was applied or pruned`,
    );

    const invalidField = mainRev(
      await commitFiles(git, app, {
        remove: ['deploy/widget.yaml'],
        add: {
          'deploy/svc.yaml': docs(
            configMapYaml('fine3', { a: 'b' }),
            'apiVersion: v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  ports:\n    - port: eighty\n',
          ),
        },
        message: 'invalid field',
      }),
    );
    expect(await expectNothingChanged(invalidField)).toMatch(
      new RegExp(
        `^revision ${escapeRe(invalidField)}: rejected by ${c1}, ${c2}: deploy/svc\\.yaml:8:1: Service ${appTarget}/svc: .*port.*; nothing was applied or pruned$`,
      ),
    );

    const fixed = mainRev(
      await commitFiles(git, app, { remove: ['deploy/svc.yaml'], message: 'fix: drop the bad Service' }),
    );
    appRev = fixed;
    const d = await waitDelivery(app, convergedOn(fixed, [c1, c2]));
    expect(cond(d, 'Stalled')).toBeUndefined();
    for (const m of ['member-1', 'member-2'] as const) {
      expect((await getCm(m, appTarget, 'settings'))?.data).toEqual({ greeting: 'v3' });
      expect((await getCm(m, appTarget, 'fine'))?.data).toEqual({ a: 'b' });
      // The Deployment left Git with the fix's predecessors: pruned now that a render succeeded.
      await eventually(async () => (await getDeployment(m, appTarget, 'web')) === undefined, 30_000);
    }
    const warnings = (await eventsAbout(hub, ns, 'Delivery', app)).filter((e) => e.reason === 'BuildFailed');
    expect(warnings.map((e) => e.type)).toEqual(['Warning', 'Warning', 'Warning']);
  });

  it('5. GIVEN the Git server down, wrong credentials, the branch deleted THEN the GitSource says why (FetchFailed, AuthFailed, RefNotFound), the Delivery keeps the last good revision, nothing is pruned; each recovers when fixed', async () => {
    // A server of its own: pausing or re-keying the shared one would fail every other source.
    const flaky = await startGitServer();
    try {
      const target = uniqueName('flaky');
      const files = (n: number): RepoFiles => ({
        'deploy/namespace.yaml': namespaceYaml(target),
        'deploy/settings.yaml': configMapYaml('settings', { n: String(n) }),
        'deploy/extra.yaml': configMapYaml('extra', { n: String(n) }),
      });
      const { url } = await createRepo(flaky, 'flaky', files(1));
      const sha1 = await createBranch(flaky, 'flaky', 'release');
      const { username, password } = flaky.credentials();
      await secret(hub, ns, 'flaky-auth', { username, password });
      await gitSource('flaky', { url, branch: 'release', interval: '2s', secretName: 'flaky-auth' });
      await delivery('flaky', { source: 'flaky', placement: 'prod', target, interval: '5s' });
      const rev = (sha: string) => `release@sha1:${sha}`;
      await waitDelivery('flaky', convergedOn(rev(sha1), [c1, c2]));

      /** The Delivery still runs `revision` on both members, with `n` in settings and `extra` present. */
      const keeps = async (revision: string, n: number) => {
        const d = await getDelivery('flaky');
        expect(d.status?.lastAppliedRevision).toBe(revision);
        expect(d.status?.clusters?.map((c) => [c.name, c.phase, c.revision])).toEqual([
          [c1, 'Healthy', revision],
          [c2, 'Healthy', revision],
        ]);
        for (const m of ['member-1', 'member-2'] as const) {
          expect((await getCm(m, target, 'settings'))?.data).toEqual({ n: String(n) });
          expect(await getCm(m, target, 'extra')).toBeDefined();
          expect((await inventoryOn(m, 'flaky')).ids).toHaveLength(3);
        }
      };
      const failedWith = (reason: string) =>
        waitSource(
          'flaky',
          (s) => cond(s, 'Ready')?.status === 'False' && cond(s, 'Ready')?.reason === reason,
        );

      // Down: the commit made meanwhile (which drops extra.yaml) cannot be seen.
      await flaky.pause();
      const sha2 = await commitFiles(flaky, 'flaky', {
        branch: 'release',
        add: { 'deploy/settings.yaml': configMapYaml('settings', { n: '2' }) },
        remove: ['deploy/extra.yaml'],
        message: 'two, without extra',
      });
      let s = await failedWith('FetchFailed');
      expect(cond(s, 'Ready')?.message).toMatch(
        new RegExp(
          `^resolve branch release of ${escapeRe(url)}: Git server unreachable \\(ECONN(REFUSED|RESET)\\)`,
        ),
      );
      expect(s.status?.artifact?.revision).toBe(rev(sha1));
      await keeps(rev(sha1), 1);
      await flaky.resume();
      await waitDelivery('flaky', convergedOn(rev(sha2), [c1, c2]));
      for (const m of ['member-1', 'member-2'] as const) {
        expect(await getCm(m, target, 'extra')).toBeUndefined();
      }

      // Wrong credentials: the server now wants another password than the Secret holds.
      const sha3 = await commitFiles(flaky, 'flaky', {
        branch: 'release',
        add: {
          'deploy/settings.yaml': configMapYaml('settings', { n: '3' }),
          'deploy/extra.yaml': configMapYaml('extra', { n: '3' }),
        },
        message: 'three, extra back',
      });
      await waitDelivery('flaky', convergedOn(rev(sha3), [c1, c2]));
      flaky.setCredentials(username, 'rotated-password');
      const sha4 = await commitFiles(flaky, 'flaky', {
        branch: 'release',
        add: { 'deploy/settings.yaml': configMapYaml('settings', { n: '4' }) },
        remove: ['deploy/extra.yaml'],
        message: 'four, without extra',
      });
      s = await failedWith('AuthFailed');
      expect(cond(s, 'Ready')?.message).toBe(
        `resolve branch release of ${url}: authentication failed (HTTP 401 Unauthorized): check the credentials in the Secret`,
      );
      expect(s.status?.artifact?.revision).toBe(rev(sha3));
      await keeps(rev(sha3), 3);
      flaky.setCredentials(username, password);
      await waitDelivery('flaky', convergedOn(rev(sha4), [c1, c2]));

      // Branch deleted, then recreated.
      const sha5 = await commitFiles(flaky, 'flaky', {
        branch: 'release',
        add: {
          'deploy/settings.yaml': configMapYaml('settings', { n: '5' }),
          'deploy/extra.yaml': configMapYaml('extra', { n: '5' }),
        },
        message: 'five, extra back',
      });
      await waitDelivery('flaky', convergedOn(rev(sha5), [c1, c2]));
      await deleteBranch(flaky, 'flaky', 'release');
      s = await failedWith('RefNotFound');
      expect(cond(s, 'Ready')?.message).toBe(
        `resolve branch release of ${url}: branch "release" not found on the remote`,
      );
      expect(s.status?.artifact?.revision).toBe(rev(sha5));
      await keeps(rev(sha5), 5);
      const sha6 = await commitFiles(flaky, 'flaky', {
        branch: 'release',
        from: sha5,
        add: { 'deploy/settings.yaml': configMapYaml('settings', { n: '6' }) },
        message: 'six: the branch is back',
      });
      await waitDelivery('flaky', convergedOn(rev(sha6), [c1, c2]));
      for (const m of ['member-1', 'member-2'] as const) {
        expect((await getCm(m, target, 'settings'))?.data).toEqual({ n: '6' });
      }

      const reasons = (await eventsAbout(hub, ns, 'GitSource', 'flaky')).map((e) => `${e.type}/${e.reason}`);
      expect(reasons).toEqual(
        expect.arrayContaining(['Warning/FetchFailed', 'Warning/AuthFailed', 'Warning/RefNotFound']),
      );
    } finally {
      await flaky.stop();
    }
  });

  it('6. GIVEN a manual edit on a member THEN it is reverted within an interval; an HPA owning spec.replicas is not fought', async () => {
    const target = uniqueName('drift');
    const { url, sha } = await createRepo(git, 'drift', {
      'deploy/namespace.yaml': namespaceYaml(target),
      'deploy/app.yaml': docs(configMapYaml('settings', { color: 'blue' }), deploymentYaml('web', 2)),
    });
    await gitSource('drift', { url, interval: '1m' });
    await delivery('drift', { source: 'drift', placement: 'prod', target, interval: '3s' });
    await waitDelivery('drift', convergedOn(mainRev(sha), [c1, c2]));

    const manualEdit = async () => {
      await member['member-1'].raw.mergePatch(
        { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: target, name: 'settings' } },
        { data: { color: 'hacked' } },
        { fieldManager: 'kubectl-edit' },
      );
      expect((await getCm('member-1', target, 'settings'))?.data?.color).toBe('hacked');
      const editedAt = Date.now();
      await eventually(
        async () => (await getCm('member-1', target, 'settings'))?.data?.color === 'blue',
        60_000,
      );
      return Date.now() - editedAt;
    };
    const revertedAfter = await manualEdit();
    console.log(`manual edit reverted after ${revertedAfter} ms (Delivery interval 3s)`);

    await member['member-1'].raw.applyRaw(
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { namespace: target, name: 'web' },
        spec: { replicas: 5 },
      } as KubernetesObject,
      { fieldManager: 'hpa-sim', force: true },
    );
    const yielded = `fields left to other managers: apps/Deployment/${target}/web spec.replicas (hpa-sim)`;
    const d = await waitDelivery('drift', (x) =>
      (x.status?.clusters?.find((c) => c.name === c1)?.message ?? '').includes(yielded),
    );
    expect(d.status?.clusters?.find((c) => c.name === c1)?.phase).toBe('Healthy');
    // Another edit reverted proves full syncs ran since the autoscaler took the replicas.
    await manualEdit();
    expect((await getDeployment('member-1', target, 'web'))?.spec?.replicas).toBe(5);
    expect((await getDeployment('member-2', target, 'web'))?.spec?.replicas).toBe(2);
    const owners = (await getDeployment('member-1', target, 'web'))?.metadata?.managedFields
      ?.filter((f) => (f.fieldsV1 as { 'f:spec'?: { 'f:replicas'?: unknown } })['f:spec']?.['f:replicas'])
      .map((f) => f.manager);
    expect(owners).toEqual(['hpa-sim']);
    const now = await waitDelivery('drift', convergedOn(mainRev(sha), [c1, c2]));
    expect(cond(now, 'Ready')?.reason).toBe('ReconciliationSucceeded');
    expect(await warningsAbout('drift')).toEqual([]);
  });

  it('7. GIVEN a member apiserver stopped during the apply of 600 objects THEN the others finish, it is Unreachable, and it converges after it returns', async () => {
    const name = 'wide';
    const target = uniqueName('wide');
    const { url, sha } = await createRepo(git, name, bulkFiles(target, 600));
    const rev = mainRev(sha);
    await gitSource(name, { url, interval: '10m' });
    await delivery(name, { source: name, placement: 'trio', target, interval: '10m' });
    await firstObjectOn('member-3', name);
    await stopCluster('member-3');
    const stoppedAt = Date.now();
    let startedAt = 0;
    try {
      const d = await waitDelivery(name, (x) => {
        const byName = new Map((x.status?.clusters ?? []).map((c) => [c.name, c]));
        return (
          byName.get(c1)?.phase === 'Healthy' &&
          byName.get(c2)?.phase === 'Healthy' &&
          byName.get(c3)?.phase === 'Unreachable'
        );
      });
      expect(d.status?.clusters?.map((c) => [c.name, c.revision, c.objects])).toEqual([
        [c1, rev, 601],
        [c2, rev, 601],
        [c3, undefined, undefined],
      ]);
      console.log(
        `member-3 stopped mid-apply: others Healthy, it Unreachable after ${Date.now() - stoppedAt} ms: ${d.status?.clusters?.[2]?.message}`,
      );
      expect(d.status?.clusters?.[2]?.message).toMatch(/^unreachable, inventory kept: /);
      expect(cond(d, 'Ready')).toMatchObject({ status: 'False', reason: 'ApplyFailed' });
      expect(cond(d, 'Ready')?.message).toMatch(new RegExp(`^${c3}: unreachable, inventory kept: `));
      expect(d.status?.lastAppliedRevision).toBeUndefined();
      for (const m of ['member-1', 'member-2'] as const) {
        expect(await ownedConfigMaps(m, name)).toHaveLength(600);
      }
    } finally {
      await startCluster('member-3');
      startedAt = Date.now();
    }
    const d = await waitDelivery(name, convergedOn(rev, [c1, c2, c3]), 150_000);
    console.log(`member-3 converged ${Date.now() - startedAt} ms after it answered /readyz again`);
    expect(d.status?.clusters?.map((c) => c.objects)).toEqual([601, 601, 601]);
    const want = bulkIds(target, 600);
    expect(await ownedConfigMaps('member-3', name)).toEqual(
      want
        .filter((id) => id.startsWith('/ConfigMap/'))
        .map((id) => id.replace('/ConfigMap/', ''))
        .sort(),
    );
    expect((await inventoryOn('member-3', name)).ids).toEqual(want);
    // 1,800 objects resynced on every interval would weigh on the cases below.
    await deleteDelivery(name);
  });

  it('8. GIVEN the controller SIGKILLed during the apply of 600 objects WHEN it is restarted THEN it converges: every object once on each member, inventory complete, nothing orphaned', async () => {
    const name = 'killed';
    const target = uniqueName('killed');
    const { url, sha } = await createRepo(git, name, bulkFiles(target, 600));
    const rev = mainRev(sha);
    await gitSource(name, { url, interval: '10m' });
    await delivery(name, { source: name, placement: 'pair', target, interval: '10m' });
    await firstObjectOn('member-1', name);
    const killed = await controller!.kill('SIGKILL');
    const atKill = await Promise.all(
      (['member-1', 'member-2'] as const).map(async (m) => ({
        m,
        objects: (await ownedConfigMaps(m, name)).length,
        inventory: (await inventoryOn(m, name)).ids.length,
      })),
    );
    await startController();
    console.log(`at SIGKILL: ${JSON.stringify(atKill)}`);
    expect(killed).toEqual({ code: null, signal: 'SIGKILL' });
    // Interrupted mid-way: some of the 600 exist on member-1, not all.
    expect(atKill[0]?.objects).toBeGreaterThan(0);
    expect(atKill[0]?.objects).toBeLessThan(600);

    const d = await waitDelivery(name, convergedOn(rev, [c1, c2]), 150_000);
    expect(d.status?.clusters?.map((c) => c.objects)).toEqual([601, 601]);
    const want = bulkIds(target, 600);
    const wantConfigMaps = want
      .filter((id) => id.startsWith('/ConfigMap/'))
      .map((id) => id.replace('/ConfigMap/', ''))
      .sort();
    for (const m of ['member-1', 'member-2'] as const) {
      // Owner-labelled objects in every namespace: exactly the rendered set.
      expect(await ownedConfigMaps(m, name)).toEqual(wantConfigMaps);
      const inv = await inventoryOn(m, name);
      expect(inv.ok).toBe(true);
      expect(inv.ids).toEqual(want);
      expect(new Set(inv.ids).size).toBe(inv.ids.length);
    }
    const applied = (await eventsAbout(hub, ns, 'Delivery', name)).filter((e) => e.reason === 'Applied');
    expect(applied.map((e) => e.message?.split(':')[0]).sort()).toEqual([c1, c2]);
    await deleteDelivery(name);
  });

  it('8b. GIVEN the controller SIGKILLed while applying a revision that adds 600 objects, and Git moved on before it came back on a new pod THEN nothing it had created for the abandoned revision is orphaned', async () => {
    const name = 'moved';
    const target = uniqueName('moved');
    const base: RepoFiles = {
      'deploy/namespace.yaml': namespaceYaml(target),
      'deploy/keep.yaml': configMapYaml('keep', { a: 'b' }),
    };
    const { url, sha } = await createRepo(git, name, base);
    await gitSource(name, { url, interval: '2s' });
    await delivery(name, { source: name, placement: 'pair', target, interval: '10m' });
    await waitDelivery(name, convergedOn(mainRev(sha), [c1, c2]));

    // Revision 2 adds 600 ConfigMaps; the controller dies once the first of them exist.
    const bulk = bulkFiles(target, 600)['deploy/many.yaml']!;
    await commitFiles(git, name, { add: { 'deploy/many.yaml': bulk }, message: 'add 600' });
    await eventually(async () => (await ownedConfigMaps('member-1', name, 2)).length > 1, 60_000, 50);
    await controller!.kill('SIGKILL');
    const leftBehind = await ownedConfigMaps('member-1', name);

    // Git moves on while the controller is down: revision 3 drops the 600 again.
    const sha3 = await commitFiles(git, name, {
      remove: ['deploy/many.yaml'],
      add: { 'deploy/final.yaml': configMapYaml('final', { a: 'b' }) },
      message: 'drop the 600',
    });
    // A new pod: the artifact storage (an emptyDir) is gone with the old one.
    controllerFlags = newControllerFlags();
    await startController();
    console.log(`at SIGKILL: ${leftBehind.length} owned ConfigMaps on member-1`);
    expect(leftBehind.length).toBeGreaterThan(1);
    expect(leftBehind.length).toBeLessThan(601);
    await waitDelivery(name, convergedOn(mainRev(sha3), [c1, c2]), 150_000);
    for (const m of ['member-1', 'member-2'] as const) {
      // Owner-labelled objects on the member: exactly revision 3's.
      await eventually(
        async () =>
          JSON.stringify(await ownedConfigMaps(m, name)) ===
          JSON.stringify([`${target}/final`, `${target}/keep`]),
        30_000,
      ).catch(async () => {
        const owned = await ownedConfigMaps(m, name);
        throw new Error(
          `${m}: ${owned.length} owner-labelled ConfigMaps, want 2 (final, keep); orphans: ${owned
            .filter((n) => !n.endsWith('/final') && !n.endsWith('/keep'))
            .slice(0, 5)
            .join(', ')}…`,
        );
      });
      expect((await inventoryOn(m, name)).ids).toEqual([
        `/ConfigMap/${target}/final`,
        `/ConfigMap/${target}/keep`,
        `/Namespace//${target}`,
      ]);
    }
  });

  it('9. GIVEN a Delivery of 1,000 objects THEN it applies and its status stays small', async () => {
    const name = 'big';
    const target = uniqueName('big');
    const { url, sha } = await createRepo(git, name, bulkFiles(target, 1000));
    const rev = mainRev(sha);
    await gitSource(name, { url, interval: '10m' });
    await delivery(name, { source: name, placement: 'solo', target, interval: '10m' });
    const d = await waitDelivery(name, convergedOn(rev, [c2]), 170_000);
    const size = JSON.stringify(d.status).length;
    console.log(`status of a 1,001-object Delivery: ${size} bytes`);
    expect(size).toBeLessThan(16 * 1024);
    expect(d.status?.clusters).toEqual([
      expect.objectContaining({ name: c2, phase: 'Healthy', revision: rev, objects: 1001 }),
    ]);
    expect(await ownedConfigMaps('member-2', name)).toHaveLength(1000);
    const inv = await inventoryOn('member-2', name);
    expect(inv.ok).toBe(true);
    expect(inv.ids).toEqual(bulkIds(target, 1000));
    const tooLarge = controller!.lines.filter((l) => /too large|etcdserver/i.test(JSON.stringify(l)));
    expect(tooLarge).toEqual([]);
    expect(await warningsAbout(name)).toEqual([]);
    await deleteDelivery(name);
  });
});
