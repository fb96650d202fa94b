/**
 * The rule that keeps Git and the clusters honest after a rollback: a Delivery never applies a
 * revision that a CanaryRelease following it rolled back (`status.rolledBackRevisions`). What
 * runs stays; nothing is pruned; a new commit (the revert Sluice pushes, or a fix) moves on.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterClient } from '../kube/clients.js';
import { isNotFound } from '../kube/errors.js';

/** The part of a CanaryRelease this rule reads. */
export interface ReleaseRollbacks {
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
  readonly spec?: { readonly deliveryRef?: { readonly name?: string } };
  readonly status?: { readonly rolledBackRevisions?: readonly string[] };
}

/** The release (`namespace/name`) that rolled back `revision` of Delivery `namespace/delivery`, if any. Pure. */
export function rolledBackBy(
  releases: readonly ReleaseRollbacks[],
  namespace: string,
  delivery: string,
  revision: string,
): string | undefined {
  const r = releases.find(
    (x) =>
      x.metadata?.namespace === namespace &&
      x.spec?.deliveryRef?.name === delivery &&
      (x.status?.rolledBackRevisions ?? []).includes(revision),
  );
  return r ? `${namespace}/${r.metadata?.name ?? ''}` : undefined;
}

/** The CanaryReleases in `namespace` (one list call on the hub). */
export async function listReleaseRollbacks(
  hub: ClusterClient,
  namespace: string,
): Promise<ReleaseRollbacks[]> {
  try {
    const list = await hub.raw.listRaw<KubernetesObject & ReleaseRollbacks>(
      'sluice.dev/v1',
      'CanaryRelease',
      {
        namespace,
      },
    );
    return list.items;
  } catch (err) {
    // The CanaryRelease CRD is not installed: nothing was rolled back.
    if (isNotFound(err)) return [];
    throw err;
  }
}
