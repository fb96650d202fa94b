import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { silentLogger } from '../../src/log.js';
import { Informer } from '../../src/kube/informer.js';
import { Manager } from '../../src/kube/manager.js';
import { HttpServer } from '../../src/server/http.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';

describe('Manager with leader election', () => {
  const hub = testClient('hub');
  const ns = uniqueName('manager');
  const lease = uniqueName('mgr-lease');
  const managers: Manager[] = [];
  let server: HttpServer | undefined;

  beforeAll(async () => {
    await hub.core.createNamespace({ body: { metadata: { name: ns } } });
  });

  afterAll(async () => {
    await server?.close();
    await Promise.all(managers.map((m) => m.stop()));
    await hub.coordination
      .deleteNamespacedLease({ name: lease, namespace: 'default' })
      .catch(() => undefined);
    await hub.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  /** A replica: its own client, informer, manager, and a log of the keys it reconciled. */
  function replica(identity: string) {
    const client = testClient('hub');
    const reconciled: string[] = [];
    const manager = new Manager({
      client,
      logger: silentLogger(),
      registry: new Registry(),
      leaderElection: {
        namespace: 'default',
        name: lease,
        identity,
        leaseDurationSeconds: 3,
        renewDeadlineSeconds: 2,
        retryPeriodSeconds: 0.25,
      },
    });
    const informer = new Informer<V1ConfigMap>(client, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      namespace: ns,
    });
    manager.addController({
      name: 'configmaps',
      reconciler: {
        reconcile: async (key) => {
          reconciled.push(key);
        },
      },
      watches: [{ informer }],
    });
    managers.push(manager);
    return { manager, reconciled };
  }

  it('GIVEN two replicas THEN both are ready, only the leader reconciles, and the standby takes over (with every key) when the leader stops', async () => {
    await hub.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'one' }, data: { v: '1' } },
    });
    const a = replica('a');
    const b = replica('b');
    await a.manager.start();
    await eventually(async () => a.manager.isLeader, 30_000);
    await b.manager.start();

    server = new HttpServer({ registry: a.manager.registry, ready: () => b.manager.ready() });
    const port = await server.listen('127.0.0.1:0');
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    expect(a.manager.ready() && b.manager.ready()).toBe(true);

    await eventually(async () => a.reconciled.includes(`${ns}/one`));
    await hub.core.createNamespacedConfigMap({
      namespace: ns,
      body: { metadata: { name: 'two' }, data: { v: '1' } },
    });
    await eventually(async () => a.reconciled.includes(`${ns}/two`));
    expect(b.manager.isLeader).toBe(false);
    expect(b.reconciled).toEqual([]);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain(
      'sluice_reconcile_total{controller="configmaps",result="success"}',
    );

    await a.manager.stop();
    expect(a.manager.ready()).toBe(false);
    await eventually(async () => b.manager.isLeader, 30_000);
    // The standby queued every key it saw while waiting: it reconciles them all on taking over.
    await eventually(
      async () => b.reconciled.includes(`${ns}/one`) && b.reconciled.includes(`${ns}/two`),
      30_000,
    );
  });
});
