import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { serverSideApply } from '../../src/kube/apply.js';
import type { ClusterClient } from '../../src/kube/clients.js';

/**
 * The Gateway API release whose standard CRDs the test bed installs. Traefik v3.6 (test/traefik)
 * is built against v1.4.0 and waits for an informer on every standard kind, so all of them
 * must exist before it routes anything; v1.4.1 is a patch of the same API.
 */
export const GATEWAY_API_MODULE = 'sigs.k8s.io/gateway-api@v1.4.1';

const FIELD_MANAGER = 'sluice-test-bed';

interface CrdDoc extends KubernetesObject {
  status?: { conditions?: { type: string; status: string }[] };
}

let cached: Promise<CrdDoc[]> | undefined;

/**
 * The standard CRDs of {@link GATEWAY_API_MODULE}, read from the Go module cache (downloaded
 * through the Go proxy on first use) rather than committed to the repository.
 */
export function gatewayApiCrds(): Promise<CrdDoc[]> {
  cached ??= readCrds().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}

async function readCrds(): Promise<CrdDoc[]> {
  let out: string;
  try {
    // Outside any module (tmpdir) so no go.mod or go.work around the caller is consulted.
    ({ stdout: out } = await promisify(execFile)('go', ['mod', 'download', '-json', GATEWAY_API_MODULE], {
      cwd: tmpdir(),
      env: { ...process.env, GOWORK: 'off', GOTOOLCHAIN: 'local', GOFLAGS: '-mod=mod' },
      maxBuffer: 1 << 20,
    }));
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`go mod download ${GATEWAY_API_MODULE} failed: ${e.stdout || e.stderr || e.message}`, {
      cause: err,
    });
  }
  const info = JSON.parse(out) as { Dir?: string; Error?: string };
  if (!info.Dir) throw new Error(`go mod download ${GATEWAY_API_MODULE}: ${info.Error ?? 'no Dir'}`);
  const dir = join(info.Dir, 'config', 'crd', 'standard');
  const files = (await readdir(dir)).filter((f) => f.endsWith('.yaml')).sort();
  const crds: CrdDoc[] = [];
  for (const file of files) {
    for (const doc of parseAllDocuments(await readFile(join(dir, file), 'utf8'))) {
      if (doc.errors.length > 0) throw new Error(`${join(dir, file)}: ${doc.errors[0]!.message}`);
      const obj = doc.toJS() as CrdDoc | null;
      if (obj?.kind === 'CustomResourceDefinition') crds.push(obj);
    }
  }
  if (crds.length === 0) throw new Error(`${dir}: no CustomResourceDefinition found`);
  return crds;
}

/**
 * Installs every standard Gateway API CRD on `client`'s cluster (server-side apply, idempotent,
 * safe to call from several test files) and resolves once each is Established.
 */
export async function installGatewayApiCrds(client: ClusterClient, timeoutMs = 30_000): Promise<void> {
  const crds = await gatewayApiCrds();
  for (const crd of crds) {
    await serverSideApply(client, crd, { fieldManager: FIELD_MANAGER, force: true });
  }
  const deadline = Date.now() + timeoutMs;
  let pending = crds.map((c) => c.metadata!.name!);
  while (pending.length > 0) {
    const still: string[] = [];
    for (const name of pending) {
      const live = await client.raw.getRaw<CrdDoc>({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: { name },
      });
      const ok = live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
      if (!ok) still.push(name);
    }
    pending = still;
    if (pending.length === 0) return;
    if (Date.now() > deadline)
      throw new Error(
        `Gateway API CRDs not Established within ${timeoutMs} ms on ${client.name}: ${pending.join(', ')}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}
