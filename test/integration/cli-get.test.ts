import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { writeStatus } from '../../src/kube/status.js';
import { eventually, kubeconfigPath, testClient, uniqueName } from '../support/clusters.js';
import { SLUICE_CLI } from '../support/controller-process.js';
import { createNamespace, deleteObject, ensureCrds } from '../support/sluice-objects.js';

const hub = testClient('hub');
const ns = uniqueName('cli-get');
const cluster = uniqueName('cli-cluster');
const KUBECONFIG = () => kubeconfigPath('hub');

/** Runs the built `sluice` CLI as a user would. */
function sluice(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [SLUICE_CLI, ...args, '--kubeconfig', KUBECONFIG()],
      { timeout: 60_000 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

const apply = (obj: Record<string, unknown>) =>
  hub.raw.applyRaw(obj as unknown as KubernetesObject, { fieldManager: 'sluice-test', force: true });

const condition = (type: string, status: string, reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-01-01T00:00:00Z',
});

beforeAll(async () => {
  if (!existsSync(SLUICE_CLI))
    throw new Error(`${SLUICE_CLI} is missing: run "npm run build" (make test does)`);
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'Cluster',
    metadata: { name: cluster, labels: { env: 'prod' } },
    spec: { inCluster: true },
  });
  // As the Cluster controller would have written it: the CLI only reads.
  await writeStatus(
    hub,
    { apiVersion: 'sluice.dev/v1', plural: 'clusters', name: cluster },
    {
      version: 'v1.36.3',
      conditions: [condition('Available', 'True', 'ClusterAvailable', 'Kubernetes v1.36.3, 1 ready node(s)')],
    },
  );
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name: 'app' },
    spec: { url: 'http://127.0.0.1:1/app.git', ref: { branch: 'main' } },
  });
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name: 'frozen' },
    spec: { url: 'http://127.0.0.1:1/app.git', ref: { branch: 'main' }, suspend: true },
  });
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'PlacementRule',
    metadata: { namespace: ns, name: 'prod' },
    spec: { clusterSelector: { matchLabels: { env: 'prod' } } },
  });
  await writeStatus(
    hub,
    { apiVersion: 'sluice.dev/v1', plural: 'placementrules', namespace: ns, name: 'prod' },
    {
      decisions: [{ clusterName: cluster, reason: 'matches clusterSelector' }],
      conditions: [condition('Ready', 'True', 'Decided', '1 of 1 cluster selected')],
    },
  );
  await apply({
    apiVersion: 'sluice.dev/v1',
    kind: 'Delivery',
    metadata: { namespace: ns, name: 'web' },
    spec: { sourceRef: { name: 'app' }, placementRef: { name: 'prod' }, path: './deploy' },
  });
});

afterAll(async () => {
  await deleteObject(hub, { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: { name: cluster } });
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

describe('sluice get on a real hub', () => {
  it('GIVEN a Cluster THEN "get clusters" prints a table with AVAILABLE, VERSION and the message', async () => {
    const { code, stdout, stderr } = await sluice('get', 'clusters');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+AVAILABLE\s+VERSION\s+AGE\s+MESSAGE$/);
    const row = lines.find((l) => l.startsWith(`${cluster} `));
    expect(row).toMatch(
      new RegExp(
        `^${cluster}\\s+True\\s+v1\\.36\\.3\\s+\\d+s\\s+Kubernetes v1\\.36\\.3, 1 ready node\\(s\\)$`,
      ),
    );
  });

  it('GIVEN -o json with a NAME THEN the object itself, without managedFields', async () => {
    const { code, stdout } = await sluice('get', 'clusters', cluster, '-o', 'json');
    expect(code).toBe(0);
    const obj = JSON.parse(stdout) as KubernetesObject & { status?: { version?: string } };
    expect(obj.kind).toBe('Cluster');
    expect(obj.metadata?.name).toBe(cluster);
    expect(obj.metadata?.managedFields).toBeUndefined();
    expect(obj.status?.version).toBe('v1.36.3');
  });

  it('GIVEN placements in a namespace THEN the table and the YAML List agree', async () => {
    const table = await sluice('get', 'placements', '-n', ns);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+READY\s+DECISIONS\s+CLUSTERS\s+AGE\s+MESSAGE$/);
    expect(table.stdout.split('\n')[1]).toMatch(
      new RegExp(`^prod\\s+True\\s+1\\s+${cluster}\\s+\\d+s\\s+1 of 1 cluster selected$`),
    );
    const yaml = await sluice('get', 'placements', '-n', ns, '-o', 'yaml');
    expect(yaml.code).toBe(0);
    const list = parse(yaml.stdout) as { kind: string; items: KubernetesObject[] };
    expect(list.kind).toBe('List');
    expect(list.items.map((i) => i.metadata?.name)).toEqual(['prod']);
  });

  it('GIVEN sources and deliveries before any controller ran THEN READY Unknown, and -A adds NAMESPACE', async () => {
    const sources = await sluice('get', 'sources', '-A');
    expect(sources.code).toBe(0);
    expect(sources.stdout.split('\n')[0]).toMatch(
      /^NAMESPACE\s+NAME\s+READY\s+REVISION\s+SUSPENDED\s+AGE\s+MESSAGE$/,
    );
    expect(sources.stdout).toMatch(new RegExp(`^${ns}\\s+app\\s+Unknown\\s+False\\s+\\d+s$`, 'm'));
    expect(sources.stdout).toMatch(new RegExp(`^${ns}\\s+frozen\\s+Unknown\\s+True\\s+\\d+s$`, 'm'));
    const deliveries = await sluice('get', 'deliveries', '-n', ns);
    expect(deliveries.code).toBe(0);
    expect(deliveries.stdout).toMatch(/^web\s+Unknown\s+0\/0\s+False\s+\d+s$/m);
  });

  it('GIVEN an empty namespace THEN "No … found" on stderr, exit 0', async () => {
    const { code, stdout, stderr } = await sluice('get', 'deliveries', '-n', `${ns}-empty`);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toBe(`No deliveries.sluice.dev found in ${ns}-empty namespace.\n`);
  });

  it('GIVEN a name that does not exist THEN exit 1 naming the resource and the namespace', async () => {
    const { code, stderr } = await sluice('get', 'deliveries', 'x', '-n', ns);
    expect(code).toBe(1);
    expect(stderr).toBe(`sluice get: deliveries.sluice.dev "x" not found in namespace ${ns}\n`);
  });

  it('GIVEN an unknown type or output format THEN exit 2 with the usage', async () => {
    const type = await sluice('get', 'pods');
    expect(type.code).toBe(2);
    expect(type.stderr).toContain(
      'unknown resource type "pods": use one of sources, clusters, placements, deliveries',
    );
    const output = await sluice('get', 'clusters', '-o', 'wide');
    expect(output.code).toBe(2);
    expect(output.stderr).toContain('-o must be one of table, json, yaml, got "wide"');
  });
});

describe('sluice reconcile on a real hub', () => {
  const annotation = async (kind: string, name: string): Promise<string | undefined> => {
    const obj = await hub.raw.getRaw({
      apiVersion: 'sluice.dev/v1',
      kind,
      metadata: { namespace: ns, name },
    });
    return obj.metadata?.annotations?.['sluice.dev/reconcile-requested-at'];
  };

  it('GIVEN a source THEN the annotation is set to the request time it prints, and a second request changes it', async () => {
    const first = await sluice('reconcile', 'source', 'app', '-n', ns);
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const at = /^gitsources\.sluice\.dev\/app reconcile requested at (\S+)\n$/.exec(first.stdout)?.[1];
    expect(at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(await annotation('GitSource', 'app')).toBe(at);
    const second = await sluice('reconcile', 'source', 'app', '-n', ns);
    expect(second.code).toBe(0);
    expect(await annotation('GitSource', 'app')).not.toBe(at);
  });

  /** Plays the GitSource controller: once the request is seen, records it as handled with `ready`. */
  async function handleRequest(name: string, ready: ReturnType<typeof condition>): Promise<string> {
    const at = await eventually(() => annotation('GitSource', name), 30_000, 100);
    await writeStatus(
      hub,
      { apiVersion: 'sluice.dev/v1', plural: 'gitsources', namespace: ns, name },
      { lastHandledReconcileAt: at, conditions: [ready] },
    );
    return at;
  }

  it('GIVEN --wait WHEN the controller handles the request and is Ready THEN exit 0 with the Ready message', async () => {
    await apply({
      apiVersion: 'sluice.dev/v1',
      kind: 'GitSource',
      metadata: { namespace: ns, name: 'waited' },
      spec: { url: 'http://127.0.0.1:1/app.git', ref: { branch: 'main' } },
    });
    const run = sluice('reconcile', 'source', 'waited', '-n', ns, '--wait', '--timeout', '60s');
    await handleRequest(
      'waited',
      condition('Ready', 'True', 'Succeeded', 'stored artifact for main@sha1:4f1c'),
    );
    const { code, stdout, stderr } = await run;
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /^gitsources\.sluice\.dev\/waited reconcile requested at \S+\ngitsources\.sluice\.dev\/waited reconciled: stored artifact for main@sha1:4f1c\n$/,
    );
  });

  it('GIVEN --wait WHEN the controller handles the request but is not Ready THEN exit 1 with the reason', async () => {
    await apply({
      apiVersion: 'sluice.dev/v1',
      kind: 'GitSource',
      metadata: { namespace: ns, name: 'failing' },
      spec: { url: 'http://127.0.0.1:1/app.git', ref: { branch: 'main' } },
    });
    const run = sluice('reconcile', 'source', 'failing', '-n', ns, '--wait', '--timeout', '60s');
    await handleRequest('failing', condition('Ready', 'False', 'AuthFailed', 'authentication required'));
    const { code, stderr } = await run;
    expect(code).toBe(1);
    expect(stderr).toBe(
      'sluice reconcile: gitsources.sluice.dev/failing reconciled but not Ready: AuthFailed: authentication required\n',
    );
  });

  it('GIVEN --wait and no controller to handle it THEN exit 1 after --timeout, saying what it waited for', async () => {
    const { code, stdout, stderr } = await sluice(
      'reconcile',
      'delivery',
      'web',
      '-n',
      ns,
      '--wait',
      '--timeout',
      '1s',
    );
    expect(code).toBe(1);
    expect(stdout).toMatch(/^deliveries\.sluice\.dev\/web reconcile requested at /);
    expect(stderr).toMatch(
      /^sluice reconcile: timed out after 1s waiting for the controller to handle the request: status\.lastHandledReconcileAt is not set, want "[^"]+"\n$/,
    );
  });

  it('GIVEN a suspended source THEN exit 1 and no annotation', async () => {
    const { code, stderr } = await sluice('reconcile', 'source', 'frozen', '-n', ns);
    expect(code).toBe(1);
    expect(stderr).toBe(
      `sluice reconcile: gitsources.sluice.dev/frozen in namespace ${ns} is suspended: resume it (spec.suspend: false) first\n`,
    );
    expect(await annotation('GitSource', 'frozen')).toBeUndefined();
  });

  it('GIVEN a name that does not exist THEN exit 1 naming it', async () => {
    const { code, stderr } = await sluice('reconcile', 'delivery', 'nope', '-n', ns);
    expect(code).toBe(1);
    expect(stderr).toBe(`sluice reconcile: deliveries.sluice.dev "nope" not found in namespace ${ns}\n`);
  });
});
