import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterClient } from './clients.js';
import { normalizeKubeError } from './errors.js';
import { describe } from './raw.js';

/** Field managers: who owns which fields (DESIGN.md, "Server-side apply everywhere"). */
export const FieldManager = {
  delivery: 'sluice-delivery',
  rollout: 'sluice-rollout',
  controller: 'sluice-controller',
} as const;

export interface ApplyOptions {
  fieldManager: string;
  /** Take ownership of fields another manager holds. Only for fields Sluice alone owns. */
  force?: boolean;
  dryRun?: boolean;
  /**
   * Optimistic lock: the apply fails with 409 Conflict unless the live object still has this
   * resourceVersion. For read-modify-write applies (an atomic list rebuilt from what was read).
   */
  resourceVersion?: string;
}

/**
 * The one apply path: a server-side apply of `obj` on `client`'s cluster, sent and
 * returned as untyped JSON (see `RawObjectApi` for why typed models must not touch it).
 * Returns the object as the server has it after the apply (or would, with `dryRun`).
 */
export async function serverSideApply<T extends KubernetesObject>(
  client: ClusterClient,
  obj: T,
  opts: ApplyOptions,
): Promise<T> {
  const body = { ...obj, metadata: { ...obj.metadata } } as T;
  // managedFields must not be sent with an apply patch; a resourceVersion left over from a read
  // copy would turn the apply into a precondition, so only an explicit `resourceVersion` is sent.
  delete (body.metadata as Record<string, unknown>).managedFields;
  delete (body.metadata as Record<string, unknown>).resourceVersion;
  if (opts.resourceVersion) (body.metadata as Record<string, unknown>).resourceVersion = opts.resourceVersion;
  try {
    return await client.raw.applyRaw(body, opts);
  } catch (err) {
    throw normalizeKubeError(err, `apply ${describe(obj)}`);
  }
}
