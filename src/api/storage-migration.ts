/**
 * Storage version migration (what kube-storage-version-migrator does, for Sluice's CRDs):
 * every object is written back unchanged through the apiserver, which encodes it in the
 * current storage version; then the CRD's `status.storedVersions` is trimmed to that version,
 * so that an older version can later be dropped from the CRD.
 *
 * A no-op write still reaches etcd when the stored bytes are of another version (the
 * apiserver skips only byte-identical updates), which is what makes this work. A 409 means
 * someone else wrote the object meanwhile — so it is stored in the new version already.
 */
import type { KubernetesObject, V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { ClusterClient } from '../kube/clients.js';
import { isConflict, isNotFound, normalizeKubeError } from '../kube/errors.js';
import { describe } from '../kube/raw.js';
import { silentLogger, type Logger } from '../log.js';
import { GROUP } from './common.js';

/** What one migration did. */
export interface StorageMigrationResult {
  crd: string;
  storageVersion: string;
  storedVersionsBefore: string[];
  storedVersionsAfter: string[];
  /** Objects written back. */
  rewritten: number;
  /** Objects written by someone else, or deleted, while the migration ran (nothing to do). */
  skipped: number;
}

/** The storage version of `crd` and its `status.storedVersions`. */
export function storageState(crd: V1CustomResourceDefinition): { storage: string; stored: string[] } {
  const storage = crd.spec.versions.find((v) => v.storage)?.name;
  if (!storage) throw new Error(`CRD ${crd.metadata?.name}: no storage version`);
  return { storage, stored: crd.status?.storedVersions ?? [] };
}

/**
 * Migrates every object of the CRD `crdName` to its storage version and trims
 * `status.storedVersions`. Idempotent; when storedVersions already equals the storage version
 * alone, nothing is written. A failed rewrite rejects before the trim (an object still stored
 * in an old version must keep that version listed).
 */
export async function migrateStorage(
  client: ClusterClient,
  crdName: string,
  opts: { logger?: Logger; pageSize?: number; force?: boolean } = {},
): Promise<StorageMigrationResult> {
  const logger = opts.logger ?? silentLogger();
  let crd: V1CustomResourceDefinition;
  try {
    crd = await client.apiextensions.readCustomResourceDefinition({ name: crdName });
  } catch (err) {
    throw normalizeKubeError(err, `read CRD ${crdName}`);
  }
  const { storage, stored } = storageState(crd);
  const result: StorageMigrationResult = {
    crd: crdName,
    storageVersion: storage,
    storedVersionsBefore: stored,
    storedVersionsAfter: stored,
    rewritten: 0,
    skipped: 0,
  };
  if (!opts.force && stored.length === 1 && stored[0] === storage) return result;

  const apiVersion = `${crd.spec.group ?? GROUP}/${storage}`;
  const kind = crd.spec.names.kind;
  let continueToken: string | undefined;
  do {
    const page = await client.raw.listRaw<KubernetesObject>(apiVersion, kind, {
      limit: opts.pageSize ?? 100,
      continueToken,
    });
    for (const obj of page.items) {
      const item = { ...obj, apiVersion, kind };
      try {
        await client.raw.request({
          method: 'PUT',
          path: await client.raw.pathFor(item, 'replace'),
          body: item,
        });
        result.rewritten++;
      } catch (err) {
        if (isConflict(err) || isNotFound(err)) {
          result.skipped++;
          continue;
        }
        throw normalizeKubeError(err, `rewrite ${describe(item)} as ${apiVersion}`);
      }
    }
    continueToken = page.metadata?._continue || undefined;
  } while (continueToken);

  try {
    await client.raw.request({
      method: 'PATCH',
      path: `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName}/status`,
      // The resourceVersion precondition: if the CRD changed meanwhile (another version added
      // to storedVersions), the trim fails rather than forgetting it.
      body: {
        metadata: { resourceVersion: crd.metadata?.resourceVersion },
        status: { storedVersions: [storage] },
      },
      contentType: 'application/merge-patch+json',
    });
  } catch (err) {
    throw normalizeKubeError(err, `trim status.storedVersions of CRD ${crdName}`);
  }
  result.storedVersionsAfter = [storage];
  logger.info('storage migrated', { ...result });
  return result;
}
