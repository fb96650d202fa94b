/**
 * The thin executor part every router shares: read an object that may be missing, apply as
 * `sluice-rollout`, retry a read-modify-write that lost a race. Decisions stay in the routers'
 * pure `desired…` functions.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { FieldManager, serverSideApply } from '../kube/apply.js';
import type { ClusterClient } from '../kube/clients.js';
import { KubeError, isConflict, isNotFound, normalizeKubeError } from '../kube/errors.js';

/**
 * How a kind the cluster does not serve answers (its CRD not installed): discovery does not know
 * the version (`Unrecognized API version and kind`), or the group's path answers a bare
 * `404 page not found` text instead of a NotFound Status for one object.
 */
const NOT_SERVED = /Unrecognized API version and kind|Failed to fetch resource metadata|404 page not found/;

/** The cluster does not serve the router's kind at all: the router cannot work there. */
export class KindNotServedError extends KubeError {}

/** A reference to one namespaced object, for reads. */
export function probe(apiVersion: string, kind: string, namespace: string, name: string): KubernetesObject {
  return { apiVersion, kind, metadata: { namespace, name } };
}

/**
 * The object, or undefined when it does not exist. A kind the cluster does not serve throws
 * {@link KindNotServedError} (not "missing": nothing could ever create it there).
 */
export async function readOptional<T extends KubernetesObject>(
  client: ClusterClient,
  ref: KubernetesObject,
): Promise<T | undefined> {
  try {
    return await client.raw.getRaw<T>(ref);
  } catch (err) {
    const e = normalizeKubeError(err);
    if (NOT_SERVED.test(e.message)) {
      throw new KindNotServedError(`${ref.apiVersion} ${ref.kind} is not served by cluster ${client.name}`, {
        status: e.status,
        reason: 'NotFound',
        cause: err,
      });
    }
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/**
 * For `verify`: the object, undefined when missing, or — when its kind is not served — the
 * problem line saying so at `field` (the weights cannot be set on this cluster).
 */
export async function readForVerify<T extends KubernetesObject>(
  client: ClusterClient,
  ref: KubernetesObject,
  field: string,
): Promise<{ readonly object?: T; readonly notServed?: string }> {
  try {
    const object = await readOptional<T>(client, ref);
    return object ? { object } : {};
  } catch (err) {
    if (err instanceof KindNotServedError) return { notServed: `${field}: ${err.message}` };
    throw err;
  }
}

/**
 * Applies `body` as `sluice-rollout`. `force` takes the fields over from whoever holds them
 * (each router says why it may); `resourceVersion` makes the apply conditional on the object
 * not having changed since it was read (409 Conflict otherwise), which a forced
 * read-modify-write of an atomic list needs so that it never overwrites an edit it did not see.
 */
export function applyAsRollout<T extends KubernetesObject>(
  client: ClusterClient,
  body: T,
  opts: { force: boolean; resourceVersion?: string },
): Promise<T> {
  return serverSideApply(client, body, {
    fieldManager: FieldManager.rollout,
    force: opts.force,
    ...(opts.resourceVersion ? { resourceVersion: opts.resourceVersion } : {}),
  });
}

/** Read-modify-write attempts before a router gives up on a busy object. */
const ATTEMPTS = 4;

/** Runs `attempt` again (it re-reads) while it fails with a Conflict, a bounded number of times. */
export async function retryOnConflict<T>(attempt: () => Promise<T>): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (err) {
      if (i >= ATTEMPTS || !(err instanceof KubeError) || !isConflict(err)) throw err;
      await new Promise((r) => setTimeout(r, 20 * i));
    }
  }
}

/** `Kind ns/name`, the prefix of a problem found in that object. */
export function where(kind: string, namespace: string, name: string): string {
  return `${kind} ${namespace}/${name}`;
}
