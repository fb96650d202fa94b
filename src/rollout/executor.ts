/**
 * The thin I/O around the step function, per cluster: observe (target, primary, router split)
 * and carry out actions. Every action is idempotent and re-derived from status and
 * observations on the next tick, so a failure or a crash between two actions only delays.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CanaryRelease } from '../api/canary-release.js';
import { FieldManager, serverSideApply } from '../kube/apply.js';
import type { ClusterClient } from '../kube/clients.js';
import { isNotFound, normalizeKubeError } from '../kube/errors.js';
import {
  replicaCounts,
  replicaSplit,
  replicaTotal,
  TOTAL_ANNOTATION,
  type ReplicaState,
} from '../traffic/replicas.js';
import type { RouterContext, TrafficRouter, TrafficSplit } from '../traffic/router.js';
import type { Action } from './machine.js';
import type { ReleaseNames } from './names.js';
import type { ClusterObservation } from './observations.js';
import {
  deploymentReady,
  primaryDeployment,
  primaryHpa,
  referencedConfigs,
  replicasBody,
  SERVICES_ANNOTATION,
  services,
  servicesFingerprint,
  TEMPLATE_HASH_ANNOTATION,
  templateHash,
  WORKLOAD_FIELD_MANAGER,
  type DeploymentLike,
} from './workload.js';

/** Picks the router for a release on one cluster (`routerFor` of src/traffic). */
export type RouterFactory = (ctx: RouterContext) => TrafficRouter;

/** One cluster the release acts on: its client, or why there is none. */
export interface ClusterHandle {
  readonly name: string;
  readonly client?: ClusterClient;
  readonly error?: string;
}

const ref = (apiVersion: string, kind: string, namespace: string, name: string): KubernetesObject => ({
  apiVersion,
  kind,
  metadata: { namespace, name },
});

async function getOptional<T extends KubernetesObject>(
  client: ClusterClient,
  obj: KubernetesObject,
): Promise<T | undefined> {
  try {
    return await client.raw.getRaw<T>(obj);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error && err.name !== 'KubeError' && err.name !== 'ApiException') return err.message;
  return normalizeKubeError(err).message;
}

/** The target's template hash: its pod template and the data of the ConfigMaps and Secrets it references. */
export async function targetTemplateHash(client: ClusterClient, target: DeploymentLike): Promise<string> {
  const ns = target.metadata?.namespace ?? 'default';
  const template = target.spec?.template;
  const { configMaps, secrets } = referencedConfigs(template);
  const read = async (kind: 'ConfigMap' | 'Secret', name: string) => {
    const o = await getOptional<KubernetesObject & { data?: unknown; binaryData?: unknown }>(
      client,
      ref('v1', kind, ns, name),
    );
    return o ? { data: o.data ?? null, binaryData: o.binaryData ?? null } : null;
  };
  const cm = Object.fromEntries(
    await Promise.all(configMaps.map(async (n) => [n, await read('ConfigMap', n)])),
  );
  const sec = Object.fromEntries(await Promise.all(secrets.map(async (n) => [n, await read('Secret', n)])));
  return templateHash(template, { configMaps: cm, secrets: sec });
}

/**
 * Everything the step function needs about one cluster. A cluster that cannot be read is an
 * observation with `error` (the release waits for it), never a thrown error.
 */
export async function observeCluster(
  release: CanaryRelease,
  names: ReleaseNames,
  handle: ClusterHandle,
  routerFor: RouterFactory,
): Promise<ClusterObservation> {
  const { name, client } = handle;
  if (!client) return { name, error: handle.error ?? 'no client for the cluster yet', services: false };
  try {
    const [target, primary] = await Promise.all([
      getOptional<DeploymentLike>(client, ref('apps/v1', 'Deployment', names.namespace, names.target)),
      getOptional<DeploymentLike>(client, ref('apps/v1', 'Deployment', names.namespace, names.primary)),
    ]);
    const sel = target?.spec?.selector?.matchLabels ?? {};
    const replicaState =
      release.spec.trafficRouting.provider === 'replicas' && target && primary
        ? { target, primary }
        : undefined;
    const split = !primary
      ? undefined
      : replicaState
        ? replicaRouted(replicaState, release.status?.canaryWeight ?? 0)
        : await routerFor({ client, release, names }).get();
    const weight = release.status?.canaryWeight ?? 0;
    return {
      name,
      ...(target
        ? {
            target: {
              hash: await targetTemplateHash(client, target),
              replicas: target.spec?.replicas ?? 1,
              ready: deploymentReady(target),
            },
          }
        : {}),
      ...(primary
        ? {
            primary: {
              ...(primary.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION]
                ? { hash: primary.metadata.annotations[TEMPLATE_HASH_ANNOTATION] }
                : {}),
              ready: deploymentReady(primary),
            },
          }
        : {}),
      services:
        !!target &&
        primary?.metadata?.annotations?.[SERVICES_ANNOTATION] === servicesFingerprint(release, names, sel),
      ...(split ? { split } : {}),
      ...(replicaState && split?.canary === weight && !replicaSettled(replicaState, weight)
        ? { splitSettled: false }
        : {}),
    };
  } catch (err) {
    return { name, error: errorText(err), services: false };
  }
}

/**
 * The split the replica router routes, read from the two Deployments already in hand (no more
 * reads). Replica counts only approximate a weight (5% of 2 pods is 1 pod), so when the counts are
 * exactly what routing `weight` gives, the split is reported as `weight`: otherwise the state
 * machine would see a drift on every tick and route again forever.
 */
export function replicaRouted(state: ReplicaState, weight: number): TrafficSplit | undefined {
  const want = replicaCounts({ primary: 100 - weight, canary: weight }, replicaTotal(state));
  const replicas = (d: DeploymentLike) => d.spec?.replicas ?? 1;
  if (replicas(state.target) === want.canary && replicas(state.primary) === want.primary) {
    return { primary: 100 - weight, canary: weight };
  }
  return replicaSplit(state);
}

/** The replica counts (and the total record) are exactly what routing `weight` leaves. */
export function replicaSettled(state: ReplicaState, weight: number): boolean {
  const want = replicaCounts({ primary: 100 - weight, canary: weight }, replicaTotal(state));
  const replicas = (d: DeploymentLike) => d.spec?.replicas ?? 1;
  const recorded = state.primary.metadata?.annotations?.[TOTAL_ANNOTATION] !== undefined;
  return (
    replicas(state.target) === want.canary &&
    replicas(state.primary) === want.primary &&
    recorded === (weight !== 0)
  );
}

/** HPAs in the namespace that scale the target. */
async function targetHpas(
  client: ClusterClient,
  names: ReleaseNames,
): Promise<Array<KubernetesObject & { spec?: Record<string, unknown> }>> {
  try {
    const list = await client.raw.listRaw<
      KubernetesObject & { spec?: { scaleTargetRef?: { kind?: string; name?: string } } }
    >('autoscaling/v2', 'HorizontalPodAutoscaler', { namespace: names.namespace });
    return list.items
      .filter(
        (h) => h.spec?.scaleTargetRef?.kind === 'Deployment' && h.spec.scaleTargetRef.name === names.target,
      )
      .map((h) => ({ ...h, apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler' }));
  } catch (err) {
    if (isNotFound(err)) return [];
    throw err;
  }
}

/**
 * Copies the target to the primary: Services, the HPA twin, then the primary Deployment stamped
 * with the hash (last, so that the stamp means everything before it was applied). Does nothing
 * when the target's template no longer has `hash` (a newer revision arrived; the next tick
 * starts again for it). A new primary gets the target's replica count, applied as
 * `sluice-rollout` like every other replica change.
 */
async function applyPrimary(
  release: CanaryRelease,
  names: ReleaseNames,
  client: ClusterClient,
  hash: string,
): Promise<void> {
  const target = await getOptional<DeploymentLike>(
    client,
    ref('apps/v1', 'Deployment', names.namespace, names.target),
  );
  if (!target) throw new Error(`target Deployment ${names.namespace}/${names.target} not found`);
  if ((await targetTemplateHash(client, target)) !== hash) return;
  const sel = target.spec?.selector?.matchLabels ?? {};
  if (Object.keys(sel).length === 0) {
    throw new Error(
      `target Deployment ${names.namespace}/${names.target} spec.selector: needs matchLabels to derive the primary's labels`,
    );
  }
  const opts = { fieldManager: WORKLOAD_FIELD_MANAGER, force: true };
  for (const svc of services(release, names, sel)) await serverSideApply(client, svc, opts);
  for (const hpa of await targetHpas(client, names)) {
    await serverSideApply(client, primaryHpa(hpa, names, release.metadata.name ?? ''), opts);
  }
  const existing = await getOptional<DeploymentLike>(
    client,
    ref('apps/v1', 'Deployment', names.namespace, names.primary),
  );
  // Replicas must be owned by `sluice-rollout` before an apply that leaves them out, or the
  // apply would drop them (back to 1). Level-triggered: a crash right after the create leaves
  // them with the workload manager, and the next copy hands them over first.
  if (existing && !rolloutOwnsReplicas(existing)) {
    await serverSideApply(
      client,
      replicasBody(names.primary, names.namespace, existing.spec?.replicas ?? 1),
      {
        fieldManager: FieldManager.rollout,
        force: true,
      },
    );
  }
  const body = primaryDeployment(release, names, target, hash);
  if (!existing) body.spec!.replicas = Math.max(1, target.spec?.replicas ?? 1);
  await serverSideApply(client, body, opts);
  if (!existing) {
    await serverSideApply(client, replicasBody(names.primary, names.namespace, body.spec!.replicas!), {
      fieldManager: FieldManager.rollout,
      force: true,
    });
  }
}

/** True when `sluice-rollout` holds `spec.replicas` of `d` through an apply. */
export function rolloutOwnsReplicas(d: DeploymentLike): boolean {
  const entries = (d.metadata?.managedFields ?? []) as Array<{
    manager?: string;
    operation?: string;
    fieldsV1?: { 'f:spec'?: { 'f:replicas'?: unknown } };
  }>;
  return entries.some(
    (e) =>
      e.manager === FieldManager.rollout &&
      e.operation === 'Apply' &&
      e.fieldsV1?.['f:spec']?.['f:replicas'] !== undefined,
  );
}

/** Scales the target: to 0, or up to the primary's replica count. `force`: the replicas are the rollout's, not Git's. */
async function scaleTarget(client: ClusterClient, names: ReleaseNames, replicas: 0 | 'up'): Promise<void> {
  let n = 0;
  if (replicas === 'up') {
    const primary = await getOptional<DeploymentLike>(
      client,
      ref('apps/v1', 'Deployment', names.namespace, names.primary),
    );
    n = Math.max(1, primary?.spec?.replicas ?? 1);
  }
  await serverSideApply(client, replicasBody(names.target, names.namespace, n), {
    fieldManager: FieldManager.rollout,
    force: true,
  });
}

/** Carries out one action on its cluster. Throws on failure (the caller reports it and retries next tick). */
export async function carryOut(
  release: CanaryRelease,
  names: ReleaseNames,
  client: ClusterClient,
  action: Action,
  routerFor: RouterFactory,
): Promise<void> {
  switch (action.type) {
    case 'applyPrimary':
      return applyPrimary(release, names, client, action.hash);
    case 'route':
      return routerFor({ client, release, names }).set({
        primary: 100 - action.canary,
        canary: action.canary,
      });
    case 'scaleTarget':
      return scaleTarget(client, names, action.replicas);
  }
}

/** What carrying out a tick's actions came to: the failures, each naming its cluster and action. */
export interface ActionFailure {
  readonly cluster: string;
  readonly action: Action['type'];
  readonly message: string;
}

/**
 * Carries out `actions`: in order within a cluster (route before scale-down matters), clusters
 * concurrently. A failed action stops that cluster's remaining ones for this tick.
 */
export async function carryOutAll(
  release: CanaryRelease,
  names: ReleaseNames,
  handles: readonly ClusterHandle[],
  actions: readonly Action[],
  routerFor: RouterFactory,
): Promise<ActionFailure[]> {
  const byCluster = new Map<string, Action[]>();
  for (const a of actions) byCluster.set(a.cluster, [...(byCluster.get(a.cluster) ?? []), a]);
  const failures: ActionFailure[] = [];
  await Promise.all(
    [...byCluster].map(async ([cluster, list]) => {
      const client = handles.find((h) => h.name === cluster)?.client;
      if (!client) return;
      for (const a of list) {
        try {
          await carryOut(release, names, client, a, routerFor);
        } catch (err) {
          failures.push({ cluster, action: a.type, message: errorText(err) });
          return;
        }
      }
    }),
  );
  return failures;
}
