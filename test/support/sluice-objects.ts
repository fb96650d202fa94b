import type { KubernetesObject } from '@kubernetes/client-node';
import { installCrds } from '../../src/api/install.js';
import type { Cluster } from '../../src/api/cluster.js';
import type { ClusterClient } from '../../src/kube/clients.js';
import { isNotFound } from '../../src/kube/errors.js';
import { kubeconfigYaml } from './clusters.js';

/** Installs Sluice's CRDs on `client`'s cluster (idempotent). */
export async function ensureCrds(client: ClusterClient): Promise<void> {
  await installCrds(client);
}

/** Creates a namespace (ignores one that exists). */
export async function createNamespace(client: ClusterClient, name: string): Promise<void> {
  try {
    await client.raw.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
  } catch (err) {
    if (!String((err as { code?: number }).code).startsWith('409')) throw err;
  }
}

/** Stores kube-local cluster `member`'s kubeconfig in a Secret on the hub, as an operator registering it would. */
export async function kubeconfigSecret(
  hub: ClusterClient,
  namespace: string,
  name: string,
  member: string,
  key = 'kubeconfig',
): Promise<void> {
  await secret(hub, namespace, name, { [key]: kubeconfigYaml(member) });
}

export async function secret(
  hub: ClusterClient,
  namespace: string,
  name: string,
  data: Record<string, string>,
): Promise<void> {
  await hub.raw.applyRaw(
    { apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name }, stringData: data } as KubernetesObject,
    { fieldManager: 'sluice-test', force: true },
  );
}

/** A `Cluster` resource on the hub pointing at a Secret. */
export async function registerCluster(
  hub: ClusterClient,
  name: string,
  ref: { namespace: string; name: string; key?: string },
  labels: Record<string, string> = {},
): Promise<void> {
  await hub.raw.applyRaw(
    {
      apiVersion: 'sluice.dev/v1',
      kind: 'Cluster',
      metadata: { name, labels },
      spec: { kubeconfigSecretRef: { key: 'kubeconfig', ...ref } },
    } as KubernetesObject,
    { fieldManager: 'sluice-test', force: true },
  );
}

/** Merges `labels` into a Cluster's labels (a `null` value removes that label), as `kubectl label` would. */
export async function labelCluster(
  hub: ClusterClient,
  name: string,
  labels: Record<string, string | null>,
): Promise<void> {
  await hub.raw.mergePatch(
    { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: { name } },
    { metadata: { labels } },
  );
}

/** One core/v1 Event, as much of it as tests look at. */
export interface EventRecord extends KubernetesObject {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  involvedObject?: { kind?: string; name?: string };
}

/** The Events in `namespace` about the `kind` object `name`, oldest first as the API lists them. */
export async function eventsAbout(
  client: ClusterClient,
  namespace: string,
  kind: string,
  name: string,
): Promise<EventRecord[]> {
  const list = await client.raw.listRaw<EventRecord>('v1', 'Event', { namespace });
  return list.items.filter((e) => e.involvedObject?.kind === kind && e.involvedObject.name === name);
}

export async function getCluster(hub: ClusterClient, name: string): Promise<Cluster> {
  return hub.raw.getRaw<Cluster>({
    apiVersion: 'sluice.dev/v1',
    kind: 'Cluster',
    metadata: { name },
  } as KubernetesObject);
}

export async function deleteObject(client: ClusterClient, obj: KubernetesObject): Promise<void> {
  try {
    await client.raw.deleteRaw(obj);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** The `Available` condition of a Cluster, or undefined. */
export function available(c: Cluster): { status: string; reason: string; message: string } | undefined {
  return c.status?.conditions?.find((x) => x.type === 'Available');
}
