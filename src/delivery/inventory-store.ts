/**
 * Reads and writes a Delivery's inventory on a member cluster: ConfigMaps
 * `sluice-inventory.<ns>.<name>.<shard>` in namespace `sluice-system` (created when missing),
 * one shard per ~900 KiB of {@link encodeInventory} text. Why there, and why it scales: see
 * `inventory.ts`. An unchanged inventory is never rewritten, so a no-op resync writes nothing.
 */
import type { KubernetesObject, V1ConfigMap } from '@kubernetes/client-node';
import { FieldManager, serverSideApply } from '../kube/apply.js';
import type { ClusterClient } from '../kube/clients.js';
import { isAlreadyExists, isNotFound, normalizeKubeError } from '../kube/errors.js';
import {
  INVENTORY_DATA_KEY,
  INVENTORY_LABEL,
  decodeInventory,
  inventoryChunks,
  type InventoryEntry,
} from './inventory.js';
import { boundedLabelValue, type DeliveryOwner } from './objects.js';

/** Namespace on each member cluster that holds the inventories. */
export const INVENTORY_NAMESPACE = 'sluice-system';

/** What is stored for one owner on one member, as read. */
export type StoredInventory =
  | {
      readonly ok: true;
      readonly entries: readonly InventoryEntry[];
      /** ConfigMap name → chunk text, exactly as stored. */
      readonly chunks: ReadonlyMap<string, string>;
    }
  | {
      readonly ok: false;
      /** Every entry readable from any chunk: keep tracking these, never prune from them. */
      readonly entries: readonly InventoryEntry[];
      readonly chunks: ReadonlyMap<string, string>;
      readonly error: string;
    };

/** The label selector value that lists `owner`'s inventory ConfigMaps. */
export function inventorySelector(owner: Pick<DeliveryOwner, 'namespace' | 'name'>): string {
  return `${INVENTORY_LABEL}=${boundedLabelValue(`${owner.namespace}.${owner.name}`)}`;
}

/**
 * Reads `owner`'s inventory on `client`'s cluster. No ConfigMaps (or no namespace) is an empty
 * inventory. Throws a `KubeError` when the cluster cannot be asked — the caller must then
 * neither prune nor rewrite the inventory.
 */
export async function readInventory(client: ClusterClient, owner: DeliveryOwner): Promise<StoredInventory> {
  const chunks = new Map<string, string>();
  let continueToken: string | undefined;
  do {
    const page = await client.raw.listRaw<V1ConfigMap>('v1', 'ConfigMap', {
      namespace: INVENTORY_NAMESPACE,
      labelSelector: inventorySelector(owner),
      limit: 100,
      continueToken,
    });
    for (const cm of page.items) {
      chunks.set(cm.metadata?.name ?? '', cm.data?.[INVENTORY_DATA_KEY] ?? '');
    }
    continueToken = (page.metadata as { continue?: string } | undefined)?.continue || undefined;
  } while (continueToken);
  const decoded = decodeInventory([...chunks.values()]);
  if (decoded.ok) return { ok: true, entries: decoded.entries, chunks };
  return { ok: false, entries: decoded.entries, chunks, error: decoded.errors.join('; ') };
}

function configMap(owner: DeliveryOwner, name: string, chunk: string): KubernetesObject & V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name,
      namespace: INVENTORY_NAMESPACE,
      labels: {
        [INVENTORY_LABEL]: boundedLabelValue(`${owner.namespace}.${owner.name}`),
        'app.kubernetes.io/managed-by': 'sluice',
      },
      annotations: {
        'sluice.dev/owner': `${owner.namespace}/${owner.name}`,
        'sluice.dev/cluster': owner.cluster,
      },
    },
    data: { [INVENTORY_DATA_KEY]: chunk },
  };
}

async function ensureNamespace(client: ClusterClient): Promise<void> {
  try {
    await client.raw.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: INVENTORY_NAMESPACE } },
    });
  } catch (err) {
    if (!isAlreadyExists(err)) throw normalizeKubeError(err, `create namespace ${INVENTORY_NAMESPACE}`);
  }
}

/**
 * Makes the stored inventory hold `entries`, writing only the shards whose text changed and
 * deleting shards the new set no longer has (returns the number of write calls). Shards are
 * written in place one by one: a writer that dies half-way leaves a mix that
 * `decodeInventory` reports as incomplete, so the next sync keeps every entry and does not
 * prune until it has rewritten a complete set.
 */
export async function writeInventory(
  client: ClusterClient,
  owner: DeliveryOwner,
  entries: readonly InventoryEntry[],
  stored: StoredInventory,
): Promise<number> {
  const wanted = inventoryChunks(owner, entries);
  let writes = 0;
  for (const [name, chunk] of wanted) {
    if (stored.chunks.get(name) === chunk) continue;
    const cm = configMap(owner, name, chunk);
    try {
      await serverSideApply(client, cm, { fieldManager: FieldManager.delivery, force: true });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      // The first inventory on this cluster: its namespace does not exist yet.
      await ensureNamespace(client);
      writes += 1;
      await serverSideApply(client, cm, { fieldManager: FieldManager.delivery, force: true });
    }
    writes += 1;
  }
  for (const name of stored.chunks.keys()) {
    if (wanted.has(name)) continue;
    await deleteConfigMap(client, name);
    writes += 1;
  }
  return writes;
}

/** What {@link readInventory} answers right after `writeInventory(client, owner, entries, …)` succeeded. */
export function writtenInventory(owner: DeliveryOwner, entries: readonly InventoryEntry[]): StoredInventory {
  return { ok: true, entries: [...entries], chunks: inventoryChunks(owner, entries) };
}

/** Deletes every stored shard of `owner`'s inventory (the cluster left the placement). */
export async function deleteInventory(client: ClusterClient, stored: StoredInventory): Promise<void> {
  for (const name of stored.chunks.keys()) await deleteConfigMap(client, name);
}

async function deleteConfigMap(client: ClusterClient, name: string): Promise<void> {
  try {
    await client.raw.deleteRaw({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name, namespace: INVENTORY_NAMESPACE },
    });
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}
