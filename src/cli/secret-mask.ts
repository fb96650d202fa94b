/**
 * Masking Secret values before two versions of an object are printed side by side (`sluice
 * diff`): pure, and the only place that decides what of a Secret may be shown.
 */
import type { KubernetesObject } from '@kubernetes/client-node';

/** A Secret value that is the same on both sides, or only on one. */
export const SECRET_MASK = '***';
/** A Secret value that differs: its old side. */
export const SECRET_MASK_BEFORE = '*** (before)';
/** A Secret value that differs: its new side. */
export const SECRET_MASK_AFTER = '*** (after)';
// kubectl apply (client-side) keeps the whole object, data included, in this annotation.
const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

type Obj = KubernetesObject & { data?: Record<string, unknown>; stringData?: Record<string, unknown> };

const isSecret = (o: KubernetesObject | undefined): o is Obj =>
  o !== undefined && o.kind === 'Secret' && (o.apiVersion === 'v1' || o.apiVersion === undefined);

/**
 * `data` with `stringData` folded in (base64), as the API server stores a Secret, so that a
 * Secret from Git written with `stringData` compares equal to the live one.
 */
function storedData(secret: Obj): Record<string, string> {
  const data: Record<string, string> = {};
  for (const [k, v] of Object.entries(secret.data ?? {})) data[k] = String(v ?? '');
  for (const [k, v] of Object.entries(secret.stringData ?? {}))
    data[k] = Buffer.from(String(v ?? ''), 'utf8').toString('base64');
  return data;
}

/** The side of `secret` with values replaced; `undefined` stays `undefined`. */
function masked(
  secret: Obj | undefined,
  data: Record<string, string>,
  lastApplied: string | undefined,
): Obj | undefined {
  if (!secret) return undefined;
  const { stringData: _folded, ...rest } = secret;
  const out: Obj = { ...rest, ...(Object.keys(data).length > 0 || secret.data ? { data } : {}) };
  const annotations = secret.metadata?.annotations;
  if (annotations && LAST_APPLIED in annotations && lastApplied !== undefined) {
    out.metadata = { ...secret.metadata, annotations: { ...annotations, [LAST_APPLIED]: lastApplied } };
  }
  return out;
}

/**
 * Masks Secret values in a pair of objects about to be diffed (`live` as it runs, `desired`
 * as it would be applied), as Flux does: every value of `data` and `stringData` becomes
 * `***`, except that a key whose value differs becomes `*** (before)` on the live side and
 * `*** (after)` on the desired side, so the diff still shows *that* it changed, never *what*.
 * `stringData` is folded into `data` first (the API server does the same). The
 * `kubectl.kubernetes.io/last-applied-configuration` annotation, which holds the values in
 * clear, is masked the same way. Objects that are not `v1` Secrets are returned as they are.
 * Either side may be missing (created or deleted). Pure: never mutates its input.
 */
export function maskSecretPair<
  L extends KubernetesObject | undefined,
  D extends KubernetesObject | undefined,
>(live: L, desired: D): { live: L; desired: D } {
  const l = isSecret(live) ? live : undefined;
  const d = isSecret(desired) ? desired : undefined;
  if (!l && !d) return { live, desired };
  const before = l ? storedData(l) : {};
  const after = d ? storedData(d) : {};
  const maskedBefore: Record<string, string> = {};
  const maskedAfter: Record<string, string> = {};
  for (const k of Object.keys(before)) {
    const differs = k in after && before[k] !== after[k];
    maskedBefore[k] = differs ? SECRET_MASK_BEFORE : SECRET_MASK;
  }
  for (const k of Object.keys(after)) {
    const differs = k in before && before[k] !== after[k];
    maskedAfter[k] = differs ? SECRET_MASK_AFTER : SECRET_MASK;
  }
  const la = l?.metadata?.annotations?.[LAST_APPLIED];
  const da = d?.metadata?.annotations?.[LAST_APPLIED];
  const annotationDiffers = la !== undefined && da !== undefined && la !== da;
  return {
    live: (isSecret(live)
      ? masked(l, maskedBefore, annotationDiffers ? SECRET_MASK_BEFORE : SECRET_MASK)
      : live) as L,
    desired: (isSecret(desired)
      ? masked(d, maskedAfter, annotationDiffers ? SECRET_MASK_AFTER : SECRET_MASK)
      : desired) as D,
  };
}
