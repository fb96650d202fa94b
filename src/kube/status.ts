import { isDeepStrictEqual } from 'node:util';
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import type { ClusterClient } from './clients.js';
import { normalizeKubeError } from './errors.js';

/** The object whose status is written. Give `plural` to skip discovery; `kind` is then only used in messages. */
export interface StatusRef {
  /** `group/version`: the status subresource is reached through the custom objects API, so core (`v1`) kinds are not supported. */
  apiVersion: string;
  kind?: string;
  plural?: string;
  /** Left out for cluster-scoped kinds. */
  namespace?: string;
  name: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The JSON merge patch (RFC 7386) that turns `current` into `desired`: changed keys with
 * their new value, removed keys as `null`, unchanged keys left out. Arrays are replaced
 * whole, as merge patch does. Pure.
 */
export function mergePatchFor(current: unknown, desired: unknown): unknown {
  if (!isObject(current) || !isObject(desired)) return desired;
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(current)) {
    if (!(key in desired)) patch[key] = null;
  }
  for (const [key, value] of Object.entries(desired)) {
    if (!isDeepStrictEqual(current[key], value)) patch[key] = mergePatchFor(current[key], value);
  }
  return patch;
}

function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.indexOf('/');
  if (slash < 0) {
    throw new Error(`writeStatus: apiVersion "${apiVersion}" has no group; core kinds are not supported`);
  }
  return { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** Discovery through the raw client (cached per client): a list path ends in the plural. */
async function pluralOf(client: ClusterClient, apiVersion: string, kind: string): Promise<string> {
  const path = await client.raw.pathFor({ apiVersion, kind, metadata: {} }, 'list');
  return path.slice(path.lastIndexOf('/') + 1);
}

/**
 * Makes `ref`'s status equal `status`, with at most one write to the status subresource:
 * reads the current status; returns `false` without writing when it is already deep-equal
 * (so an unchanged reconcile causes no write, no new `resourceVersion`, no watch event);
 * otherwise sends one JSON merge patch (changed fields, and `null` for fields `status` no
 * longer has) guarded by the `resourceVersion` just read, and returns `true`. A concurrent
 * writer in between makes it fail with a `Conflict` `KubeError` rather than be overwritten.
 *
 * `status` is the whole status: fields it leaves out are removed. Build it from the
 * object's current status when other writers (e.g. operator intent) keep fields there.
 *
 * Every failure is a `KubeError` (via `normalizeKubeError`) naming the object.
 */
export async function writeStatus(client: ClusterClient, ref: StatusRef, status: object): Promise<boolean> {
  const where = ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
  const context = `write status of ${ref.apiVersion} ${ref.kind ?? ref.plural ?? '?'} ${where} on ${client.name}`;
  try {
    const { group, version } = splitApiVersion(ref.apiVersion);
    let plural = ref.plural;
    if (!plural) {
      if (!ref.kind) throw new Error('writeStatus: give kind or plural');
      plural = await pluralOf(client, ref.apiVersion, ref.kind);
    }
    // A JSON round trip drops `undefined` fields, which the server never has.
    const desired = JSON.parse(JSON.stringify(status)) as Json;

    const base = { group, version, plural, name: ref.name };
    const current = (
      ref.namespace
        ? await client.custom.getNamespacedCustomObjectStatus({ ...base, namespace: ref.namespace })
        : await client.custom.getClusterCustomObjectStatus(base)
    ) as { metadata?: { resourceVersion?: string }; status?: unknown };
    if (isDeepStrictEqual(current.status ?? {}, desired)) return false;

    const body = {
      metadata: { resourceVersion: current.metadata?.resourceVersion },
      status: current.status === undefined ? desired : mergePatchFor(current.status, desired),
    };
    // Typed patch calls default to JSON Patch (client-node #2160): ask for a merge patch.
    const options = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
    if (ref.namespace) {
      await client.custom.patchNamespacedCustomObjectStatus(
        { ...base, namespace: ref.namespace, body },
        options,
      );
    } else {
      await client.custom.patchClusterCustomObjectStatus({ ...base, body }, options);
    }
    return true;
  } catch (err) {
    throw normalizeKubeError(err, context);
  }
}
