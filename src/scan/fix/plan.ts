/**
 * Decides what the fixer does with one object at a target Kubernetes version. Pure: the removal
 * table (../removals.ts) says whether and to what the object must move; the rewrite table
 * (rewrites/index.ts) says how.
 */
import { findRemoval, removalStatusAt, replacementAt, type ApiRemoval } from '../removals.js';
import { rewriteFor } from './rewrites/index.js';
import { isObject, type Flag, type Manifest, type Move, type Note } from './types.js';

/** What happens to one object. */
export type ObjectOutcome =
  /** Not in the removal table, or fine at the target. */
  | { readonly action: 'keep' }
  /** Rewritten; `object` replaces it. */
  | {
      readonly action: 'fix';
      readonly object: Manifest;
      readonly notes: readonly Note[];
      readonly moves: readonly Move[];
      readonly removal: ApiRemoval;
      readonly status: 'removed' | 'deprecated';
    }
  /** Needs a person: left as it is. */
  | {
      readonly action: 'flag';
      readonly flags: readonly Flag[];
      readonly removal: ApiRemoval;
      readonly status: 'removed' | 'deprecated';
    }
  /** Deprecated at the target, but what the fixer would write is not served there yet. */
  | { readonly action: 'skip'; readonly reason: string; readonly removal: ApiRemoval };

/** What to do with `obj` for a cluster at `targetVersion` (e.g. `1.29`). */
export function planObject(obj: Manifest, targetVersion: string): ObjectOutcome {
  const removal = findRemoval(obj.apiVersion, obj.kind);
  if (!removal) return { action: 'keep' };
  const status = removalStatusAt(removal, targetVersion);
  if (status === 'ok') return { action: 'keep' };
  const flag = (reason: string, path: Flag['path'] = ['apiVersion']): ObjectOutcome => ({
    action: 'flag',
    flags: [{ path, reason }],
    removal,
    status,
  });

  const want = replacementAt(removal, targetVersion);
  if (!want) {
    return flag(
      `${obj.apiVersion} ${obj.kind} has no replacement served at ${targetVersion}${removal.note ? ` (${removal.note})` : ''}: remove it or replace it by hand`,
    );
  }
  const rewrite = rewriteFor(obj.apiVersion, obj.kind);
  if (!rewrite) {
    return flag(
      `no mechanical rewrite is known for ${obj.kind} ${obj.apiVersion} → ${want.apiVersion}${removal.note ? ` (${removal.note})` : ''}: rewrite it by hand`,
    );
  }
  const retarget = rewrite.retargetable === true;
  if (want.apiVersion !== rewrite.to && !retarget) {
    const reason = `the fixer writes ${rewrite.to}, which ${targetVersion} does not serve (it serves ${want.apiVersion}): fix for a later --target-version or by hand`;
    return status === 'removed' ? flag(reason) : { action: 'skip', reason, removal };
  }
  const result = rewrite.rewrite(obj);
  if (!result.ok) return { action: 'flag', flags: result.flags, removal, status };
  const object = retarget ? { ...result.object, apiVersion: want.apiVersion } : result.object;
  return { action: 'fix', object, notes: result.notes, moves: result.moves ?? [], removal, status };
}

/** A document's value as a manifest, if it is one (has string apiVersion and kind). */
export function asManifest(value: unknown): Manifest | undefined {
  return isObject(value) && typeof value.apiVersion === 'string' && typeof value.kind === 'string'
    ? (value as Manifest)
    : undefined;
}
