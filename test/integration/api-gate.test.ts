import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import type { Delivery } from '../../src/api/delivery.js';
import { runCli } from '../../src/cli/run.js';
import { INVENTORY_NAMESPACE, inventorySelector } from '../../src/delivery/inventory-store.js';
import { registerDeliveryControllers } from '../../src/delivery/register.js';
import { ArtifactStore } from '../../src/git/artifact.js';
import type { ClusterClient } from '../../src/kube/clients.js';
import { isNotFound } from '../../src/kube/errors.js';
import { Manager } from '../../src/kube/manager.js';
import { writeStatus } from '../../src/kube/status.js';
import { silentLogger } from '../../src/log.js';
import { MemberClients } from '../../src/placement/member-clients.js';
import { captureOutput } from '../support/capture-output.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';
import { configMapManifest, namespaceManifest, yamlDocs } from '../support/manifests.js';
import { createNamespace, deleteObject, ensureCrds } from '../support/sluice-objects.js';

// Issue 5 item 8: a Delivery holding an extensions/v1beta1 Ingress is refused by kube-local
// (v1.36) before anything is written there; once `sluice fix --write` rewrote the file in the
// repository, the next revision applies.
const hub = testClient('hub');
const ns = uniqueName('gate');
const target = uniqueName('gate-app');
const MEMBER = 'member-1';
const app = 'gated';
let member: ClusterClient;
let manager: Manager;
let artifacts: ArtifactStore;
let artifactDir: string;
let repoDir: string;
let revisions = 0;

/** Publishes the files under `repoDir` as the GitSource's next artifact (what the source controller does after a fetch). */
async function publish(paths: readonly string[]): Promise<string> {
  const art = await artifacts.put(
    await Promise.all(
      paths.map(async (path) => ({
        path,
        kind: 'file' as const,
        content: await readFile(join(repoDir, path)),
      })),
    ),
  );
  revisions += 1;
  const revision = `main@sha1:${revisions.toString(16).padStart(40, 'a')}`;
  await writeStatus(
    hub,
    { apiVersion: 'sluice.dev/v1', kind: 'GitSource', plural: 'gitsources', namespace: ns, name: app },
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

async function apply(obj: Record<string, unknown>): Promise<void> {
  await hub.raw.applyRaw(obj as unknown as KubernetesObject, { fieldManager: 'sluice-test', force: true });
}

async function getDelivery(): Promise<Delivery> {
  return hub.raw.getRaw<Delivery & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name: app },
  });
}

async function waitFor(check: (d: Delivery) => boolean): Promise<Delivery> {
  let last: Delivery | undefined;
  try {
    return await eventually(async () => {
      last = await getDelivery();
      return check(last) ? last : undefined;
    }, 90_000);
  } catch (err) {
    throw new Error(`${(err as Error).message}; last status: ${JSON.stringify(last?.status, null, 1)}`);
  }
}

const ready = (d: Delivery) => d.status?.conditions?.find((c) => c.type === 'Ready');

async function exists(apiVersion: string, kind: string, name: string, namespace?: string): Promise<boolean> {
  try {
    await member.raw.getRaw({ apiVersion, kind, metadata: namespace ? { name, namespace } : { name } });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

const OLD_INGRESS = `apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: web
spec:
  rules:
    - host: web.example.com
      http:
        paths:
          - path: /
            backend:
              serviceName: web
              servicePort: 80
`;

beforeAll(async () => {
  member = testClient(MEMBER);
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  artifactDir = await mkdtemp(join(tmpdir(), 'sluice-gate-art-'));
  repoDir = await mkdtemp(join(tmpdir(), 'sluice-gate-repo-'));
  artifacts = new ArtifactStore(artifactDir);
  const members = new MemberClients();
  members.set(MEMBER, member);
  manager = new Manager({ client: hub, logger: silentLogger(), leaderElection: false });
  registerDeliveryControllers(manager, { members, artifacts, healthPollMs: 500, retryMs: 1000 });
  await manager.start();

  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name: app },
    spec: { url: 'http://127.0.0.1:1/repo.git', ref: { branch: 'main' }, interval: '1m' },
  });
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: ns, name: app },
    spec: { clusters: [{ name: MEMBER }] },
  });
  await writeStatus(
    hub,
    {
      apiVersion: 'sluice.dev/v1',
      kind: 'PlacementRule',
      plural: 'placementrules',
      namespace: ns,
      name: app,
    },
    { decisions: [{ clusterName: MEMBER }] },
  );
});

afterAll(async () => {
  await manager?.stop();
  if (member) {
    await deleteObject(member, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: target } });
    const inv = await member.raw.listRaw('v1', 'ConfigMap', {
      namespace: INVENTORY_NAMESPACE,
      labelSelector: inventorySelector({ namespace: ns, name: app }),
    });
    for (const cm of inv.items) await deleteObject(member, { ...cm, apiVersion: 'v1', kind: 'ConfigMap' });
  }
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  for (const dir of [artifactDir, repoDir]) if (dir) await rm(dir, { recursive: true, force: true });
});

describe('pre-sync API gate (issue 5 item 8)', () => {
  const files = ['deploy/namespace.yaml', 'deploy/config.yaml', 'deploy/ingress.yaml'];

  it('GIVEN a Delivery with an extensions/v1beta1 Ingress WHEN synced to kube-local 1.36 THEN the cluster is refused with file, kind, apiVersion, replacement and the fix command, and nothing is applied there', async () => {
    await mkdir(join(repoDir, 'deploy'), { recursive: true });
    await writeFile(join(repoDir, 'deploy/namespace.yaml'), yamlDocs(namespaceManifest(target)));
    await writeFile(join(repoDir, 'deploy/config.yaml'), yamlDocs(configMapManifest('settings', { a: 'b' })));
    await writeFile(join(repoDir, 'deploy/ingress.yaml'), OLD_INGRESS);
    const rev = await publish(files);
    await apply({
      apiVersion: 'sluice.dev/v1',
      kind: 'Delivery',
      metadata: { namespace: ns, name: app },
      spec: {
        sourceRef: { kind: 'GitSource', name: app },
        placementRef: { name: app },
        path: './deploy',
        targetNamespace: target,
        interval: '3s',
        prune: true,
      },
    });
    const d = await waitFor((x) => ready(x)?.reason === 'APINotServed');
    const cluster = d.status?.clusters?.find((c) => c.name === MEMBER);
    expect(cluster?.phase).toBe('Degraded');
    const message = cluster?.message ?? '';
    expect(message).toContain('deploy/ingress.yaml:1:1: Ingress web uses extensions/v1beta1');
    expect(message).toMatch(/not served by this cluster \(v1\.36[^)]*\); use networking\.k8s\.io\/v1/);
    expect(message).toContain('sluice fix deploy/ingress.yaml --target-version 1.36');
    expect(ready(d)?.message).toContain(`${MEMBER}: API versions not served, nothing applied`);
    expect(d.status?.lastAppliedRevision).toBeUndefined();
    expect(cluster?.revision).toBeUndefined();
    void rev;

    // Nothing on the member: not the Ingress, not the namespace and ConfigMap that were fine.
    expect(await exists('v1', 'Namespace', target)).toBe(false);
    expect(await exists('v1', 'ConfigMap', 'settings', target)).toBe(false);
    const inv = await member.raw.listRaw<V1ConfigMap & KubernetesObject>('v1', 'ConfigMap', {
      namespace: INVENTORY_NAMESPACE,
      labelSelector: inventorySelector({ namespace: ns, name: app }),
    });
    expect(inv.items).toHaveLength(0);

    const events = await eventually(async () => {
      const list = await hub.core.listNamespacedEvent({ namespace: ns });
      const hits = list.items.filter((e) => e.reason === 'APINotServed' && e.involvedObject.name === app);
      return hits.length ? hits : undefined;
    }, 30_000);
    expect(events[0]?.type).toBe('Warning');
    expect(events[0]?.message).toContain('extensions/v1beta1');
  });

  it('GIVEN the refused Delivery WHEN sluice fix --write rewrites the file in the repository THEN the next revision applies everything', async () => {
    const out = captureOutput();
    let code: number;
    try {
      code = await runCli(['fix', join(repoDir, 'deploy'), '--target-version', '1.36', '--write']);
    } finally {
      out.restore();
    }
    expect({ code, stderr: out.err() }).toEqual({ code: 1, stderr: '' }); // fixes written, nothing flagged
    const fixed = await readFile(join(repoDir, 'deploy/ingress.yaml'), 'utf8');
    expect(fixed).toContain('apiVersion: networking.k8s.io/v1');

    const rev = await publish(files);
    const d = await waitFor((x) => ready(x)?.status === 'True' && x.status?.lastAppliedRevision === rev);
    expect(d.status?.clusters).toEqual([
      expect.objectContaining({ name: MEMBER, phase: 'Healthy', revision: rev }),
    ]);
    expect(await exists('networking.k8s.io/v1', 'Ingress', 'web', target)).toBe(true);
    expect(await exists('v1', 'ConfigMap', 'settings', target)).toBe(true);
  });
});
