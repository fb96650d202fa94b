/**
 * `ValidatingWebhookConfiguration` / `MutatingWebhookConfiguration`
 * `admissionregistration.k8s.io/v1beta1 → v1` (removed in 1.22). The defaults changed between
 * the versions, so every default v1beta1 applied is written out, keeping what runs:
 * `failurePolicy: Ignore` (v1: Fail), `matchPolicy: Exact` (v1: Equivalent), `timeoutSeconds: 30`
 * (v1: 10), `admissionReviewVersions: ["v1beta1"]` (v1: required), and for mutating webhooks
 * `reinvocationPolicy: Never`.
 *
 * FLAG: `sideEffects` Unknown (also the v1beta1 default when absent) or Some — v1 accepts only
 * None and NoneOnDryRun, and whether the webhook really has no side effects on dry-run is
 * something only its author knows. Duplicate webhook names (v1 requires unique names).
 */
import { isObject, type Flag, type JsonObject, type Manifest, type Note, type Rewrite } from '../types.js';

const V1BETA1_DEFAULTS = [
  ['failurePolicy', 'Ignore'],
  ['matchPolicy', 'Exact'],
  ['timeoutSeconds', 30],
  ['admissionReviewVersions', ['v1beta1']],
] as const;

function rewriteWebhooks(obj: Manifest, mutating: boolean): ReturnType<Rewrite['rewrite']> {
  const flags: Flag[] = [];
  const notes: Note[] = [];
  const out = structuredClone(obj);
  out.apiVersion = 'admissionregistration.k8s.io/v1';
  if (!Array.isArray(out.webhooks)) return { ok: true, object: out, notes };
  const seen = new Set<string>();
  out.webhooks = out.webhooks.map((w, i) => {
    if (!isObject(w)) return w;
    const at = ['webhooks', i];
    const name = typeof w.name === 'string' ? w.name : '';
    if (seen.has(name))
      flags.push({
        path: [...at, 'name'],
        reason: `duplicate webhook name ${name}: v1 requires unique names`,
      });
    seen.add(name);
    const sideEffects = w.sideEffects ?? 'Unknown';
    if (sideEffects !== 'None' && sideEffects !== 'NoneOnDryRun') {
      flags.push({
        path: [...at, 'sideEffects'],
        reason: `sideEffects ${String(sideEffects)}${w.sideEffects === undefined ? ' (the v1beta1 default)' : ''} is not allowed in v1 (None or NoneOnDryRun): only the webhook's author knows whether it has side effects; set it by hand`,
      });
    }
    const entry: JsonObject = { ...w };
    const defaults: Array<readonly [string, unknown]> = [...V1BETA1_DEFAULTS];
    if (mutating) defaults.push(['reinvocationPolicy', 'Never']);
    for (const [key, value] of defaults) {
      if (entry[key] === undefined) {
        entry[key] = structuredClone(value);
        notes.push({
          path: [...at, key],
          text: `${key}: ${JSON.stringify(value)} written out (the v1beta1 default)`,
        });
      }
    }
    return entry;
  });
  if (flags.length > 0) return { ok: false, flags };
  return { ok: true, object: out, notes };
}

export const validatingWebhookRewrite: Rewrite = {
  to: 'admissionregistration.k8s.io/v1',
  rewrite: (o) => rewriteWebhooks(o, false),
};
export const mutatingWebhookRewrite: Rewrite = {
  to: 'admissionregistration.k8s.io/v1',
  rewrite: (o) => rewriteWebhooks(o, true),
};
