/** Set-up shared by the benchmarks that run the controller against kube-local. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { serverSideApply } from '../src/kube/apply.js';
import type { ClusterClient } from '../src/kube/clients.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Server-side applies `o` as the benchmark (field manager `bench`, forced). */
export const applyAsBench = (c: ClusterClient, o: object) =>
  serverSideApply(c, o as KubernetesObject, { fieldManager: 'bench', force: true });

/**
 * Creates namespace `ns` on the hub and on member-1, and registers member-1 with the hub as the
 * Cluster `cluster` (its kubeconfig in a Secret of `ns`), as a user would.
 */
export async function registerMember(
  hub: ClusterClient,
  member: ClusterClient,
  clustersDir: string,
  ns: string,
  cluster: string,
): Promise<void> {
  for (const c of [hub, member])
    await applyAsBench(c, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await applyAsBench(hub, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: ns, name: 'm1-kubeconfig' },
    stringData: { kubeconfig: readFileSync(join(clustersDir, 'member-1', 'kubeconfig'), 'utf8') },
  });
  await applyAsBench(hub, {
    apiVersion: 'sluice.dev/v1',
    kind: 'Cluster',
    metadata: { name: cluster },
    spec: { kubeconfigSecretRef: { namespace: ns, name: 'm1-kubeconfig', key: 'kubeconfig' } },
  });
}

/** Deletes what `registerMember` made (and everything in the namespaces). */
export async function unregisterMember(
  hub: ClusterClient,
  member: ClusterClient,
  ns: string,
  cluster: string,
): Promise<void> {
  for (const [c, o] of [
    [hub, { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: { name: cluster } }],
    [member, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }],
    [hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }],
  ] as const) {
    await c.raw.deleteRaw(o as KubernetesObject).catch(() => undefined);
  }
}
