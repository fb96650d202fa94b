/**
 * PodDisruptionBudget `policy/v1beta1 → policy/v1` (removed in 1.25). Same fields, but an EMPTY
 * selector (`{}`, or only empty `matchLabels`/`matchExpressions`) selects no pods in v1beta1 and
 * every pod in the namespace in v1 (a missing selector selects none in both). Rewriting it
 * would silently start guarding every pod: FLAG, never guess which pods were meant.
 */
import { isObject, type Manifest, type Rewrite } from '../types.js';

function isEmptySelector(selector: unknown): boolean {
  if (!isObject(selector)) return false;
  const labels = selector.matchLabels;
  const exprs = selector.matchExpressions;
  return (
    (labels === undefined || labels === null || (isObject(labels) && Object.keys(labels).length === 0)) &&
    (exprs === undefined || exprs === null || (Array.isArray(exprs) && exprs.length === 0))
  );
}

function rewritePdb(obj: Manifest): ReturnType<Rewrite['rewrite']> {
  const spec = isObject(obj.spec) ? obj.spec : {};
  if (isEmptySelector(spec.selector)) {
    return {
      ok: false,
      flags: [
        {
          path: ['spec', 'selector'],
          reason:
            'an empty selector selects no pods in policy/v1beta1 but every pod in the namespace in policy/v1: write the labels of the pods this budget is meant to guard (or delete the budget)',
        },
      ],
    };
  }
  return { ok: true, object: { ...structuredClone(obj), apiVersion: 'policy/v1' }, notes: [] };
}

export const pdbRewrite: Rewrite = { to: 'policy/v1', rewrite: rewritePdb };
