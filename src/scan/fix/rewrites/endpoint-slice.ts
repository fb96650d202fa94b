/**
 * EndpointSlice `discovery.k8s.io/v1beta1 → v1` (removed in 1.25). v1 dropped
 * `endpoints[].topology`; the apiserver's own conversion moves `kubernetes.io/hostname` to
 * `nodeName`, `topology.kubernetes.io/zone` to `zone`, and keeps every other key in
 * `deprecatedTopology` — this does the same, so nothing is lost.
 */
import { isObject, type Manifest, type Note, type Rewrite } from '../types.js';

const HOSTNAME = 'kubernetes.io/hostname';
const ZONE = 'topology.kubernetes.io/zone';

function rewriteEndpointSlice(obj: Manifest): ReturnType<Rewrite['rewrite']> {
  const notes: Note[] = [];
  const out = structuredClone(obj);
  out.apiVersion = 'discovery.k8s.io/v1';
  if (Array.isArray(out.endpoints)) {
    out.endpoints = out.endpoints.map((e, i) => {
      if (!isObject(e) || !isObject(e.topology)) return e;
      const { topology, ...rest } = e;
      const { [HOSTNAME]: host, [ZONE]: zone, ...other } = topology;
      const entry = { ...rest };
      if (typeof host === 'string' && entry.nodeName === undefined) entry.nodeName = host;
      if (typeof zone === 'string' && entry.zone === undefined) entry.zone = zone;
      if (Object.keys(other).length > 0) entry.deprecatedTopology = other;
      notes.push({ path: ['endpoints', i], text: 'topology → nodeName / zone / deprecatedTopology' });
      return entry;
    });
  }
  return { ok: true, object: out, notes };
}

export const endpointSliceRewrite: Rewrite = { to: 'discovery.k8s.io/v1', rewrite: rewriteEndpointSlice };
