import type { KubernetesObject } from '@kubernetes/client-node';
import { kindInfo, type KindInfo } from '../api/crds.js';
import type { ClusterClient } from '../kube/clients.js';
import { isNotFound, normalizeKubeError } from '../kube/errors.js';
import { UsageError } from './usage.js';

/** A Sluice kind as the CLI names it: the word users type, its aliases, and the kind. */
export interface CliResource {
  /** The canonical word (`sources`, `delivery`…), listed in usage errors. */
  readonly word: string;
  readonly aliases: readonly string[];
  readonly info: KindInfo;
}

/** `kind` under `word`, also reachable by its singular, plural and CRD short names. */
export function cliResource(
  word: string,
  kind: Parameters<typeof kindInfo>[0],
  extra: string[] = [],
): CliResource {
  const info = kindInfo(kind);
  return { word, aliases: [word, info.singular, info.plural, kind.toLowerCase(), ...extra], info };
}

/** The resource `typed` names, or a usage error listing the valid words (exit 2). */
export function resolveResource(typed: string, known: readonly CliResource[], usage: string): CliResource {
  const found = known.find((r) => r.aliases.includes(typed.toLowerCase()));
  if (!found) {
    throw new UsageError(
      `unknown resource type "${typed}": use one of ${known.map((r) => r.word).join(', ')}`,
      usage,
    );
  }
  return found;
}

/** The namespace a command works in: `-n`, else the kubeconfig context's, else `default`. */
export function currentNamespace(client: ClusterClient, flag: string | undefined): string {
  if (flag) return flag;
  const kc = client.kubeConfig;
  return kc.getContextObject(kc.getCurrentContext())?.namespace || 'default';
}

/** `deliveries.sluice.dev "web"`, as the API server names an object in its messages. */
export function objectRef(info: KindInfo, name: string): string {
  return `${info.crdName} "${name}"`;
}

/**
 * Sluice CRDs missing on the cluster show up as a discovery failure deep in client-node; say
 * what to do instead.
 */
function explain(err: unknown, info: KindInfo): Error {
  const e = normalizeKubeError(err);
  if (/Unrecognized API version and kind/.test(e.message)) {
    return new Error(
      `the server has no resource type "${info.crdName}": are Sluice's CRDs installed? (sluice install-crds)`,
      { cause: err },
    );
  }
  return e;
}

/** GET one object; a missing one is an error saying `… not found in namespace ns`. */
export async function getObject<T extends KubernetesObject>(
  client: ClusterClient,
  info: KindInfo,
  name: string,
  namespace: string | undefined,
): Promise<T> {
  try {
    return await client.raw.getRaw<T>({
      apiVersion: info.apiVersion,
      kind: info.kind,
      metadata: { name, ...(info.namespaced ? { namespace } : {}) },
    });
  } catch (err) {
    if (isNotFound(err) && !/Unrecognized/.test(String(err))) {
      const where = info.namespaced ? ` in namespace ${namespace}` : '';
      throw new Error(`${objectRef(info, name)} not found${where}`, { cause: err });
    }
    throw explain(err, info);
  }
}

/** Every object of a kind in `namespace` (every namespace when undefined), all pages, sorted by namespace and name. */
export async function listObjects<T extends KubernetesObject>(
  client: ClusterClient,
  info: KindInfo,
  namespace: string | undefined,
): Promise<T[]> {
  const items: T[] = [];
  let continueToken: string | undefined;
  try {
    do {
      const page = await client.raw.listRaw<T>(info.apiVersion, info.kind, {
        namespace: info.namespaced ? namespace : undefined,
        limit: 500,
        continueToken,
      });
      for (const item of page.items ?? []) items.push(item);
      continueToken = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
    } while (continueToken);
  } catch (err) {
    throw explain(err, info);
  }
  const key = (o: T) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;
  return items.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
