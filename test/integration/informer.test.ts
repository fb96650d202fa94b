import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1ConfigMap, V1Namespace } from '@kubernetes/client-node';
import { captureLogs } from '../support/capture-logs.js';
import type { ClusterClient } from '../../src/kube/clients.js';
import { Informer, objectKey } from '../../src/kube/informer.js';
import { eventually, startCluster, stopCluster, testClient, uniqueName } from '../support/clusters.js';

type Seen = Array<[string, string, string | undefined]>;

/** An informer whose events are recorded as [event, key, data.v]. */
function recorded(informer: Informer<V1ConfigMap>): Seen {
  const seen: Seen = [];
  informer
    .onAdd((o) => seen.push(['add', objectKey(o), o.data?.v]))
    .onUpdate((o) => seen.push(['update', objectKey(o), o.data?.v]))
    .onDelete((o) => seen.push(['delete', objectKey(o), o.data?.v]));
  return seen;
}

const logLines = () => captureLogs();

async function createNamespace(
  client: ClusterClient,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  await client.core.createNamespace({ body: { metadata: { name, labels } } });
}

// Every namespace gets a `kube-root-ca.crt` ConfigMap: informers select the test's own by label.
const LABEL = 'sluice.dev/test';
const SELECTOR = `${LABEL}=informer`;
const configMap = (namespace: string, name: string, v: string): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace, labels: { [LABEL]: 'informer' } },
  data: { v },
});

describe('Informer on the hub', () => {
  const hub = testClient('hub');
  const ns = uniqueName('informer');
  const informers: Array<{ stop(): Promise<void> }> = [];

  beforeAll(async () => {
    await createNamespace(hub, ns);
  });

  afterAll(async () => {
    await Promise.all(informers.map((i) => i.stop()));
    await hub.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it('GIVEN existing ConfigMaps WHEN started THEN they are listed as adds; creates, updates and deletes follow', async () => {
    await hub.core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'before', '0') });
    const informer = new Informer<V1ConfigMap>(hub, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
      labelSelector: SELECTOR,
    });
    informers.push(informer);
    const seen = recorded(informer);

    await informer.start();
    expect(informer.hasSynced).toBe(true);
    expect(seen).toEqual([['add', `${ns}/before`, '0']]);
    // List items of built-in kinds carry no apiVersion/kind: the cache fills them in.
    expect(informer.get(ns, 'before')).toMatchObject({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      data: { v: '0' },
    });
    // Raw JSON, not client-node models: timestamps stay strings.
    expect(typeof informer.get(`${ns}/before`)?.metadata?.creationTimestamp).toBe('string');

    await hub.core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'web', '1') });
    await eventually(async () => informer.get(ns, 'web')?.data?.v === '1');
    await hub.core.replaceNamespacedConfigMap({
      name: 'web',
      namespace: ns,
      body: configMap(ns, 'web', '2'),
    });
    await eventually(async () => informer.get(ns, 'web')?.data?.v === '2');
    await hub.core.deleteNamespacedConfigMap({ name: 'web', namespace: ns });
    await eventually(async () => informer.get(ns, 'web') === undefined);

    expect(seen).toEqual([
      ['add', `${ns}/before`, '0'],
      ['add', `${ns}/web`, '1'],
      ['update', `${ns}/web`, '2'],
      ['delete', `${ns}/web`, '2'],
    ]);
    expect(informer.list().map(objectKey)).toEqual([`${ns}/before`]);
  });

  it('GIVEN a cluster-scoped kind and a label selector THEN keys are bare names and only matching objects are cached', async () => {
    const label = uniqueName('sel');
    const informer = new Informer<V1Namespace>(hub, {
      apiVersion: 'v1',
      kind: 'Namespace',
      labelSelector: `sluice-test=${label}`,
    });
    informers.push(informer);
    const added: string[] = [];
    informer.onAdd((o) => added.push(objectKey(o)));
    await informer.start();
    expect(informer.list()).toEqual([]);

    const matching = uniqueName('inf-ns');
    await createNamespace(hub, matching, { 'sluice-test': label });
    await createNamespace(hub, `${matching}-other`);
    try {
      await eventually(async () => informer.get(matching) !== undefined);
      expect(added).toEqual([matching]);
      expect(informer.get(undefined, matching)?.metadata?.name).toBe(matching);
      expect(informer.get(`${matching}-other`)).toBeUndefined();
    } finally {
      await hub.core.deleteNamespace({ name: matching }).catch(() => undefined);
      await hub.core.deleteNamespace({ name: `${matching}-other` }).catch(() => undefined);
    }
  });

  it('GIVEN short resync and staleness periods THEN relists emit nothing for unchanged objects, the watch restarts, and changes are still seen once', async () => {
    const { lines, logger } = logLines();
    await hub.core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'quiet', 'q') });
    const informer = new Informer<V1ConfigMap>(
      hub,
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: SELECTOR },
      { logger, resyncMs: 800, staleAfterMs: 600, backoffInitialMs: 50, backoffMaxMs: 200 },
    );
    informers.push(informer);
    const seen = recorded(informer);
    await informer.start();

    await eventually(
      async () =>
        lines.filter((l) => l.message === 'listed').length >= 3 && lines.some((l) => l.why === 'stale'),
      30_000,
    );
    expect(seen.filter(([, key]) => key === `${ns}/quiet`)).toEqual([['add', `${ns}/quiet`, 'q']]);

    await hub.core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'late', 'l') });
    await eventually(async () => informer.get(ns, 'late') !== undefined);
    // Let another resync pass: the object it lists again must not be emitted twice.
    const listed = lines.filter((l) => l.message === 'listed').length;
    await eventually(async () => lines.filter((l) => l.message === 'listed').length > listed, 30_000);
    expect(seen.filter(([, key]) => key === `${ns}/late`)).toEqual([['add', `${ns}/late`, 'l']]);
  });

  it('GIVEN a kind the server does not serve yet THEN start() keeps retrying instead of failing, and stop() ends the wait', async () => {
    const informer = new Informer(
      hub,
      { apiVersion: 'nothing.sluice.dev/v1', kind: 'Nothing' },
      { backoffInitialMs: 50, backoffMaxMs: 100 },
    );
    const started = informer.start();
    await new Promise((r) => setTimeout(r, 500));
    expect(informer.hasSynced).toBe(false);
    await informer.stop();
    await expect(started).rejects.toThrow(/stopped before it synced/);
  });
});

describe('Informer on a member whose API server restarts', () => {
  const member = 'member-3';
  const client = testClient(member);
  const ns = uniqueName('restart');

  beforeAll(async () => {
    await createNamespace(client, ns);
  });

  afterAll(async () => {
    await client.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  it('GIVEN a synced informer WHEN member-3 stops and starts again THEN a change made right after the restart is observed', async () => {
    const { lines, logger } = logLines();
    const informer = new Informer<V1ConfigMap>(
      client,
      { apiVersion: 'v1', kind: 'ConfigMap', namespace: ns, labelSelector: SELECTOR },
      { logger, backoffInitialMs: 200, backoffMaxMs: 2000, staleAfterMs: 30_000 },
    );
    const seen = recorded(informer);
    try {
      await informer.start();
      await client.core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'a', '1') });
      await eventually(async () => informer.get(ns, 'a')?.data?.v === '1');

      await stopCluster(member);
      // The watch must notice the API server went away (it then retries with backoff).
      await eventually(
        async () =>
          lines.some(
            (l) => l.message === 'watch failed; restarting' || l.message === 'watch ended; restarting',
          ),
        60_000,
      );
      await startCluster(member);

      await client.core.replaceNamespacedConfigMap({
        name: 'a',
        namespace: ns,
        body: configMap(ns, 'a', '2'),
      });
      await client.core.createNamespacedConfigMap({ namespace: ns, body: configMap(ns, 'b', '1') });

      await eventually(
        async () => informer.get(ns, 'a')?.data?.v === '2' && informer.get(ns, 'b') !== undefined,
        90_000,
      );
      expect(seen).toContainEqual(['update', `${ns}/a`, '2']);
      expect(seen).toContainEqual(['add', `${ns}/b`, '1']);
    } finally {
      await informer.stop();
    }
  });
});
