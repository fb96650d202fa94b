import { join } from 'node:path';
import { REPO_ROOT, startKubeLocal } from './kube-local.mjs';

/** Clusters every integration run gets: hub + three members. */
const TEST_CLUSTERS = 4;

/**
 * Starts kube-local once for the whole integration run; workers inherit
 * SLUICE_TEST_CLUSTERS_DIR. Set it beforehand to reuse clusters that already run
 * (`make kube-local-up`), or to a non-existent directory for suites that need none.
 */
export default async function globalSetup() {
  if (process.env.SLUICE_TEST_CLUSTERS_DIR) return;
  const dir = join(REPO_ROOT, '.work', `test-clusters-${process.pid}`);
  const handle = await startKubeLocal({ clusters: TEST_CLUSTERS, dir });
  process.env.SLUICE_TEST_CLUSTERS_DIR = dir;
  globalThis.__kubeLocal = handle;
  console.log(`\nkube-local: ${TEST_CLUSTERS} clusters ready in ${handle.readySeconds.toFixed(1)}s (${dir})`);
}
