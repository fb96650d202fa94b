import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterClient, loadKubeConfig, type ClusterClient } from '../../src/kube/clients.js';

/** The kube-local directory the global setup started (integration tests only). */
export function clustersDir(): string {
  const dir = process.env.SLUICE_TEST_CLUSTERS_DIR;
  if (!dir)
    throw new Error(
      "SLUICE_TEST_CLUSTERS_DIR is not set: run integration tests through jest's integration project",
    );
  return dir;
}

export function kubeconfigPath(cluster: string): string {
  return join(clustersDir(), cluster, 'kubeconfig');
}

export function kubeconfigYaml(cluster: string): string {
  return readFileSync(kubeconfigPath(cluster), 'utf8');
}

/** A fresh `ClusterClient` for a kube-local cluster (`hub`, `member-1`, …). */
export function testClient(cluster: string): ClusterClient {
  return clusterClient(cluster, loadKubeConfig({ kubeconfig: kubeconfigPath(cluster) }));
}

/** A DNS-1123 name unique to this test run, e.g. `web-3f9a1c`. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${randomBytes(3).toString('hex')}`;
}

async function control(path: string): Promise<void> {
  const base = readFileSync(join(clustersDir(), 'control'), 'utf8').trim();
  const res = await fetch(`${base}${path}`, { method: 'POST' });
  if (!res.ok) throw new Error(`kube-local ${path}: ${res.status} ${await res.text()}`);
}

/** Stops one cluster's whole control plane (its data is kept). */
export const stopCluster = (name: string) => control(`/stop?cluster=${name}`);
/** Starts a stopped cluster again on the same ports; resolves when it answers /readyz. */
export const startCluster = (name: string) => control(`/start?cluster=${name}`);

/** Polls `check` until it returns a truthy value or `timeoutMs` passes (then throws with the last error). */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `condition not met within ${timeoutMs} ms${last ? `: ${last instanceof Error ? last.message : String(last)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
