import { rmSync } from 'node:fs';

export default async function globalTeardown() {
  const handle = globalThis.__kubeLocal;
  if (!handle) return;
  await handle.stop();
  if (!process.env.SLUICE_KEEP_TEST_CLUSTERS) rmSync(handle.dir, { recursive: true, force: true });
}
