/**
 * Identity, namespacing, apply order and ownership of the objects a Delivery renders.
 * Pure: nothing here talks to a cluster; what only a cluster knows (the scope of a custom
 * kind) comes in through a callback.
 */
import { createHash } from 'node:crypto';
import { RenderError, formatLocation, type Origin } from './render-error.js';

/** The metadata fields Sluice reads; everything else is carried through untouched. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
  readonly [field: string]: unknown;
}

/**
 * A Kubernetes object as written in Git, after render has checked that `apiVersion`, `kind`
 * and `metadata.name` are non-empty strings. Plain data (never a typed client model, which
 * would drop unknown fields).
 */
export interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: ObjectMeta;
  readonly [field: string]: unknown;
}

/** A rendered object and where in the repository it was written. */
export interface RenderedObject {
  readonly object: Manifest;
  readonly origin: Origin;
}

/**
 * What names one object on a cluster. `group` is `""` for the core group. `namespace` is
 * absent for cluster-scoped objects (and, before namespacing, for objects that omit it).
 */
export interface ObjectRef {
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly name: string;
}

/** Splits `apps/v1` into `{group: 'apps', version: 'v1'}` and `v1` into `{group: '', version: 'v1'}`. */
export function splitApiVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  if (slash < 0) return { group: '', version: apiVersion };
  return { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** The identity of `obj`; an empty-string namespace counts as no namespace. */
export function objectRef(obj: Manifest): ObjectRef {
  const { group, version } = splitApiVersion(obj.apiVersion);
  const ns = obj.metadata.namespace;
  return ns
    ? { group, version, kind: obj.kind, namespace: ns, name: obj.metadata.name }
    : {
        group,
        version,
        kind: obj.kind,
        name: obj.metadata.name,
      };
}

/**
 * A stable string for the object, `group/Kind/namespace/name`, with empty segments for the
 * core group and for cluster-scoped objects (`/Namespace//prod`). The API version is left out
 * on purpose: `apps/v1beta2` and `apps/v1` name the same stored object. Unambiguous because
 * Kubernetes forbids `/` in groups, kinds, namespaces and names.
 */
export function objectId(ref: Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'>): string {
  return `${ref.group}/${ref.kind}/${ref.namespace ?? ''}/${ref.name}`;
}

/** Inverse of {@link objectId}; `undefined` for anything that is not exactly four segments. */
export function parseObjectId(
  id: string,
): Pick<ObjectRef, 'group' | 'kind' | 'namespace' | 'name'> | undefined {
  const parts = id.split('/');
  if (parts.length !== 4) return undefined;
  const [group, kind, namespace, name] = parts as [string, string, string, string];
  if (!kind || !name) return undefined;
  return namespace ? { group, kind, namespace, name } : { group, kind, name };
}

// ---------------------------------------------------------------------------------------------
// Scope

/** Whether objects of a kind live in a namespace. */
export type Scope = 'Namespaced' | 'Cluster';

/** Answers the scope of a kind the built-in table does not know (discovery, for CRDs). */
export type ScopeLookup = (group: string, kind: string) => Scope | undefined;

/**
 * Every cluster-scoped kind served by kube-apiserver itself (through v1.33), as `group/Kind`.
 * Any other kind in a built-in group is namespaced.
 */
export const CLUSTER_SCOPED_BUILTINS: ReadonlySet<string> = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  '/ComponentStatus',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/CSINode',
  'storage.k8s.io/VolumeAttachment',
  'storage.k8s.io/VolumeAttributesClass',
  'scheduling.k8s.io/PriorityClass',
  'node.k8s.io/RuntimeClass',
  'networking.k8s.io/IngressClass',
  'networking.k8s.io/IPAddress',
  'networking.k8s.io/ServiceCIDR',
  'certificates.k8s.io/CertificateSigningRequest',
  'certificates.k8s.io/ClusterTrustBundle',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'resource.k8s.io/DeviceClass',
  'resource.k8s.io/ResourceSlice',
  'resource.k8s.io/DeviceTaintRule',
  'authentication.k8s.io/TokenReview',
  'authentication.k8s.io/SelfSubjectReview',
  'authorization.k8s.io/SubjectAccessReview',
  'authorization.k8s.io/SelfSubjectAccessReview',
  'authorization.k8s.io/SelfSubjectRulesReview',
  'storagemigration.k8s.io/StorageVersionMigration',
  'internal.apiserver.k8s.io/StorageVersion',
  'policy/PodSecurityPolicy',
]);

const BUILTIN_GROUPS: ReadonlySet<string> = new Set([
  '',
  'apps',
  'batch',
  'autoscaling',
  'policy',
  'networking.k8s.io',
  'rbac.authorization.k8s.io',
  'storage.k8s.io',
  'scheduling.k8s.io',
  'apiextensions.k8s.io',
  'admissionregistration.k8s.io',
  'apiregistration.k8s.io',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'node.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'resource.k8s.io',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'storagemigration.k8s.io',
  'internal.apiserver.k8s.io',
]);

/** The scope of a built-in kind; `undefined` for kinds outside the built-in API groups. */
export function builtinScope(group: string, kind: string): Scope | undefined {
  if (CLUSTER_SCOPED_BUILTINS.has(`${group}/${kind}`)) return 'Cluster';
  return BUILTIN_GROUPS.has(group) ? 'Namespaced' : undefined;
}

/**
 * Scopes declared by CustomResourceDefinitions in the render itself. Needed because a CRD and
 * its first custom resources usually arrive in the same commit, before discovery can know them.
 */
export function scopesFromRenderedCrds(objects: readonly RenderedObject[]): ScopeLookup {
  const scopes = new Map<string, Scope>();
  for (const { object } of objects) {
    if (object.kind !== 'CustomResourceDefinition') continue;
    if (splitApiVersion(object.apiVersion).group !== 'apiextensions.k8s.io') continue;
    const spec = object.spec as { group?: unknown; scope?: unknown; names?: { kind?: unknown } } | undefined;
    const kind = spec?.names?.kind;
    if (typeof spec?.group !== 'string' || typeof kind !== 'string') continue;
    if (spec.scope === 'Namespaced' || spec.scope === 'Cluster')
      scopes.set(`${spec.group}/${kind}`, spec.scope);
  }
  return (group, kind) => scopes.get(`${group}/${kind}`);
}

/** How to place rendered objects into namespaces. */
export interface NamespacingOptions {
  /** Namespace for namespaced objects that name none (the Delivery's `spec.targetNamespace`). */
  readonly targetNamespace?: string;
  /** Scope of custom kinds not defined in the render; usually backed by discovery. */
  readonly lookupScope?: ScopeLookup;
}

/** Either every object has its final identity, or the reasons some could not get one. */
export type NamespacingResult =
  | { readonly ok: true; readonly objects: readonly RenderedObject[] }
  | { readonly ok: false; readonly errors: readonly RenderError[] };

/**
 * Gives every object the identity the API server will give it, without mutating the input:
 * cluster-scoped objects lose a stray `metadata.namespace` (the API server drops it too, and
 * keeping it would give one object two ids); namespaced objects without one get
 * `targetNamespace` (an explicit namespace in Git is kept). Never guesses: a namespaced object
 * with no namespace and no target, or a kind whose scope nobody knows, is an error. Objects
 * that become identical after namespacing are reported as duplicates.
 */
export function applyNamespacing(
  objects: readonly RenderedObject[],
  opts: NamespacingOptions = {},
): NamespacingResult {
  const fromRender = scopesFromRenderedCrds(objects);
  const errors: RenderError[] = [];
  const out: RenderedObject[] = [];
  for (const item of objects) {
    const { object, origin } = item;
    const { group } = splitApiVersion(object.apiVersion);
    const scope =
      builtinScope(group, object.kind) ??
      fromRender(group, object.kind) ??
      opts.lookupScope?.(group, object.kind);
    const ns = object.metadata.namespace;
    if (scope === undefined) {
      errors.push(
        new RenderError(
          'UnknownScope',
          origin,
          `cannot tell whether ${group || 'core'}/${object.kind} is namespaced: no CustomResourceDefinition for it in the render or on the cluster`,
        ),
      );
    } else if (scope === 'Cluster') {
      if (ns === undefined) {
        out.push(item);
      } else {
        const { namespace: _dropped, ...metadata } = object.metadata;
        out.push({ origin, object: { ...object, metadata: metadata as ObjectMeta } });
      }
    } else if (ns) {
      out.push(item);
    } else if (opts.targetNamespace) {
      out.push({
        origin,
        object: { ...object, metadata: { ...object.metadata, namespace: opts.targetNamespace } },
      });
    } else {
      errors.push(
        new RenderError(
          'MissingNamespace',
          origin,
          `${object.kind} ${object.metadata.name} is namespaced but has no metadata.namespace, and the Delivery sets no targetNamespace`,
        ),
      );
    }
  }
  errors.push(...findDuplicates(out));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, objects: out };
}

/**
 * One error per object whose id was already taken by an earlier object in `objects`, located at
 * the later definition and naming the first: applying both would make the last one silently win.
 */
export function findDuplicates(objects: readonly RenderedObject[]): RenderError[] {
  const first = new Map<string, Origin>();
  const errors: RenderError[] = [];
  for (const { object, origin } of objects) {
    const id = objectId(objectRef(object));
    const seen = first.get(id);
    if (seen) {
      errors.push(
        new RenderError(
          'DuplicateObject',
          origin,
          `duplicate object ${id}: also defined at ${formatLocation(seen)}`,
        ),
      );
    } else {
      first.set(id, origin);
    }
  }
  return errors;
}

// ---------------------------------------------------------------------------------------------
// Staging

const ADMISSION_KINDS: ReadonlySet<string> = new Set([
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'admissionregistration.k8s.io/MutatingAdmissionPolicy',
  'admissionregistration.k8s.io/MutatingAdmissionPolicyBinding',
  'apiregistration.k8s.io/APIService',
]);

// Helm's install order (pkg/releaseutil/kind_sorter.go): dependencies before dependents, so a
// one-pass apply within the last stage rarely references something not yet created.
const KIND_ORDER: readonly string[] = [
  'NetworkPolicy',
  'ResourceQuota',
  'LimitRange',
  'PodDisruptionBudget',
  'ServiceAccount',
  'Secret',
  'ConfigMap',
  'PersistentVolumeClaim',
  'Role',
  'RoleBinding',
  'Service',
  'DaemonSet',
  'Pod',
  'ReplicationController',
  'ReplicaSet',
  'Deployment',
  'HorizontalPodAutoscaler',
  'StatefulSet',
  'Job',
  'CronJob',
  'Ingress',
];

/**
 * The apply stage of a kind, 0 first. Each stage must be applied (and, for CRDs, Established)
 * before the next starts:
 * 0. CustomResourceDefinitions — custom resources in later stages need their types;
 * 1. Namespaces — everything namespaced needs them;
 * 2. other built-in cluster-scoped definitions (ClusterRoles, bindings, classes, PVs);
 * 3. everything else, including custom resources;
 * 4. admission webhooks, admission policies and APIServices — last, because they intercept
 *    requests, and until their backends from stage 3 run they would reject or break them.
 */
export function stageOf(ref: Pick<ObjectRef, 'group' | 'kind'>): number {
  const key = `${ref.group}/${ref.kind}`;
  if (key === 'apiextensions.k8s.io/CustomResourceDefinition') return 0;
  if (key === '/Namespace') return 1;
  if (ADMISSION_KINDS.has(key)) return 4;
  if (CLUSTER_SCOPED_BUILTINS.has(key)) return 2;
  return 3;
}

function kindRank(kind: string): number {
  const i = KIND_ORDER.indexOf(kind);
  return i < 0 ? KIND_ORDER.length : i;
}

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Objects grouped into apply stages (see {@link stageOf}), empty stages left out. Within a
 * stage the order is deterministic — Helm's kind order, then id — so the same commit always
 * applies in the same order. The input is not modified.
 */
export function stageObjects<T extends { readonly object: Manifest }>(
  objects: readonly T[],
): ReadonlyArray<readonly T[]> {
  const keyed = objects.map((item) => {
    const ref = objectRef(item.object);
    return { item, stage: stageOf(ref), rank: kindRank(ref.kind), id: objectId(ref) };
  });
  keyed.sort((a, b) => a.stage - b.stage || a.rank - b.rank || byCodePoint(a.id, b.id));
  const stages = new Map<number, T[]>();
  for (const k of keyed) {
    const list = stages.get(k.stage) ?? [];
    list.push(k.item);
    stages.set(k.stage, list);
  }
  return [...stages.values()];
}

// ---------------------------------------------------------------------------------------------
// Ownership

/** Label naming the Delivery (`<namespace>.<name>`) that applied an object. */
export const DELIVERY_LABEL = 'sluice.dev/delivery';
/** Label naming the `Cluster` the object was applied to as (one physical cluster may be registered twice). */
export const CLUSTER_LABEL = 'sluice.dev/cluster';

/** Which Delivery, on which member cluster, owns an object. */
export interface DeliveryOwner {
  readonly namespace: string;
  readonly name: string;
  readonly cluster: string;
}

const MAX_LABEL_VALUE = 63;

/**
 * `text` as a valid label value for the DNS names Sluice builds labels from: unchanged when it
 * fits 63 characters, else a prefix plus 10 hex digits of its SHA-256 — deterministic, so a
 * label selector built from the same owner always matches.
 */
export function boundedLabelValue(text: string): string {
  if (text.length <= MAX_LABEL_VALUE) return text;
  const hash = createHash('sha256').update(text).digest('hex').slice(0, 10);
  const prefix = text.slice(0, MAX_LABEL_VALUE - hash.length - 1).replace(/[^A-Za-z0-9]+$/, '');
  return `${prefix}-${hash}`;
}

/**
 * The labels that mark an object as applied by `owner`; prune deletes only objects whose live
 * copy still carries all of them. Namespace names cannot contain dots, so `<ns>.<name>` splits
 * unambiguously at the first dot.
 */
export function ownerLabels(owner: DeliveryOwner): Readonly<Record<string, string>> {
  return {
    [DELIVERY_LABEL]: boundedLabelValue(`${owner.namespace}.${owner.name}`),
    [CLUSTER_LABEL]: boundedLabelValue(owner.cluster),
  };
}

/**
 * A copy of `obj` with `labels` added to `metadata.labels`; `obj` is not modified. The owner's
 * labels win over same-named labels from Git, so a manifest cannot claim another owner.
 */
export function withOwnerLabels(obj: Manifest, labels: Readonly<Record<string, string>>): Manifest {
  return { ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, ...labels } } };
}

/** True when `live` carries every one of `owner`'s labels with the same value. */
export function carriesOwnerLabels(
  live: Readonly<Record<string, string>> | undefined,
  owner: Readonly<Record<string, string>>,
): boolean {
  if (!live) return false;
  return Object.entries(owner).every(([k, v]) => live[k] === v);
}
