// `sluice diff delivery` as an operator runs it: the built CLI against the real kube-local hub
// and members, a real Git server with basic auth, and the real controller (as a process) having
// applied the Delivery first and kept running; the Delivery is then suspended so that the next
// commit is only ever seen by the diff. The diff fetches the source itself, renders, and
// dry-runs on each placed cluster; it must never write.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import type { Delivery } from '../../src/api/delivery.js';
import type { ClusterClient } from '../../src/kube/clients.js';
import { isNotFound } from '../../src/kube/errors.js';
import {
  eventually,
  kubeconfigPath,
  startCluster,
  stopCluster,
  testClient,
  uniqueName,
} from '../support/clusters.js';
import { ControllerProcess, SLUICE_CLI, controllerArgs } from '../support/controller-process.js';
import { commitFiles, createRepo, startGitServer, type GitServer } from '../support/git-server.js';
import {
  createNamespace,
  deleteObject,
  ensureCrds,
  kubeconfigSecret,
  registerCluster,
  secret,
} from '../support/sluice-objects.js';

const hub = testClient('hub');
const ns = uniqueName('cli-diff');
const appNs = uniqueName('diff-app');
const run = uniqueName('diff');
const MEMBERS = ['member-1', 'member-2'] as const;
const clusterName = (m: string) => `${run}-${m}`;
const members = new Map<string, ClusterClient>(MEMBERS.map((m) => [clusterName(m), testClient(m)]));
// Values that must never be printed, in clear or in base64.
const OLD_PASSWORD = `old-${uniqueName('pw')}`;
const NEW_PASSWORD = `new-${uniqueName('pw')}`;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');

let git: GitServer;
let controller: ControllerProcess | undefined;

/** Runs the built `sluice` CLI as a user would. */
function sluice(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [SLUICE_CLI, ...args, '--kubeconfig', kubeconfigPath('hub')],
      { timeout: 120_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}
const diff = (...extra: string[]) => sluice('diff', 'delivery', 'web', '-n', ns, ...extra);

const apply = (obj: Record<string, unknown>) =>
  hub.raw.applyRaw(obj as unknown as KubernetesObject, { fieldManager: 'sluice-test', force: true });

const doc = (obj: object) => stringify(obj);
const configMap = (name: string, data: Record<string, string>) =>
  doc({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: appNs }, data });
const secretDoc = (password: string) =>
  doc({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'creds', namespace: appNs },
    type: 'Opaque',
    stringData: { username: 'app', password },
  });

async function getDelivery(): Promise<Delivery> {
  return hub.raw.getRaw<Delivery & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name: 'web' },
  });
}

async function liveConfigMap(client: ClusterClient, name: string): Promise<V1ConfigMap | undefined> {
  try {
    return await client.raw.getRaw<V1ConfigMap & KubernetesObject>({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { namespace: appNs, name },
    });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** The section of `stdout` for one cluster: from its header to its summary line. */
function section(stdout: string, cluster: string): string {
  const start = stdout.indexOf(`=== ${cluster} ===\n`);
  if (start < 0) throw new Error(`no section for ${cluster} in:\n${stdout}`);
  const summary = stdout.indexOf(`\n${cluster}: `, start);
  return stdout.slice(start, stdout.indexOf('\n', summary + 1) + 1);
}

beforeAll(async () => {
  git = await startGitServer();
  const { sha } = await createRepo(git, 'app', {
    'deploy/namespace.yaml': doc({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: appNs } }),
    'deploy/settings.yaml': configMap('settings', { color: 'blue', size: 'L' }),
    'deploy/secret.yaml': secretDoc(OLD_PASSWORD),
    'deploy/old.yaml': configMap('old', { stale: 'yes' }),
  });
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  await secret(hub, ns, 'git-credentials', git.credentials());
  for (const m of MEMBERS) {
    await kubeconfigSecret(hub, ns, `kubeconfig-${m}`, m);
    await registerCluster(hub, clusterName(m), { namespace: ns, name: `kubeconfig-${m}` });
  }
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name: 'app' },
    spec: {
      url: git.url('app'),
      ref: { branch: 'main' },
      interval: '1m',
      secretRef: { name: 'git-credentials' },
    },
  });
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: ns, name: 'both' },
    spec: { clusters: MEMBERS.map((m) => ({ name: clusterName(m) })) },
  });
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name: 'web' },
    spec: {
      sourceRef: { kind: 'GitSource', name: 'app' },
      placementRef: { name: 'both' },
      path: './deploy',
      interval: '1m',
      prune: true,
    },
  });
  controller = new ControllerProcess(
    controllerArgs(kubeconfigPath('hub'), uniqueName('lease'), ['--cluster-probe-interval', '5s']),
  );
  // Applied by the real controller on both members before anything is diffed.
  const revision = `main@sha1:${sha}`;
  await eventually(async () => {
    const d = await getDelivery();
    const ready = d.status?.conditions?.find((c) => c.type === 'Ready');
    return (
      ready?.status === 'True' &&
      d.status?.lastAppliedRevision === revision &&
      d.status.clusters?.length === MEMBERS.length
    );
  }, 120_000).catch(async (err: Error) => {
    throw new Error(
      `${err.message}; status: ${JSON.stringify((await getDelivery()).status)}\n${controller?.tail()}`,
    );
  });
}, 180_000);

afterAll(async () => {
  await controller?.kill('SIGKILL');
  for (const m of MEMBERS) {
    await deleteObject(hub, {
      apiVersion: 'sluice.dev/v1',
      kind: 'Cluster',
      metadata: { name: clusterName(m) },
    });
    await deleteObject(testClient(m), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: appNs } });
  }
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await git?.stop();
});

describe('sluice diff delivery on real clusters', () => {
  it('GIVEN what runs matches Git THEN exit 0, every cluster unchanged, "No differences"', async () => {
    const { code, stdout, stderr } = await diff();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(
      new RegExp(
        `^deliveries\\.sluice\\.dev/web in ${ns}: revision main@sha1:[0-9a-f]{40}, path \\./deploy, 4 objects\n`,
      ),
    );
    for (const m of MEMBERS) {
      expect(section(stdout, clusterName(m))).toBe(
        `=== ${clusterName(m)} ===\n${clusterName(m)}: 0 created, 0 configured, 0 deleted, 4 unchanged\n`,
      );
    }
    expect(stdout.endsWith('\nNo differences on 2 cluster(s).\n')).toBe(true);
  });

  it('GIVEN a suspended Delivery and a new commit THEN each cluster shows created, configured (Secret masked), deleted; exit 1; nothing written', async () => {
    await apply({
      apiVersion: 'sluice.dev/v1',
      kind: 'Delivery',
      metadata: { namespace: ns, name: 'web' },
      spec: {
        sourceRef: { kind: 'GitSource', name: 'app' },
        placementRef: { name: 'both' },
        path: './deploy',
        interval: '1m',
        prune: true,
        suspend: true,
      },
    });
    const sha = await commitFiles(git, 'app', {
      add: {
        'deploy/settings.yaml': configMap('settings', { color: 'green', size: 'L' }),
        'deploy/secret.yaml': secretDoc(NEW_PASSWORD),
        'deploy/added.yaml': configMap('added', { fresh: 'yes' }),
      },
      remove: ['deploy/old.yaml'],
      message: 'green, new password, added, old removed',
    });

    const { code, stdout, stderr } = await diff();
    expect(stderr).toBe('');
    expect(code).toBe(1);
    expect(stdout).toContain(`revision main@sha1:${sha}, path ./deploy, 4 objects\n`);
    for (const m of MEMBERS) {
      const text = section(stdout, clusterName(m));
      expect(text).toContain(`~ configured ConfigMap ${appNs}/settings (deploy/settings.yaml:1:1)\n`);
      expect(text).toContain('    -  color: blue\n    +  color: green\n');
      expect(text).toContain(`~ configured Secret ${appNs}/creds (deploy/secret.yaml:1:1)\n`);
      expect(text).toContain('    -  password: "*** (before)"\n    +  password: "*** (after)"\n');
      expect(text).toContain('       username: "***"\n');
      expect(text).toContain(`+ created ConfigMap ${appNs}/added (deploy/added.yaml:1:1)\n`);
      expect(text).toContain('    +  fresh: yes\n');
      expect(text).toContain(`- deleted ConfigMap ${appNs}/old\n`);
      expect(text).not.toMatch(/managedFields|resourceVersion|creationTimestamp/);
      expect(text.endsWith(`${clusterName(m)}: 1 created, 2 configured, 1 deleted, 1 unchanged\n`)).toBe(
        true,
      );
    }
    for (const value of [OLD_PASSWORD, NEW_PASSWORD, b64(OLD_PASSWORD), b64(NEW_PASSWORD), b64('app')]) {
      expect(stdout).not.toContain(value);
    }
    // A diff writes nothing.
    for (const client of members.values()) {
      expect((await liveConfigMap(client, 'settings'))?.data?.color).toBe('blue');
      expect(await liveConfigMap(client, 'added')).toBeUndefined();
      expect(await liveConfigMap(client, 'old')).toBeDefined();
    }
  });

  it('GIVEN --cluster THEN only that cluster is shown; a cluster not placed is an error (exit 2)', async () => {
    const one = clusterName('member-2');
    const { code, stdout } = await diff('--cluster', one);
    expect(code).toBe(1);
    expect(stdout).toContain(`=== ${one} ===\n`);
    expect(stdout).not.toContain(`=== ${clusterName('member-1')} ===`);
    const other = await diff('--cluster', 'nowhere');
    expect(other.code).toBe(2);
    expect(other.stderr).toBe(
      `sluice diff: cluster nowhere is not placed for deliveries.sluice.dev/web (placed: ${clusterName('member-1')}, ${clusterName('member-2')})\n`,
    );
  });

  it('GIVEN one member unreachable THEN the other is still shown, the error is printed, exit 2', async () => {
    await stopCluster('member-2');
    try {
      const { code, stdout, stderr } = await diff('--timeout', '30s');
      expect(code).toBe(2);
      expect(section(stdout, clusterName('member-1'))).toContain(
        '1 created, 2 configured, 1 deleted, 1 unchanged',
      );
      expect(stdout).not.toContain(`=== ${clusterName('member-2')} ===`);
      expect(stderr).toMatch(
        new RegExp(
          `^sluice diff: cluster ${clusterName('member-2')}: .*(ECONNREFUSED|connect|unreachable)`,
          'im',
        ),
      );
    } finally {
      await startCluster('member-2');
    }
  });

  it('GIVEN a commit that does not render THEN file:line errors on stderr, nothing on stdout, exit 2', async () => {
    await commitFiles(git, 'app', {
      add: { 'deploy/broken.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: [unclosed\n' },
      message: 'broken',
    });
    const { code, stdout, stderr } = await diff();
    expect(code).toBe(2);
    expect(stdout).toBe('');
    expect(stderr).toMatch(
      /^sluice diff: revision main@sha1:[0-9a-f]{40}, path \.\/deploy does not render:\n {2}deploy\/broken\.yaml:\d+:\d+: /,
    );
  });
});
