/**
 * Who else declares the field a router writes. Pure: reads `metadata.managedFields`.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { FieldManager } from '../kube/apply.js';

interface Entry {
  readonly manager?: string;
  readonly operation?: string;
  readonly subresource?: string;
  readonly fieldsV1?: unknown;
}

/**
 * The apply managers other than Sluice's own that hold `path` (e.g. `['spec', 'rules']`) of
 * `obj`. Another GitOps tool applying the same list with force (Flux does) would put its weights
 * back on every sync, so the split could not hold: `verify` reports them. Sluice's Delivery is
 * not one of them — it yields the field to `sluice-rollout` (delivery/drift.ts planOwnership).
 */
export function otherAppliers(obj: KubernetesObject, path: readonly string[]): string[] {
  const ours = new Set<string>([FieldManager.rollout, FieldManager.delivery]);
  const out: string[] = [];
  for (const e of (obj.metadata?.managedFields ?? []) as Entry[]) {
    if (e.operation !== 'Apply' || e.subresource || ours.has(e.manager ?? '')) continue;
    let node: unknown = e.fieldsV1;
    for (const key of path) node = (node as Record<string, unknown> | undefined)?.[`f:${key}`];
    if (node !== undefined) out.push(e.manager ?? '(unnamed)');
  }
  return out;
}
