/**
 * PriorityLevelConfiguration `flowcontrol.apiserver.k8s.io/v1beta1|v1beta2|v1beta3 → v1`
 * (betas removed in 1.26, 1.29 and 1.32). `limited.assuredConcurrencyShares` (v1beta1/2) was
 * renamed `nominalConcurrencyShares` in v1beta3 with the same meaning.
 */
import { isObject, renameKey, type Manifest, type Note, type Rewrite } from '../types.js';

function rewritePriorityLevel(obj: Manifest): ReturnType<Rewrite['rewrite']> {
  const notes: Note[] = [];
  const out = structuredClone(obj);
  out.apiVersion = 'flowcontrol.apiserver.k8s.io/v1';
  const spec = isObject(out.spec) ? out.spec : undefined;
  if (spec && isObject(spec.limited) && 'assuredConcurrencyShares' in spec.limited) {
    spec.limited = renameKey(
      spec.limited,
      'assuredConcurrencyShares',
      'nominalConcurrencyShares',
      spec.limited.assuredConcurrencyShares,
    );
    notes.push({
      path: ['spec', 'limited', 'nominalConcurrencyShares'],
      text: 'assuredConcurrencyShares → nominalConcurrencyShares',
    });
  }
  return { ok: true, object: out, notes };
}

export const priorityLevelRewrite: Rewrite = {
  to: 'flowcontrol.apiserver.k8s.io/v1',
  // v1beta3 (the interim version for 1.26–1.28) already has nominalConcurrencyShares.
  retargetable: true,
  rewrite: rewritePriorityLevel,
};
