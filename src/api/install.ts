import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { FieldManager, serverSideApply } from '../kube/apply.js';
import type { ClusterClient } from '../kube/clients.js';
import { normalizeKubeError } from '../kube/errors.js';
import { allCrds } from './crds.js';
import type { CustomResourceDefinition } from './schema.js';

/** Options for `installCrds`. */
export interface InstallCrdsOptions {
  /** The CRDs to install; all of Sluice's when unset. */
  crds?: CustomResourceDefinition[];
  /** How long to wait, in all, for every CRD to be Established (default 60 s). */
  timeoutMs?: number;
  /** How often to look (default 250 ms). */
  pollMs?: number;
}

/** CRDs that were applied but did not become Established; `pending` names each with its last condition. */
export class CrdInstallError extends Error {
  override readonly name = 'CrdInstallError';
  readonly pending: ReadonlyArray<{ name: string; condition: string }>;

  constructor(message: string, pending: CrdInstallError['pending']) {
    super(message);
    this.pending = pending;
  }
}

/** Why `crd` is not Established yet, or `undefined` when it is. Throws when it never will be. */
function notEstablished(crd: V1CustomResourceDefinition): string | undefined {
  const conditions = crd.status?.conditions ?? [];
  const established = conditions.find((c) => c.type === 'Established');
  if (established?.status === 'True') return undefined;
  const names = conditions.find((c) => c.type === 'NamesAccepted');
  if (names?.status === 'False') {
    // A name conflict with another CRD: waiting cannot fix it.
    throw new CrdInstallError(
      `CRD ${crd.metadata?.name}: names not accepted: ${names.message ?? names.reason}`,
      [{ name: crd.metadata?.name ?? '?', condition: `NamesAccepted=False: ${names.message ?? ''}` }],
    );
  }
  return established
    ? `Established=${established.status}: ${established.message ?? established.reason ?? ''}`
    : 'no Established condition yet';
}

/**
 * Server-side applies each CRD (field manager `sluice-controller`, forced: these fields are
 * Sluice's alone) and resolves with their names once every one is Established, i.e. its
 * resources are served. Creating and upgrading are the same call. Rejects with the
 * apiserver's `KubeError` when an apply fails, and with a `CrdInstallError` naming the CRDs
 * still pending when `timeoutMs` passes or when a CRD's names are refused.
 */
export async function installCrds(client: ClusterClient, opts: InstallCrdsOptions = {}): Promise<string[]> {
  const crds = opts.crds ?? allCrds();
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const pollMs = opts.pollMs ?? 250;
  await Promise.all(
    crds.map((crd) => serverSideApply(client, crd, { fieldManager: FieldManager.controller, force: true })),
  );

  const names = crds.map((crd) => crd.metadata.name);
  const deadline = Date.now() + timeoutMs;
  let pending = new Map(names.map((n) => [n, 'not read yet']));
  for (;;) {
    const next = new Map<string, string>();
    for (const name of pending.keys()) {
      let crd: V1CustomResourceDefinition;
      try {
        crd = await client.apiextensions.readCustomResourceDefinition({ name });
      } catch (err) {
        // Right after a create the read may race the apiserver's cache: keep waiting.
        next.set(name, normalizeKubeError(err, `read CRD ${name}`).message);
        continue;
      }
      const why = notEstablished(crd);
      if (why !== undefined) next.set(name, why);
    }
    pending = next;
    if (pending.size === 0) return names;
    if (Date.now() >= deadline) {
      const list = [...pending].map(([name, condition]) => ({ name, condition }));
      throw new CrdInstallError(
        `CRDs not Established within ${timeoutMs} ms on cluster ${client.name}: ${list.map((p) => `${p.name} (${p.condition})`).join('; ')}`,
        list,
      );
    }
    await new Promise((r) => setTimeout(r, pollMs));
  }
}
