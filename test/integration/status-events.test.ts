import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KubeConfig, type KubernetesObject, type V1CustomResourceDefinition } from '@kubernetes/client-node';
import { captureLogs } from '../support/capture-logs.js';
import { clusterClient, type ClusterClient } from '../../src/kube/clients.js';
import { markReady, markReconciling, type ConditionedStatus } from '../../src/kube/conditions.js';
import { KubeError, isNotFound } from '../../src/kube/errors.js';
import { EventRecorder } from '../../src/kube/events.js';
import { Informer } from '../../src/kube/informer.js';
import { writeStatus } from '../../src/kube/status.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';

const GROUP = 'test.sluice.dev';
const API_VERSION = `${GROUP}/v1`;

/** A minimal CRD with the status subresource; scope decides namespaced or cluster. */
function crd(plural: string, kind: string, scope: 'Namespaced' | 'Cluster'): V1CustomResourceDefinition {
  // The typed model calls the field `x_kubernetes_preserve_unknown_fields`; its serializer drops
  // the JSON spelling `x-kubernetes-preserve-unknown-fields`, and every status field gets pruned.
  const open = { type: 'object', x_kubernetes_preserve_unknown_fields: true };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope,
      names: { plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', properties: { spec: open, status: open } } },
        },
      ],
    },
  };
}

async function installCrd(client: ClusterClient, def: V1CustomResourceDefinition): Promise<void> {
  const name = def.metadata!.name!;
  // A leftover from an interrupted run (possibly still terminating) would shadow this definition.
  await client.apiextensions.deleteCustomResourceDefinition({ name }).catch(() => undefined);
  await eventually(
    async () =>
      client.apiextensions.readCustomResourceDefinition({ name }).then(
        () => false,
        (err: unknown) => isNotFound(err),
      ),
    120_000,
  );
  await client.apiextensions.createCustomResourceDefinition({ body: def });
  await eventually(async () => {
    const got = await client.apiextensions.readCustomResourceDefinition({ name });
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  }, 60_000);
}

const capture = () => captureLogs();

type Widget = KubernetesObject & { spec?: Record<string, unknown>; status?: Record<string, unknown> };

describe('writeStatus and EventRecorder on a test CRD', () => {
  const hub = testClient('hub');
  const ns = uniqueName('status');
  const widgets = crd('widgets', 'Widget', 'Namespaced');
  const gadgets = crd('gadgets', 'Gadget', 'Cluster');
  let informer: Informer<Widget>;
  const updates: Widget[] = [];

  beforeAll(async () => {
    await hub.core.createNamespace({ body: { metadata: { name: ns } } });
    await installCrd(hub, widgets);
    await installCrd(hub, gadgets);
    // Counts writes: every status write is one watch event (no plural given: found by discovery).
    informer = new Informer<Widget>(
      hub,
      { apiVersion: API_VERSION, kind: 'Widget', namespace: ns },
      { backoffInitialMs: 100, backoffMaxMs: 1000 },
    );
    informer.onUpdate((o) => updates.push(o));
    await informer.start();
  });

  afterAll(async () => {
    await informer?.stop();
    await hub.core.deleteNamespace({ name: ns }).catch(() => undefined);
    for (const def of [widgets, gadgets]) {
      await hub.apiextensions
        .deleteCustomResourceDefinition({ name: def.metadata!.name! })
        .catch(() => undefined);
    }
  });

  async function createWidget(name: string): Promise<Widget> {
    return (await hub.custom.createNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: ns,
      plural: 'widgets',
      body: { apiVersion: API_VERSION, kind: 'Widget', metadata: { name, namespace: ns }, spec: { size: 1 } },
    })) as Widget;
  }

  async function readWidget(name: string): Promise<Widget> {
    return (await hub.custom.getNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: ns,
      plural: 'widgets',
      name,
    })) as Widget;
  }

  it('GIVEN a new status THEN it is written once; GIVEN the same status again THEN nothing is written', async () => {
    const w = await createWidget(uniqueName('w'));
    const name = w.metadata!.name!;
    await eventually(async () => informer.get(ns, name) !== undefined);
    const ref = { apiVersion: API_VERSION, kind: 'Widget', namespace: ns, name };
    const status = markReconciling<ConditionedStatus & { artifact?: string }>(
      { artifact: 'main@sha1:abc' },
      1,
      'Progressing',
      'applying',
    );

    expect(await writeStatus(hub, ref, status)).toBe(true);
    const after = await readWidget(name);
    expect(after.status).toEqual(status);
    await eventually(async () => updates.filter((u) => u.metadata?.name === name).length === 1);

    expect(await writeStatus(hub, ref, structuredClone(status))).toBe(false);
    expect((await readWidget(name)).metadata?.resourceVersion).toBe(after.metadata?.resourceVersion);

    // A real change, which also drops a field: one more write, and the field is gone.
    const ready = markReady<ConditionedStatus>(
      { observedGeneration: 1, conditions: status.conditions },
      1,
      'Succeeded',
      'applied',
    );
    expect(await writeStatus(hub, { ...ref, kind: undefined, plural: 'widgets' }, ready)).toBe(true);
    const final = await readWidget(name);
    expect(final.status).toEqual(ready);
    expect(final.status).not.toHaveProperty('artifact');
    // The spec is untouched by a status write.
    expect(final.spec).toEqual({ size: 1 });
    // Let any other event arrive: exactly one per write.
    await eventually(
      async () => informer.get(ns, name)?.metadata?.resourceVersion === final.metadata?.resourceVersion,
    );
    expect(updates.filter((u) => u.metadata?.name === name)).toHaveLength(2);
  });

  it('GIVEN a cluster-scoped kind THEN its status is written through the cluster path', async () => {
    const name = uniqueName('g');
    await hub.custom.createClusterCustomObject({
      group: GROUP,
      version: 'v1',
      plural: 'gadgets',
      body: { apiVersion: API_VERSION, kind: 'Gadget', metadata: { name }, spec: {} },
    });
    try {
      const ref = { apiVersion: API_VERSION, kind: 'Gadget', name };
      expect(await writeStatus(hub, ref, { phase: 'Ready' })).toBe(true);
      expect(await writeStatus(hub, ref, { phase: 'Ready' })).toBe(false);
      const got = (await hub.custom.getClusterCustomObject({
        group: GROUP,
        version: 'v1',
        plural: 'gadgets',
        name,
      })) as Widget;
      expect(got.status).toEqual({ phase: 'Ready' });
    } finally {
      await hub.custom
        .deleteClusterCustomObject({ group: GROUP, version: 'v1', plural: 'gadgets', name })
        .catch(() => undefined);
    }
  });

  it('GIVEN an object that does not exist THEN writeStatus throws a NotFound KubeError naming it', async () => {
    const ref = { apiVersion: API_VERSION, kind: 'Widget', namespace: ns, name: 'missing' };
    const err = await writeStatus(hub, ref, { a: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect(isNotFound(err)).toBe(true);
    expect((err as Error).message).toMatch(
      new RegExp(`^write status of ${API_VERSION} Widget ${ns}/missing on hub: `),
    );
    expect((err as Error).message).not.toMatch(/Headers|authorization/i);
  });

  it('GIVEN a kind the server does not serve THEN writeStatus fails with a NotFound naming the kind', async () => {
    const err = await writeStatus(
      hub,
      { apiVersion: API_VERSION, kind: 'Nope', namespace: ns, name: 'x' },
      {},
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KubeError);
    expect((err as Error).message).toMatch(/Nope/);
  });

  async function eventsFor(name: string, namespace = ns) {
    const list = await hub.core.listNamespacedEvent({
      namespace,
      fieldSelector: `involvedObject.name=${name}`,
    });
    return list.items;
  }

  it('GIVEN the same event three times THEN one Event has count 3; another message makes another Event', async () => {
    const w = await createWidget(uniqueName('ev'));
    const name = w.metadata!.name!;
    const recorder = new EventRecorder(hub);
    await recorder.warning(w, 'AnalysisFailed', 'error rate 7.1% > 5%');
    await recorder.warning(w, 'AnalysisFailed', 'error rate 7.1% > 5%');
    await recorder.warning(w, 'AnalysisFailed', 'error rate 7.1% > 5%');
    await recorder.normal(w, 'Promoted', 'canary promoted to 100%');

    const events = await eventsFor(name);
    expect(events).toHaveLength(2);
    const failed = events.find((e) => e.reason === 'AnalysisFailed')!;
    expect(failed).toMatchObject({
      type: 'Warning',
      message: 'error rate 7.1% > 5%',
      count: 3,
      source: { component: 'sluice-controller' },
      reportingComponent: 'sluice-controller',
      involvedObject: { apiVersion: API_VERSION, kind: 'Widget', name, namespace: ns, uid: w.metadata!.uid },
    });
    expect(new Date(failed.lastTimestamp!).getTime()).toBeGreaterThanOrEqual(
      new Date(failed.firstTimestamp!).getTime(),
    );
    expect(events.find((e) => e.reason === 'Promoted')).toMatchObject({ type: 'Normal', count: 1 });

    // A new recorder (a restarted controller) finds the same Event and keeps counting.
    await new EventRecorder(hub).warning(w, 'AnalysisFailed', 'error rate 7.1% > 5%');
    const again = await eventsFor(name);
    expect(again).toHaveLength(2);
    expect(again.find((e) => e.reason === 'AnalysisFailed')?.count).toBe(4);
  });

  it('GIVEN concurrent repeats THEN they still aggregate into one Event with the full count', async () => {
    const w = await createWidget(uniqueName('evc'));
    const recorder = new EventRecorder(hub);
    await Promise.all(Array.from({ length: 5 }, () => recorder.normal(w, 'Progressing', 'step 1 of 4')));
    const events = await eventsFor(w.metadata!.name!);
    expect(events).toHaveLength(1);
    expect(events[0]?.count).toBe(5);
  });

  it('GIVEN a cluster-scoped object THEN its Event goes to the default namespace', async () => {
    const gadget = {
      apiVersion: API_VERSION,
      kind: 'Gadget',
      metadata: { name: uniqueName('gev'), uid: 'u-1' },
    };
    await new EventRecorder(hub).normal(gadget, 'Placed', 'placed on 2 clusters');
    const events = await eventsFor(gadget.metadata.name, 'default');
    expect(events).toHaveLength(1);
    expect(events[0]?.involvedObject.namespace ?? '').toBe('');
    for (const e of events)
      await hub.core
        .deleteNamespacedEvent({ name: e.metadata!.name!, namespace: 'default' })
        .catch(() => undefined);
  });

  it('GIVEN an unreachable API server THEN record neither throws nor rejects, and logs one warning', async () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'nowhere', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
      users: [{ name: 'nowhere-user', token: 'not-a-real-token' }],
      contexts: [{ name: 'nowhere', cluster: 'nowhere', user: 'nowhere-user' }],
      currentContext: 'nowhere',
    });
    const { lines, logger } = capture();
    const recorder = new EventRecorder(clusterClient('nowhere', kc), { logger });
    const obj = { apiVersion: API_VERSION, kind: 'Widget', metadata: { name: 'w', namespace: ns } };
    await expect(recorder.warning(obj, 'Failed', 'x')).resolves.toBeUndefined();
    expect(lines.filter((l) => l.message === 'event not recorded')).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', errorReason: 'Unreachable' });
    expect(JSON.stringify(lines)).not.toContain('not-a-real-token');
  });
});
