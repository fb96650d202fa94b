/**
 * Ingress `extensions/v1beta1` and `networking.k8s.io/v1beta1 → networking.k8s.io/v1` (removed
 * in 1.22). `serviceName`/`servicePort` → `service: {name, port: {number | name}}`,
 * `spec.backend` → `spec.defaultBackend`, and every path gets the `pathType` v1 requires:
 * `ImplementationSpecific`, which is how v1beta1 matched paths (the controller decides), so
 * routing does not change; a comment in the file says so.
 *
 * `kubernetes.io/ingress.class` is kept as it is and NOT turned into `spec.ingressClassName`:
 * the annotation names a controller's class, while `ingressClassName` must name an IngressClass
 * object, which may not exist under that name (the Ingress would then be served by no
 * controller); v1 also rejects an Ingress that sets both. Controllers still honour the
 * annotation; moving to `ingressClassName` is a separate, reviewed change.
 */
import {
  isObject,
  renameKey,
  type Flag,
  type JsonObject,
  type Manifest,
  type Note,
  type Rewrite,
} from '../types.js';

const PATH_TYPE_COMMENT = ' v1beta1 had no pathType: ImplementationSpecific is how it matched';

function convertBackend(backend: unknown, path: (string | number)[], flags: Flag[], notes: Note[]): unknown {
  if (!isObject(backend)) return backend;
  if (!('serviceName' in backend) && !('servicePort' in backend)) return backend; // `resource`
  const { serviceName, servicePort, ...rest } = backend;
  let port: JsonObject;
  if (typeof servicePort === 'number') port = { number: servicePort };
  else if (typeof servicePort === 'string' && /^\d+$/.test(servicePort)) {
    port = { number: Number(servicePort) };
    notes.push({
      path: [...path, 'service', 'port'],
      text: `servicePort "${servicePort}" (a quoted number) → port.number`,
    });
  } else if (typeof servicePort === 'string' && servicePort !== '') port = { name: servicePort };
  else {
    flags.push({
      path: [...path, 'servicePort'],
      reason: 'servicePort is missing or not a number or a port name',
    });
    return backend;
  }
  if (typeof serviceName !== 'string' || serviceName === '') {
    flags.push({ path: [...path, 'serviceName'], reason: 'serviceName is missing' });
    return backend;
  }
  return { service: { name: serviceName, port }, ...rest };
}

function rewriteIngress(obj: Manifest): ReturnType<Rewrite['rewrite']> {
  const flags: Flag[] = [];
  const notes: Note[] = [];
  const out = structuredClone(obj);
  out.apiVersion = 'networking.k8s.io/v1';
  if (!isObject(out.spec)) return { ok: true, object: out, notes };
  let spec = out.spec;
  if ('backend' in spec) {
    spec = renameKey(
      spec,
      'backend',
      'defaultBackend',
      convertBackend(spec.backend, ['spec', 'backend'], flags, notes),
    );
    notes.push({ path: ['spec', 'defaultBackend'], text: 'spec.backend → spec.defaultBackend' });
  }
  if (Array.isArray(spec.rules)) {
    spec.rules.forEach((rule, r) => {
      if (!isObject(rule) || !isObject(rule.http) || !Array.isArray(rule.http.paths)) return;
      rule.http.paths = rule.http.paths.map((p, i) => {
        if (!isObject(p)) return p;
        const at = ['spec', 'rules', r, 'http', 'paths', i];
        let entry: JsonObject =
          'backend' in p
            ? { ...p, backend: convertBackend(p.backend, [...at, 'backend'], flags, notes) }
            : { ...p };
        if (!('pathType' in entry)) {
          // pathType first, beside path: where a reader looks for how the path matches.
          entry = 'path' in entry ? insertPathType(entry) : { pathType: 'ImplementationSpecific', ...entry };
          notes.push({ path: [...at, 'pathType'], text: PATH_TYPE_COMMENT.trim(), comment: true });
        }
        return entry;
      });
    });
  }
  const annotations =
    isObject(out.metadata) && isObject(out.metadata.annotations) ? out.metadata.annotations : {};
  if ('kubernetes.io/ingress.class' in annotations && !('ingressClassName' in spec)) {
    notes.push({
      path: ['metadata', 'annotations', 'kubernetes.io/ingress.class'],
      text: 'kubernetes.io/ingress.class kept (not turned into spec.ingressClassName, which must name an IngressClass)',
    });
  }
  if (flags.length > 0) return { ok: false, flags };
  out.spec = spec;
  const moves =
    'backend' in (obj.spec as object) ? [{ from: ['spec', 'backend'], to: ['spec', 'defaultBackend'] }] : [];
  return { ok: true, object: out, notes, moves };
}

function insertPathType(entry: JsonObject): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(entry)) {
    out[k] = v;
    if (k === 'path') out.pathType = 'ImplementationSpecific';
  }
  return out;
}

export const ingressRewrite: Rewrite = { to: 'networking.k8s.io/v1', rewrite: rewriteIngress };
