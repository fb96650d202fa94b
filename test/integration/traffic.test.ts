/**
 * The traffic routers against a real API server: every router sets 10/90, 50/50 and 0/100 and
 * reads them back, writes nothing when already there, reports a broken route in `verify`, and
 * keeps its weights when the Delivery re-applies the same object from Git through its real
 * apply path (planCluster + executePlan: ownership plan, dry-run gate, staged apply).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import type { CanaryRelease } from '../../src/api/canary-release.js';
import { executePlan, planCluster, type ClusterPlan } from '../../src/delivery/applier.js';
import { deleteInventory, readInventory } from '../../src/delivery/inventory-store.js';
import type { DeliveryOwner, Manifest } from '../../src/delivery/objects.js';
import { FieldManager, serverSideApply } from '../../src/kube/apply.js';
import type { ClusterClient } from '../../src/kube/clients.js';
import { isConflict } from '../../src/kube/errors.js';
import { releaseNames } from '../../src/rollout/names.js';
import { TrafficRouteError } from '../../src/traffic/errors.js';
import { routerFor, type TrafficRouter, type TrafficSplit } from '../../src/traffic/index.js';
import { applyAsRollout, KindNotServedError } from '../../src/traffic/kube.js';
import { TOTAL_ANNOTATION } from '../../src/traffic/replicas.js';
import { SmiRouter } from '../../src/traffic/smi.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';
import { installGatewayApiCrds } from '../support/gateway-api.js';
import { deploymentManifest } from '../support/manifests.js';
import { createNamespace, deleteObject } from '../support/sluice-objects.js';

const CLUSTER = 'member-1';
const client: ClusterClient = testClient(CLUSTER);
const ns = uniqueName('traffic');
const owner: DeliveryOwner = { namespace: ns, name: 'traffic', cluster: CLUSTER };
const SPLITS: readonly TrafficSplit[] = [
  { primary: 90, canary: 10 },
  { primary: 50, canary: 50 },
  { primary: 100, canary: 0 },
];

/** Non-dry-run applies sent through `client`, to prove a repeated `set` writes nothing. */
let writes = 0;
{
  const raw = client.raw;
  const apply = raw.applyRaw.bind(raw);
  raw.applyRaw = (obj, opts) => {
    if (!opts.dryRun) writes += 1;
    return apply(obj, opts);
  };
}

async function installFixtureCrds(): Promise<void> {
  const names: string[] = [];
  for (const file of ['istio.yaml', 'smi.yaml']) {
    const text = await readFile(join(import.meta.dirname, '..', 'fixtures', 'crds', file), 'utf8');
    for (const doc of parseAllDocuments(text)) {
      const crd = doc.toJS() as KubernetesObject;
      await serverSideApply(client, crd, { fieldManager: 'sluice-test-bed', force: true });
      names.push(crd.metadata!.name!);
    }
  }
  await eventually(async () => {
    for (const name of names) {
      const crd = await client.raw.getRaw<
        KubernetesObject & { status?: { conditions?: { type: string; status: string }[] } }
      >({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name },
      });
      if (!crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True')) return false;
    }
    return true;
  }, 30_000);
}

/** Applies `objects` as the Delivery does from Git; returns the gate's plan and the result. */
async function deliver(
  ...objects: Manifest[]
): Promise<{ plan: Extract<ClusterPlan, { ok: true }>; yielded: readonly string[] }> {
  const plan = await planCluster({
    client,
    owner,
    objects: objects.map((object, i) => ({
      object: { ...object, metadata: { ...object.metadata, namespace: ns } },
      origin: { file: 'app.yaml', line: 1 + i * 20, col: 1, docIndex: i },
    })),
    prune: false,
    deadline: Date.now() + 60_000,
  });
  if (!plan.ok) throw new Error(`delivery gate failed: ${plan.reason}: ${plan.message}`);
  const result = await executePlan(plan);
  if (result.failures.length > 0) throw new Error(`delivery failed: ${result.failures.join('; ')}`);
  return { plan, yielded: result.yielded };
}

function release(trafficRouting: Record<string, unknown>): CanaryRelease {
  return {
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { name: 'web', namespace: ns },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      service: { port: 80, primarySuffix: '-primary', canarySuffix: '-canary' },
      strategy: 'canary',
      trafficRouting,
    },
  } as unknown as CanaryRelease;
}

function router(trafficRouting: Record<string, unknown>): TrafficRouter {
  const r = release(trafficRouting);
  return routerFor({ client, release: r, names: releaseNames(r) });
}

const names = releaseNames(release({ provider: 'replicas' }));

async function live<T extends KubernetesObject>(apiVersion: string, kind: string, name: string): Promise<T> {
  return client.raw.getRaw<T>({ apiVersion, kind, metadata: { namespace: ns, name } });
}

interface FieldsEntry {
  manager?: string;
  operation?: string;
  fieldsV1?: { 'f:spec'?: Record<string, unknown> };
}
const managed = (obj: KubernetesObject, manager: string): Record<string, unknown> | undefined =>
  ((obj.metadata?.managedFields ?? []) as FieldsEntry[]).find((e) => e.manager === manager)?.fieldsV1?.[
    'f:spec'
  ];

/**
 * `set`, then a repeated `set` that must send no write and leave the object alone: its
 * resourceVersion, or for a Deployment (whose status the controllers keep writing) its generation.
 */
async function setTwice(
  r: TrafficRouter,
  split: TrafficSplit,
  read: () => Promise<KubernetesObject>,
  version: 'resourceVersion' | 'generation' = 'resourceVersion',
): Promise<void> {
  await r.set(split);
  const before = (await read()).metadata?.[version];
  const count = writes;
  await r.set(split);
  expect(writes).toBe(count);
  expect((await read()).metadata?.[version]).toBe(before);
}

beforeAll(async () => {
  await createNamespace(client, ns);
  await installGatewayApiCrds(client);
  await installFixtureCrds();
}, 120_000);

afterAll(async () => {
  const stored = await readInventory(client, owner);
  if (stored.ok) await deleteInventory(client, stored);
  await deleteObject(client, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
});

// ---------------------------------------------------------------------------------------------

function httpRoute(name: string, opts: { canary?: boolean; hostnames?: string[] } = {}): Manifest {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name },
    spec: {
      parentRefs: [{ name: 'gw' }],
      hostnames: opts.hostnames ?? ['web.example'],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [
            { name: 'web-primary', port: 80, weight: 100 },
            ...(opts.canary === false ? [] : [{ name: 'web-canary', port: 80, weight: 0 }]),
          ],
        },
        {
          matches: [{ path: { type: 'PathPrefix', value: '/static' } }],
          backendRefs: [{ name: 'static', port: 80 }],
        },
      ],
    },
  };
}

describe('Gateway API HTTPRoute router', () => {
  const gw = (route: string) =>
    router({ provider: 'gatewayAPI', gatewayAPI: { httpRoute: { name: route } } });
  const readRoute = (name: string) => () => live('gateway.networking.k8s.io/v1', 'HTTPRoute', name);

  it('GIVEN an HTTPRoute from Git WHEN 10/90, 50/50, 0/100 are set THEN get reads each, a repeat writes nothing, and a Delivery re-apply keeps the weights', async () => {
    const name = uniqueName('route');
    await deliver(httpRoute(name));
    const r = gw(name);
    expect(await r.verify()).toEqual({ ok: true });
    expect(await r.get()).toEqual({ primary: 100, canary: 0 });

    for (const split of SPLITS) {
      await setTwice(r, split, readRoute(name));
      expect(await r.get()).toEqual(split);
      // The Delivery syncs the unchanged Git manifest (weights 100/0) again.
      const { plan, yielded } = await deliver(httpRoute(name));
      expect(plan.objects[0]!.action).toBe('unchanged');
      expect(await r.get()).toEqual(split);
      if (split.canary > 0) expect(yielded.join('\n')).toMatch(/spec\.rules \(sluice-rollout\)/);
    }

    // Field ownership: rules is atomic, so sluice-rollout holds the whole list, the Delivery none of it.
    const obj = await readRoute(name)();
    expect(managed(obj, FieldManager.rollout)).toEqual({ 'f:rules': {} });
    expect(managed(obj, FieldManager.delivery)).not.toHaveProperty('f:rules');
    expect(managed(obj, FieldManager.delivery)).toHaveProperty('f:hostnames');
  });

  it('GIVEN sluice-rollout holds spec.rules WHEN Git changes the hostnames THEN the Delivery applies them and the weights stay', async () => {
    const name = uniqueName('route');
    await deliver(httpRoute(name));
    const r = gw(name);
    await r.set({ primary: 90, canary: 10 });
    await deliver(httpRoute(name, { hostnames: ['web.example', 'www.example'] }));
    const obj = (await readRoute(name)()) as KubernetesObject & { spec: { hostnames: string[] } };
    expect(obj.spec.hostnames).toEqual(['web.example', 'www.example']);
    expect(await r.get()).toEqual({ primary: 90, canary: 10 });
  });

  it('GIVEN the weights set WHEN the Delivery applied without its ownership plan THEN the API server reports a conflict on spec.rules (why it must yield)', async () => {
    const name = uniqueName('route');
    await deliver(httpRoute(name));
    await gw(name).set({ primary: 50, canary: 50 });
    const err = await serverSideApply(
      client,
      { ...httpRoute(name), metadata: { name, namespace: ns } },
      { fieldManager: FieldManager.delivery },
    ).catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    expect(String((err as Error).message)).toMatch(/sluice-rollout.*\.spec\.rules/s);
  });

  it('GIVEN a stale resourceVersion THEN the rollout apply is refused (the read-modify-write lock)', async () => {
    const name = uniqueName('route');
    await deliver(httpRoute(name));
    const current = await readRoute(name)();
    await gw(name).set({ primary: 90, canary: 10 });
    const err = await applyAsRollout(
      client,
      {
        apiVersion: 'gateway.networking.k8s.io/v1',
        kind: 'HTTPRoute',
        metadata: { name, namespace: ns },
        spec: { rules: [] },
      },
      { force: true, resourceVersion: current.metadata!.resourceVersion! },
    ).catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    expect(await gw(name).get()).toEqual({ primary: 90, canary: 10 });
  });

  it('GIVEN a route whose canary backendRef is gone THEN verify names the rule and set refuses', async () => {
    const name = uniqueName('route');
    await deliver(httpRoute(name, { canary: false }));
    const r = gw(name);
    expect(await r.verify()).toEqual({
      ok: false,
      problems: [
        `HTTPRoute ${ns}/${name} spec.rules: no rule has backendRefs to both Service web-primary and Service web-canary`,
        `HTTPRoute ${ns}/${name} spec.rules[0].backendRefs: references web-primary but not web-canary`,
      ],
    });
    await expect(r.set({ primary: 90, canary: 10 })).rejects.toThrow(TrafficRouteError);
  });

  it('GIVEN another GitOps tool also applies spec.rules THEN verify says the weights would not hold', async () => {
    const name = uniqueName('route');
    await deliver(httpRoute(name));
    await gw(name).set({ primary: 90, canary: 10 });
    await serverSideApply(
      client,
      { ...httpRoute(name), metadata: { name, namespace: ns } },
      { fieldManager: 'kustomize-controller', force: true },
    );
    expect(await gw(name).verify()).toEqual({
      ok: false,
      problems: [
        `HTTPRoute ${ns}/${name} spec.rules: also applied by kustomize-controller, which would put its weights back`,
      ],
    });
  });

  it('GIVEN no HTTPRoute THEN get is undefined and verify names the CanaryRelease field', async () => {
    const r = gw('absent');
    expect(await r.get()).toBeUndefined();
    expect(await r.verify()).toEqual({
      ok: false,
      problems: [`spec.trafficRouting.gatewayAPI.httpRoute.name: HTTPRoute ${ns}/absent not found`],
    });
  });
});

// ---------------------------------------------------------------------------------------------

function virtualService(name: string, subsets: boolean): Manifest {
  const dest = (side: 'primary' | 'canary') =>
    subsets ? { host: 'web', subset: side } : { host: `web-${side}.${ns}.svc.cluster.local` };
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'VirtualService',
    metadata: { name },
    spec: {
      hosts: ['web'],
      http: [
        {
          name: 'main',
          route: [
            { destination: dest('primary'), weight: 100 },
            { destination: dest('canary'), weight: 0 },
          ],
        },
      ],
    },
  };
}

function destinationRule(name: string, subsets: string[]): Manifest {
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'DestinationRule',
    metadata: { name },
    spec: {
      host: 'web',
      subsets: subsets.map((s) => ({ name: s, labels: { app: s === 'primary' ? 'web-primary' : 'web' } })),
    },
  };
}

describe('Istio VirtualService router', () => {
  const readVs = (name: string) => () => live('networking.istio.io/v1', 'VirtualService', name);

  it('GIVEN a VirtualService with DestinationRule subsets from Git WHEN 10/90, 50/50, 0/100 are set THEN get reads each and a Delivery re-apply keeps them', async () => {
    const name = uniqueName('vs');
    await deliver(virtualService(name, true), destinationRule(name, ['primary', 'canary']));
    const r = router({ provider: 'istio', istio: { virtualService: { name }, destinationRule: { name } } });
    expect(await r.verify()).toEqual({ ok: true });
    for (const split of SPLITS) {
      await setTwice(r, split, readVs(name));
      expect(await r.get()).toEqual(split);
      await deliver(virtualService(name, true), destinationRule(name, ['primary', 'canary']));
      expect(await r.get()).toEqual(split);
    }
  });

  it('GIVEN destinations by Service FQDN (no DestinationRule) WHEN 10/90 THEN get reads it', async () => {
    const name = uniqueName('vs');
    await deliver(virtualService(name, false));
    const r = router({ provider: 'istio', istio: { virtualService: { name } } });
    await r.set({ primary: 90, canary: 10 });
    expect(await r.get()).toEqual({ primary: 90, canary: 10 });
  });

  it('GIVEN a DestinationRule without the canary subset and routes by host THEN verify reports both with field paths', async () => {
    const name = uniqueName('vs');
    await deliver(virtualService(name, false), destinationRule(name, ['primary']));
    const r = router({ provider: 'istio', istio: { virtualService: { name }, destinationRule: { name } } });
    expect(await r.verify()).toEqual({
      ok: false,
      problems: [
        `VirtualService ${ns}/${name} spec.http: no route has destinations web subset primary and web subset canary`,
        `DestinationRule ${ns}/${name} spec.subsets: no subset named "canary"`,
      ],
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('SMI TrafficSplit router', () => {
  const readTs = (name: string) => () => live('split.smi-spec.io/v1alpha2', 'TrafficSplit', name);

  it('GIVEN no TrafficSplit WHEN 10/90, 50/50, 0/100 are set THEN Sluice creates and owns it and get reads each', async () => {
    const name = uniqueName('ts');
    const r = router({ provider: 'smi', smi: { trafficSplit: { name } } });
    expect(await r.get()).toBeUndefined();
    expect(await r.verify()).toEqual({ ok: true });
    for (const split of SPLITS) {
      await setTwice(r, split, readTs(name));
      expect(await r.get()).toEqual(split);
    }
    const obj = (await readTs(name)()) as KubernetesObject & { spec: unknown };
    expect(obj.spec).toEqual({
      service: 'web',
      backends: [
        { service: 'web-primary', weight: 100 },
        { service: 'web-canary', weight: 0 },
      ],
    });
    expect(managed(obj, FieldManager.rollout)).toEqual({ 'f:backends': {}, 'f:service': {} });
  });

  it('GIVEN a stale TrafficSplit in Git WHEN the Delivery re-applies it THEN the weights Sluice set stay', async () => {
    const name = uniqueName('ts');
    const r = router({ provider: 'smi', smi: { trafficSplit: { name } } });
    await r.set({ primary: 90, canary: 10 });
    const stale: Manifest = {
      apiVersion: 'split.smi-spec.io/v1alpha2',
      kind: 'TrafficSplit',
      metadata: { name },
      spec: {
        service: 'web',
        backends: [
          { service: 'web-primary', weight: 100 },
          { service: 'web-canary', weight: 0 },
        ],
      },
    };
    await deliver(stale);
    expect(await r.get()).toEqual({ primary: 90, canary: 10 });
  });

  it('GIVEN a cluster that does not serve TrafficSplit THEN verify says so at the provider field, and set fails with a typed error', async () => {
    const other = testClient('member-3');
    const r = new SmiRouter({
      client: other,
      release: release({ provider: 'smi', smi: { trafficSplit: { name: 'web' } } }),
      names,
    });
    const check = await r.verify();
    expect(!check.ok && check.problems).toEqual([
      'spec.trafficRouting.provider: split.smi-spec.io/v1alpha2 TrafficSplit is not served by cluster member-3 (SMI TrafficSplit CRD not installed)',
    ]);
    await expect(r.set({ primary: 90, canary: 10 })).rejects.toThrow(KindNotServedError);
  });

  it('GIVEN a TrafficSplit edited to route elsewhere THEN verify names spec.backends', async () => {
    const name = uniqueName('ts');
    const r = router({ provider: 'smi', smi: { trafficSplit: { name } } });
    await r.set({ primary: 50, canary: 50 });
    await client.raw.mergePatch(
      { apiVersion: 'split.smi-spec.io/v1alpha2', kind: 'TrafficSplit', metadata: { name, namespace: ns } },
      { spec: { backends: [{ service: 'web-primary', weight: 100 }] } },
      { fieldManager: 'kubectl-edit' },
    );
    expect(await r.verify()).toEqual({
      ok: false,
      problems: [`TrafficSplit ${ns}/${name} spec.backends: no backend for Service web-canary`],
    });
  });
});

// ---------------------------------------------------------------------------------------------

function ingress(name: string, paths: string[] = ['/']): Manifest {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: { name, annotations: { 'nginx.ingress.kubernetes.io/proxy-body-size': '8m' } },
    spec: {
      ingressClassName: 'nginx',
      rules: [
        {
          host: 'web.example',
          http: {
            paths: paths.map((path) => ({
              path,
              pathType: 'Prefix',
              backend: { service: { name: 'web', port: { number: 80 } } },
            })),
          },
        },
      ],
    },
  };
}

describe('NGINX canary Ingress router', () => {
  type Ing = KubernetesObject & {
    spec: { rules: { http: { paths: { path: string; backend: { service: { name: string } } }[] } }[] };
  };
  const readCanary = (name: string) => () => live<Ing>('networking.k8s.io/v1', 'Ingress', `${name}-canary`);

  it('GIVEN an Ingress from Git WHEN 10/90, 50/50, 0/100 are set THEN the canary Ingress carries each weight (kept at 0) and get reads it', async () => {
    const name = uniqueName('ing');
    await deliver(ingress(name));
    const r = router({ provider: 'nginx', nginx: { ingress: { name } } });
    expect(await r.verify()).toEqual({ ok: true });
    expect(await r.get()).toBeUndefined();
    for (const split of SPLITS) {
      await setTwice(r, split, readCanary(name));
      expect(await r.get()).toEqual(split);
      await deliver(ingress(name));
      expect(await r.get()).toEqual(split);
    }
    const canary = await readCanary(name)();
    expect(canary.metadata?.annotations).toMatchObject({
      'nginx.ingress.kubernetes.io/canary': 'true',
      'nginx.ingress.kubernetes.io/canary-weight': '0',
      'nginx.ingress.kubernetes.io/proxy-body-size': '8m',
    });
    expect(canary.spec.rules[0]!.http.paths[0]!.backend.service.name).toBe('web-canary');
  });

  it('GIVEN Git adds a path to the Ingress WHEN the next step is set THEN the canary Ingress has it too', async () => {
    const name = uniqueName('ing');
    await deliver(ingress(name));
    const r = router({ provider: 'nginx', nginx: { ingress: { name } } });
    await r.set({ primary: 90, canary: 10 });
    await deliver(ingress(name, ['/', '/api']));
    await r.set({ primary: 50, canary: 50 });
    const canary = await readCanary(name)();
    expect(canary.spec.rules[0]!.http.paths.map((p) => p.path)).toEqual(['/', '/api']);
  });

  it('GIVEN a same-named -canary Ingress Sluice did not make THEN verify reports it and set does not overwrite it', async () => {
    const name = uniqueName('ing');
    await deliver(ingress(name), { ...ingress(`${name}-canary`), metadata: { name: `${name}-canary` } });
    const r = router({ provider: 'nginx', nginx: { ingress: { name } } });
    const check = await r.verify();
    expect(check.ok).toBe(false);
    expect(!check.ok && check.problems).toEqual([
      `Ingress ${ns}/${name}-canary metadata.labels.app.kubernetes.io/managed-by: exists and was not made by Sluice; the canary Ingress would overwrite it`,
    ]);
    await expect(r.set({ primary: 90, canary: 10 })).rejects.toThrow(TrafficRouteError);
    const untouched = await readCanary(name)();
    expect(untouched.metadata?.annotations?.['nginx.ingress.kubernetes.io/canary']).toBeUndefined();
    expect(untouched.spec.rules[0]!.http.paths[0]!.backend.service.name).toBe('web');
  });

  it('GIVEN no Ingress THEN verify names spec.trafficRouting.nginx.ingress.name', async () => {
    const r = router({ provider: 'nginx', nginx: { ingress: { name: 'absent' } } });
    expect(await r.verify()).toEqual({
      ok: false,
      problems: [`spec.trafficRouting.nginx.ingress.name: Ingress ${ns}/absent not found`],
    });
  });
});

// ---------------------------------------------------------------------------------------------

describe('replica ratio router', () => {
  type Dep = KubernetesObject & { spec: { replicas: number } };
  const readDep = (name: string) => () => live<Dep>('apps/v1', 'Deployment', name);
  const replicas = async () => [
    (await readDep(names.target)()).spec.replicas,
    (await readDep(names.primary)()).spec.replicas,
  ];

  it('GIVEN a 10-replica workload at rest WHEN 10/90, 50/50, 0/100 are set THEN the replicas follow, get reads each, and a Delivery re-apply keeps them', async () => {
    const target = { ...deploymentManifest(names.target, 10) } as Manifest;
    await deliver(target);
    // What the rollout does before the first step: a primary twin of the target, the target at 0.
    await serverSideApply(
      client,
      { ...deploymentManifest(names.primary, 10), metadata: { name: names.primary, namespace: ns } },
      { fieldManager: FieldManager.controller },
    );
    await applyAsRollout(
      client,
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: names.target, namespace: ns },
        spec: { replicas: 0 },
      },
      { force: true },
    );
    const r = router({ provider: 'replicas' });
    expect(await r.verify()).toEqual({ ok: true });
    expect(await r.get()).toEqual({ primary: 100, canary: 0 });

    const want = [
      [1, 9],
      [5, 5],
      [0, 10],
    ];
    for (const [i, split] of SPLITS.entries()) {
      await setTwice(r, split, readDep(names.primary), 'generation');
      expect(await replicas()).toEqual(want[i]);
      expect(await r.get()).toEqual(split);
      await deliver(target);
      expect(await replicas()).toEqual(want[i]);
    }
    const primary = await readDep(names.primary)();
    expect(primary.metadata?.annotations ?? {}).not.toHaveProperty(TOTAL_ANNOTATION);
    // The primary's template (another manager's) is untouched by the replicas-only applies.
    expect(managed(primary, FieldManager.controller)).toHaveProperty('f:template');
  });

  it('GIVEN a 1-replica primary THEN verify says it cannot be split', async () => {
    for (const [name, n] of [
      [names.target, 0],
      [names.primary, 1],
    ] as const) {
      await applyAsRollout(
        client,
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: { name, namespace: ns },
          spec: { replicas: n },
        },
        { force: true },
      );
    }
    const check = await router({ provider: 'replicas' }).verify();
    expect(!check.ok && check.problems).toEqual([
      `Deployment ${ns}/web-primary spec.replicas: 1 replica cannot be split; the replica ratio needs at least 2`,
    ]);
  });

  it('GIVEN no primary Deployment THEN get is undefined and verify names it', async () => {
    const r = routerFor({
      client,
      release: release({ provider: 'replicas' }),
      names: { ...names, primary: 'absent-primary' },
    });
    expect(await r.get()).toBeUndefined();
    const check = await r.verify();
    expect(!check.ok && check.problems).toEqual([
      `spec.targetRef.name: primary Deployment ${ns}/absent-primary not found (the release creates it when it initializes)`,
    ]);
  });
});
