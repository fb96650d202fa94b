/**
 * The workload model (Flagger's), as pure builders: the target Deployment from Git is the
 * canary; Sluice keeps a primary Deployment (a copy of the target's template at the last
 * promoted revision, with its selector rewritten so that its pods are distinct), three Services
 * (apex and primary select the primary pods, canary selects the target pods), and a primary twin
 * of an HPA that scales the target.
 */
import { createHash } from 'node:crypto';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CanaryRelease } from '../api/canary-release.js';
import type { ReleaseNames } from './names.js';

/**
 * The field manager of the objects Sluice builds whole (primary Deployment, Services, HPA twin).
 * Not `sluice-rollout`: the routers apply `spec.replicas` alone as `sluice-rollout`, and an apply
 * replaces everything its manager owned, so sharing the manager would strip the primary's
 * template on the next weight change. Replicas are set as `sluice-rollout` (see the executor).
 */
export const WORKLOAD_FIELD_MANAGER = 'sluice-rollout-workload';
/** On the primary: the target template hash it was copied at. */
export const TEMPLATE_HASH_ANNOTATION = 'sluice.dev/template-hash';
/** On the primary: the fingerprint of the Services applied with it (so they need no read per tick). */
export const SERVICES_ANNOTATION = 'sluice.dev/services';
/** On every object Sluice builds: which release owns it. */
export const RELEASE_LABEL = 'sluice.dev/canary-release';

type Json = Record<string, unknown>;

/** The parts of a Deployment this module reads. */
export interface DeploymentLike extends KubernetesObject {
  spec?: {
    replicas?: number;
    selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
    template?: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec?: Json;
    };
    [field: string]: unknown;
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    updatedReplicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
    unavailableReplicas?: number;
  };
}

/** The ConfigMaps and Secrets a pod template references (volumes, envFrom, env valueFrom, projected). */
export function referencedConfigs(template: { spec?: Json } | undefined): {
  configMaps: string[];
  secrets: string[];
} {
  const configMaps = new Set<string>();
  const secrets = new Set<string>();
  const spec = (template?.spec ?? {}) as Json;
  const containers = [...((spec.containers as Json[]) ?? []), ...((spec.initContainers as Json[]) ?? [])];
  for (const c of containers) {
    for (const from of (c.envFrom as Json[]) ?? []) {
      const cm = (from.configMapRef as Json | undefined)?.name;
      const s = (from.secretRef as Json | undefined)?.name;
      if (typeof cm === 'string') configMaps.add(cm);
      if (typeof s === 'string') secrets.add(s);
    }
    for (const env of (c.env as Json[]) ?? []) {
      const vf = env.valueFrom as Json | undefined;
      const cm = (vf?.configMapKeyRef as Json | undefined)?.name;
      const s = (vf?.secretKeyRef as Json | undefined)?.name;
      if (typeof cm === 'string') configMaps.add(cm);
      if (typeof s === 'string') secrets.add(s);
    }
  }
  for (const v of (spec.volumes as Json[]) ?? []) {
    const cm = (v.configMap as Json | undefined)?.name;
    const s = (v.secret as Json | undefined)?.secretName;
    if (typeof cm === 'string') configMaps.add(cm);
    if (typeof s === 'string') secrets.add(s);
    for (const src of ((v.projected as Json | undefined)?.sources as Json[]) ?? []) {
      const pcm = (src.configMap as Json | undefined)?.name;
      const ps = (src.secret as Json | undefined)?.name;
      if (typeof pcm === 'string') configMaps.add(pcm);
      if (typeof ps === 'string') secrets.add(ps);
    }
  }
  return { configMaps: [...configMaps].sort(), secrets: [...secrets].sort() };
}

/** JSON with object keys sorted, so that equal objects hash equally whatever their key order. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Json)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical((v as Json)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

/**
 * The hash that starts a run: the pod template and the data of every ConfigMap and Secret it
 * references (`undefined` data for one that does not exist). 16 hex digits of SHA-256.
 */
export function templateHash(
  template: unknown,
  configs: { configMaps: Record<string, unknown>; secrets: Record<string, unknown> } = {
    configMaps: {},
    secrets: {},
  },
): string {
  const secretDigests = Object.fromEntries(
    Object.entries(configs.secrets).map(([k, v]) => [
      k,
      createHash('sha256')
        .update(canonical(v ?? null))
        .digest('hex'),
    ]),
  );
  return createHash('sha256')
    .update(canonical({ template, configMaps: configs.configMaps, secrets: secretDigests }))
    .digest('hex')
    .slice(0, 16);
}

/** Rolled out: the controller saw the current generation and every desired replica is updated and available. */
export function deploymentReady(d: DeploymentLike): boolean {
  const want = d.spec?.replicas ?? 1;
  const s = d.status ?? {};
  if ((s.observedGeneration ?? 0) < (d.metadata?.generation ?? 0)) return false;
  if (want === 0) return true;
  return (s.updatedReplicas ?? 0) >= want && (s.availableReplicas ?? 0) >= want && (s.replicas ?? 0) <= want;
}

/** `value` → `value<suffix>` for every selector label of the target: the primary's own labels. */
export function primaryLabels(
  targetSelector: Record<string, string>,
  primarySuffix: string,
): Record<string, string> {
  return Object.fromEntries(Object.entries(targetSelector).map(([k, v]) => [k, `${v}${primarySuffix}`]));
}

function suffixOf(release: Pick<CanaryRelease, 'spec'>): string {
  return release.spec.service.primarySuffix ?? '-primary';
}

/**
 * The primary Deployment for `target`: its template and strategy, selector labels rewritten to
 * {@link primaryLabels}, stamped with the template hash and the Services fingerprint.
 * `spec.replicas` is left out on purpose (it belongs to `sluice-rollout`, see the module doc).
 */
export function primaryDeployment(
  release: Pick<CanaryRelease, 'metadata' | 'spec'>,
  names: ReleaseNames,
  target: DeploymentLike,
  hash: string,
): DeploymentLike {
  const sel = target.spec?.selector?.matchLabels ?? {};
  const labels = primaryLabels(sel, suffixOf(release));
  const tmpl = structuredClone(target.spec?.template ?? {});
  tmpl.metadata = { ...(tmpl.metadata ?? {}), labels: { ...(tmpl.metadata?.labels ?? {}), ...labels } };
  const spec: NonNullable<DeploymentLike['spec']> = {
    selector: { matchLabels: labels },
    template: tmpl,
  };
  for (const f of ['strategy', 'minReadySeconds', 'revisionHistoryLimit', 'progressDeadlineSeconds']) {
    if (target.spec?.[f] !== undefined) spec[f] = structuredClone(target.spec[f]);
  }
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: names.primary,
      namespace: names.namespace,
      labels: { ...labels, [RELEASE_LABEL]: release.metadata.name ?? '' },
      annotations: {
        [TEMPLATE_HASH_ANNOTATION]: hash,
        [SERVICES_ANNOTATION]: servicesFingerprint(release, names, sel),
      },
    },
    spec,
  };
}

/** The apex, primary and canary Services: apex and primary select the primary pods, canary the target pods. */
export function services(
  release: Pick<CanaryRelease, 'metadata' | 'spec'>,
  names: ReleaseNames,
  targetSelector: Record<string, string>,
): KubernetesObject[] {
  const { port, targetPort } = release.spec.service;
  const primarySel = primaryLabels(targetSelector, suffixOf(release));
  const svc = (name: string, selector: Record<string, string>) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: names.namespace,
      labels: { [RELEASE_LABEL]: release.metadata.name ?? '' },
    },
    spec: {
      type: 'ClusterIP',
      selector,
      ports: [{ name: 'http', port, protocol: 'TCP', targetPort: targetPort ?? port }],
    },
  });
  return [
    svc(names.apexService, primarySel),
    svc(names.primaryService, primarySel),
    svc(names.canaryService, { ...targetSelector }),
  ];
}

/** What the Services are built from: a different fingerprint means they must be applied again. */
export function servicesFingerprint(
  release: Pick<CanaryRelease, 'metadata' | 'spec'>,
  names: ReleaseNames,
  targetSelector: Record<string, string>,
): string {
  return createHash('sha256')
    .update(canonical(services(release, names, targetSelector)))
    .digest('hex')
    .slice(0, 16);
}

/** The primary twin of an HPA that scales the target: same spec, pointing at the primary. */
export function primaryHpa(
  hpa: KubernetesObject & { spec?: Json },
  names: ReleaseNames,
  releaseName: string,
): KubernetesObject {
  const spec = structuredClone(hpa.spec ?? {});
  spec.scaleTargetRef = { apiVersion: 'apps/v1', kind: 'Deployment', name: names.primary };
  return {
    apiVersion: hpa.apiVersion,
    kind: 'HorizontalPodAutoscaler',
    metadata: {
      name: `${hpa.metadata?.name ?? names.target}${names.primary.slice(names.target.length)}`,
      namespace: names.namespace,
      labels: { [RELEASE_LABEL]: releaseName },
    },
    spec,
  } as KubernetesObject;
}

/** The `spec.replicas`-only body that `sluice-rollout` applies to scale a Deployment. */
export function replicasBody(name: string, namespace: string, replicas: number): KubernetesObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace },
    spec: { replicas },
  } as KubernetesObject;
}
