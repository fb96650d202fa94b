/**
 * The table of Kubernetes API versions that are deprecated or no longer served, with their
 * replacements. One row per (group, version, kind) a manifest can name.
 *
 * Sources, in order of authority:
 *  1. the `APILifecycleDeprecated/Removed/Replacement` functions that Kubernetes generates for
 *     every pre-release type (`k8s.io/api` v0.36.3, `zz_generated.prerelease-lifecycle.go`). Since
 *     the apiserver's ResourceExpirationEvaluator stops serving a type at its `Removed` release,
 *     those numbers are what a cluster actually does;
 *  2. the Kubernetes "Deprecated API Migration Guide" (every row of v1.16 … v1.32) for the
 *     replacements and the notable changes beyond the apiVersion;
 *  3. for types Kubernetes has since deleted from its code (batch/v2alpha1, RBAC v1alpha1), the
 *     release notes of the removing release.
 * Where the guide or the popular scanners (pluto, kubent) say something else, `note` says so.
 */

/** One API version of one kind that is deprecated, removed, or scheduled for removal. */
export interface ApiRemoval {
  /** API group; '' for the core group. */
  group: string;
  /** e.g. 'v1beta1'. */
  version: string;
  /** e.g. 'Ingress'. */
  kind: string;
  /** Minor release that deprecated this version, e.g. '1.16'. */
  deprecatedIn: string;
  /**
   * First release that no longer serves it, e.g. '1.22'; may be a future release (scheduled by the
   * type's prerelease lifecycle). null = deprecated, no removal scheduled.
   */
  removedIn: string | null;
  /** The version to migrate to; null when nothing replaces it (PodSecurityPolicy). */
  replacement: { apiVersion: string; kind: string } | null;
  /** What changes beyond the apiVersion, or a correction to the guide/tools. */
  note?: string;
  /** Release the replacement is first served in (lets a fixer pick an interim version). */
  replacementSince?: string;
}

/** The newest Kubernetes minor the table was checked against; `sluice scan`'s default target. */
export const LATEST_KNOWN_KUBE_VERSION = '1.36';

type Row = Omit<ApiRemoval, 'group' | 'version'> & { apiVersion: string };

const APPS_V1 = 'apps/v1';
const WORKLOAD_NOTE =
  'apps/v1: spec.selector is required and immutable (write the template labels as matchLabels). Not served by default from 1.16; until 1.18 --runtime-config could re-enable it (kubernetes#85903), so a 1.16/1.17 cluster may still accept it';

function rows(list: readonly Row[]): ApiRemoval[] {
  return list.map(({ apiVersion, ...rest }) => {
    const slash = apiVersion.indexOf('/');
    return {
      group: slash < 0 ? '' : apiVersion.slice(0, slash),
      version: slash < 0 ? apiVersion : apiVersion.slice(slash + 1),
      ...rest,
    };
  });
}

const same = (apiVersion: string, kind: string) => ({ apiVersion, kind });

/** Every row; see the module comment for sources. Sorted by removal release. */
export const API_REMOVALS: readonly ApiRemoval[] = Object.freeze(
  rows([
    // ---- removed in 1.16 ------------------------------------------------------------------
    {
      apiVersion: 'extensions/v1beta1',
      kind: 'Deployment',
      deprecatedIn: '1.8',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'Deployment'),
      replacementSince: '1.9',
      note: `${WORKLOAD_NOTE}; spec.rollbackTo removed; defaults change: progressDeadlineSeconds 600, revisionHistoryLimit 10, maxSurge/maxUnavailable 25% (were 1/1). The guide and pluto say deprecated in 1.9; the apiserver marks it deprecated since 1.8.`,
    },
    {
      apiVersion: 'extensions/v1beta1',
      kind: 'DaemonSet',
      deprecatedIn: '1.8',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'DaemonSet'),
      replacementSince: '1.9',
      note: `${WORKLOAD_NOTE}; spec.templateGeneration removed; updateStrategy.type default changes from OnDelete to RollingUpdate (write OnDelete to keep the behaviour).`,
    },
    {
      apiVersion: 'extensions/v1beta1',
      kind: 'ReplicaSet',
      deprecatedIn: '1.8',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'ReplicaSet'),
      replacementSince: '1.9',
      note: `${WORKLOAD_NOTE}. pluto leaves deprecated-in empty; the apiserver says 1.8.`,
    },
    {
      apiVersion: 'extensions/v1beta1',
      kind: 'NetworkPolicy',
      deprecatedIn: '1.9',
      removedIn: '1.16',
      replacement: same('networking.k8s.io/v1', 'NetworkPolicy'),
      replacementSince: '1.8',
    },
    {
      apiVersion: 'extensions/v1beta1',
      kind: 'PodSecurityPolicy',
      deprecatedIn: '1.10',
      removedIn: '1.16',
      replacement: same('policy/v1beta1', 'PodSecurityPolicy'),
      replacementSince: '1.10',
      note: 'The replacement policy/v1beta1 PodSecurityPolicy was itself removed in 1.25 with no successor (Pod Security Admission): for targets >= 1.25 delete it.',
    },
    {
      apiVersion: 'apps/v1beta1',
      kind: 'Deployment',
      deprecatedIn: '1.8',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'Deployment'),
      replacementSince: '1.9',
      note: `${WORKLOAD_NOTE}; spec.rollbackTo removed; revisionHistoryLimit default 2 → 10; progressDeadlineSeconds default 600. pluto says deprecated in 1.9; the apiserver says 1.8.`,
    },
    {
      apiVersion: 'apps/v1beta1',
      kind: 'StatefulSet',
      deprecatedIn: '1.8',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'StatefulSet'),
      replacementSince: '1.9',
      note: `${WORKLOAD_NOTE}; updateStrategy.type default changes from OnDelete to RollingUpdate.`,
    },
    {
      apiVersion: 'apps/v1beta1',
      kind: 'ControllerRevision',
      deprecatedIn: '1.8',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'ControllerRevision'),
      replacementSince: '1.9',
      note: 'Not in the guide; from the apiserver lifecycle data. (pluto lists an apps/v1beta1 ReplicaSet, a kind apps/v1beta1 never served.)',
    },
    {
      apiVersion: 'apps/v1beta2',
      kind: 'Deployment',
      deprecatedIn: '1.9',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'Deployment'),
      replacementSince: '1.9',
      note: WORKLOAD_NOTE,
    },
    {
      apiVersion: 'apps/v1beta2',
      kind: 'StatefulSet',
      deprecatedIn: '1.9',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'StatefulSet'),
      replacementSince: '1.9',
      note: WORKLOAD_NOTE,
    },
    {
      apiVersion: 'apps/v1beta2',
      kind: 'DaemonSet',
      deprecatedIn: '1.9',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'DaemonSet'),
      replacementSince: '1.9',
      note: WORKLOAD_NOTE,
    },
    {
      apiVersion: 'apps/v1beta2',
      kind: 'ReplicaSet',
      deprecatedIn: '1.9',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'ReplicaSet'),
      replacementSince: '1.9',
      note: `${WORKLOAD_NOTE}. pluto leaves deprecated-in empty; the apiserver says 1.9.`,
    },
    {
      apiVersion: 'apps/v1beta2',
      kind: 'ControllerRevision',
      deprecatedIn: '1.9',
      removedIn: '1.16',
      replacement: same(APPS_V1, 'ControllerRevision'),
      replacementSince: '1.9',
      note: 'Not in the guide; from the apiserver lifecycle data.',
    },
    // ---- removed in 1.21 (alpha) -----------------------------------------------------------
    {
      apiVersion: 'batch/v2alpha1',
      kind: 'CronJob',
      deprecatedIn: '1.8',
      removedIn: '1.21',
      replacement: same('batch/v1', 'CronJob'),
      replacementSince: '1.21',
      note: 'Alpha, never served by default; superseded by batch/v1beta1 in 1.8 and deleted in 1.21. Not in the guide.',
    },
    // ---- removed in 1.22 ------------------------------------------------------------------
    ...(['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'] as const).map((kind): Row => ({
      apiVersion: 'admissionregistration.k8s.io/v1beta1',
      kind,
      deprecatedIn: '1.16',
      removedIn: '1.22',
      replacement: same('admissionregistration.k8s.io/v1', kind),
      replacementSince: '1.16',
      note: 'v1 defaults differ: failurePolicy Ignore → Fail, matchPolicy Exact → Equivalent, timeoutSeconds 30s → 10s; sideEffects is required and must be None or NoneOnDryRun; admissionReviewVersions is required.',
    })),
    {
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      deprecatedIn: '1.16',
      removedIn: '1.22',
      replacement: same('apiextensions.k8s.io/v1', 'CustomResourceDefinition'),
      replacementSince: '1.16',
      note: 'v1: spec.scope has no default; spec.version → spec.versions; spec.validation, subresources and additionalPrinterColumns move into each spec.versions[*] (JSONPath → jsonPath); a structural schema is required per version; spec.conversion.webhookClientConfig → spec.conversion.webhook.clientConfig, conversionReviewVersions → spec.conversion.webhook.conversionReviewVersions; preserveUnknownFields: true is not allowed (use x-kubernetes-preserve-unknown-fields).',
    },
    {
      apiVersion: 'apiregistration.k8s.io/v1beta1',
      kind: 'APIService',
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('apiregistration.k8s.io/v1', 'APIService'),
      replacementSince: '1.10',
      note: 'pluto says deprecated in 1.10; the apiserver marks it deprecated from 1.19.',
    },
    {
      apiVersion: 'authentication.k8s.io/v1beta1',
      kind: 'TokenReview',
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('authentication.k8s.io/v1', 'TokenReview'),
      replacementSince: '1.6',
      note: 'pluto says deprecated in 1.6; the apiserver marks it deprecated from 1.19.',
    },
    ...(
      [
        'SubjectAccessReview',
        'LocalSubjectAccessReview',
        'SelfSubjectAccessReview',
        'SelfSubjectRulesReview',
      ] as const
    ).map((kind): Row => ({
      apiVersion: 'authorization.k8s.io/v1beta1',
      kind,
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('authorization.k8s.io/v1', kind),
      replacementSince: '1.6',
      note:
        kind === 'SelfSubjectRulesReview'
          ? 'Not listed in the guide, but stopped being served with the rest of authorization.k8s.io/v1beta1 in 1.22.'
          : 'v1: spec.group is renamed spec.groups.',
    })),
    {
      apiVersion: 'certificates.k8s.io/v1beta1',
      kind: 'CertificateSigningRequest',
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('certificates.k8s.io/v1', 'CertificateSigningRequest'),
      replacementSince: '1.19',
      note: 'v1: spec.signerName is required (kubernetes.io/legacy-unknown cannot be requested); spec.usages is required and must be unique; status.conditions may not repeat a type and status.certificate must be PEM.',
    },
    {
      apiVersion: 'coordination.k8s.io/v1beta1',
      kind: 'Lease',
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('coordination.k8s.io/v1', 'Lease'),
      replacementSince: '1.14',
      note: 'pluto says deprecated in 1.14; the apiserver marks it deprecated from 1.19.',
    },
    {
      apiVersion: 'extensions/v1beta1',
      kind: 'Ingress',
      deprecatedIn: '1.14',
      removedIn: '1.22',
      replacement: same('networking.k8s.io/v1', 'Ingress'),
      replacementSince: '1.19',
      note: 'v1: spec.backend → spec.defaultBackend; serviceName → service.name; servicePort → service.port.number (int) or service.port.name (string); pathType is required on every path (ImplementationSpecific keeps the old meaning).',
    },
    {
      apiVersion: 'networking.k8s.io/v1beta1',
      kind: 'Ingress',
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('networking.k8s.io/v1', 'Ingress'),
      replacementSince: '1.19',
      note: 'v1: spec.backend → spec.defaultBackend; serviceName → service.name; servicePort → service.port.number or service.port.name; pathType is required on every path.',
    },
    {
      apiVersion: 'networking.k8s.io/v1beta1',
      kind: 'IngressClass',
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('networking.k8s.io/v1', 'IngressClass'),
      replacementSince: '1.19',
    },
    ...(['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding'] as const).flatMap((kind): Row[] => [
      {
        apiVersion: 'rbac.authorization.k8s.io/v1beta1',
        kind,
        deprecatedIn: '1.17',
        removedIn: '1.22',
        replacement: same('rbac.authorization.k8s.io/v1', kind),
        replacementSince: '1.8',
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1alpha1',
        kind,
        deprecatedIn: '1.17',
        removedIn: '1.22',
        replacement: same('rbac.authorization.k8s.io/v1', kind),
        replacementSince: '1.8',
        note: 'Alpha, not in the guide; stopped being served together with v1beta1 in 1.22.',
      },
    ]),
    {
      apiVersion: 'scheduling.k8s.io/v1beta1',
      kind: 'PriorityClass',
      deprecatedIn: '1.14',
      removedIn: '1.22',
      replacement: same('scheduling.k8s.io/v1', 'PriorityClass'),
      replacementSince: '1.14',
      note: 'The 1.16 release notes announced its removal for 1.17; it was served until 1.21 and removed in 1.22 (apiserver lifecycle data).',
    },
    {
      apiVersion: 'storage.k8s.io/v1beta1',
      kind: 'CSIDriver',
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('storage.k8s.io/v1', 'CSIDriver'),
      replacementSince: '1.19',
      note: 'The guide says available since 1.19; the apiserver lifecycle says storage.k8s.io/v1 CSIDriver was introduced in 1.18 (GA in 1.19).',
    },
    {
      apiVersion: 'storage.k8s.io/v1beta1',
      kind: 'CSINode',
      deprecatedIn: '1.17',
      removedIn: '1.22',
      replacement: same('storage.k8s.io/v1', 'CSINode'),
      replacementSince: '1.17',
    },
    {
      apiVersion: 'storage.k8s.io/v1beta1',
      kind: 'StorageClass',
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('storage.k8s.io/v1', 'StorageClass'),
      replacementSince: '1.6',
      note: 'pluto says deprecated in 1.6; the apiserver marks it deprecated from 1.19.',
    },
    {
      apiVersion: 'storage.k8s.io/v1beta1',
      kind: 'VolumeAttachment',
      deprecatedIn: '1.19',
      removedIn: '1.22',
      replacement: same('storage.k8s.io/v1', 'VolumeAttachment'),
      replacementSince: '1.13',
      note: 'pluto says deprecated in 1.13; the apiserver marks it deprecated from 1.19.',
    },
    // ---- removed in 1.24 (alpha) -----------------------------------------------------------
    {
      apiVersion: 'storage.k8s.io/v1alpha1',
      kind: 'CSIStorageCapacity',
      deprecatedIn: '1.21',
      removedIn: '1.24',
      replacement: same('storage.k8s.io/v1', 'CSIStorageCapacity'),
      replacementSince: '1.24',
      note: 'Alpha, not in the guide.',
    },
    {
      apiVersion: 'storage.k8s.io/v1alpha1',
      kind: 'VolumeAttachment',
      deprecatedIn: '1.21',
      removedIn: '1.24',
      replacement: same('storage.k8s.io/v1', 'VolumeAttachment'),
      replacementSince: '1.13',
      note: 'Alpha, not in the guide.',
    },
    // ---- removed in 1.25 ------------------------------------------------------------------
    {
      apiVersion: 'batch/v1beta1',
      kind: 'CronJob',
      deprecatedIn: '1.21',
      removedIn: '1.25',
      replacement: same('batch/v1', 'CronJob'),
      replacementSince: '1.21',
    },
    {
      apiVersion: 'discovery.k8s.io/v1beta1',
      kind: 'EndpointSlice',
      deprecatedIn: '1.21',
      removedIn: '1.25',
      replacement: same('discovery.k8s.io/v1', 'EndpointSlice'),
      replacementSince: '1.21',
      note: "v1: endpoints[*].topology is removed: topology['kubernetes.io/hostname'] → nodeName, topology['topology.kubernetes.io/zone'] → zone.",
    },
    {
      apiVersion: 'events.k8s.io/v1beta1',
      kind: 'Event',
      deprecatedIn: '1.22',
      removedIn: '1.25',
      replacement: same('events.k8s.io/v1', 'Event'),
      replacementSince: '1.19',
      note: 'v1: type is Normal or Warning; regarding, action, reason, reportingController and reportingInstance are required on create; deprecatedCount/deprecatedFirstTimestamp/... are read-only. pluto says deprecated in 1.19; the apiserver marks it deprecated from 1.22.',
    },
    {
      apiVersion: 'autoscaling/v2beta1',
      kind: 'HorizontalPodAutoscaler',
      deprecatedIn: '1.22',
      removedIn: '1.25',
      replacement: same('autoscaling/v2', 'HorizontalPodAutoscaler'),
      replacementSince: '1.23',
      note: 'v2: targetAverageUtilization → target.averageUtilization with target.type Utilization; targetAverageValue → target.averageValue with target.type AverageValue; metricName/metricSelector → metric.name/metric.selector.',
    },
    {
      apiVersion: 'policy/v1beta1',
      kind: 'PodDisruptionBudget',
      deprecatedIn: '1.21',
      removedIn: '1.25',
      replacement: same('policy/v1', 'PodDisruptionBudget'),
      replacementSince: '1.21',
      note: 'v1: an empty spec.selector ({}) selects every pod in the namespace (in v1beta1 it selected none); policy/v1 also adds unhealthyPodEvictionPolicy.',
    },
    {
      apiVersion: 'policy/v1beta1',
      kind: 'PodSecurityPolicy',
      deprecatedIn: '1.21',
      removedIn: '1.25',
      replacement: null,
      note: 'No replacement: migrate to Pod Security Admission (namespace labels pod-security.kubernetes.io/*) or a third-party admission webhook.',
    },
    {
      apiVersion: 'node.k8s.io/v1beta1',
      kind: 'RuntimeClass',
      deprecatedIn: '1.22',
      removedIn: '1.25',
      replacement: same('node.k8s.io/v1', 'RuntimeClass'),
      replacementSince: '1.20',
    },
    // ---- removed in 1.26 ------------------------------------------------------------------
    ...(['FlowSchema', 'PriorityLevelConfiguration'] as const).map((kind): Row => ({
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta1',
      kind,
      deprecatedIn: '1.23',
      removedIn: '1.26',
      replacement: same('flowcontrol.apiserver.k8s.io/v1', kind),
      replacementSince: '1.29',
      note: 'The guide names v1beta2 (served 1.23–1.28) as the replacement; for targets 1.26–1.28 use v1beta3, from 1.29 v1. pluto lists this row as kind "FlowControl", which no object has, so it never matches.',
    })),
    {
      apiVersion: 'autoscaling/v2beta2',
      kind: 'HorizontalPodAutoscaler',
      deprecatedIn: '1.23',
      removedIn: '1.26',
      replacement: same('autoscaling/v2', 'HorizontalPodAutoscaler'),
      replacementSince: '1.23',
    },
    // ---- removed in 1.27 ------------------------------------------------------------------
    {
      apiVersion: 'storage.k8s.io/v1beta1',
      kind: 'CSIStorageCapacity',
      deprecatedIn: '1.24',
      removedIn: '1.27',
      replacement: same('storage.k8s.io/v1', 'CSIStorageCapacity'),
      replacementSince: '1.24',
    },
    // ---- removed in 1.29 ------------------------------------------------------------------
    ...(['FlowSchema', 'PriorityLevelConfiguration'] as const).map((kind): Row => ({
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
      kind,
      deprecatedIn: '1.26',
      removedIn: '1.29',
      replacement: same('flowcontrol.apiserver.k8s.io/v1', kind),
      replacementSince: '1.29',
      note:
        kind === 'PriorityLevelConfiguration'
          ? 'v1beta3/v1: spec.limited.assuredConcurrencyShares is renamed spec.limited.nominalConcurrencyShares; in v1 it defaults to 30 only when unset (an explicit 0 stays 0). For targets 1.26–1.28 use v1beta3.'
          : 'For targets 1.26–1.28 use v1beta3.',
    })),
    // ---- removed in 1.32 ------------------------------------------------------------------
    ...(['FlowSchema', 'PriorityLevelConfiguration'] as const).map((kind): Row => ({
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3',
      kind,
      deprecatedIn: '1.29',
      removedIn: '1.32',
      replacement: same('flowcontrol.apiserver.k8s.io/v1', kind),
      replacementSince: '1.29',
      note:
        kind === 'PriorityLevelConfiguration'
          ? 'v1: spec.limited.nominalConcurrencyShares defaults to 30 only when unset; an explicit 0 is kept.'
          : undefined,
    })),
    ...(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'] as const).map((kind): Row => ({
      apiVersion: 'admissionregistration.k8s.io/v1alpha1',
      kind,
      deprecatedIn: '1.29',
      removedIn: '1.32',
      replacement: same('admissionregistration.k8s.io/v1', kind),
      replacementSince: '1.30',
      note: 'Alpha, not in the guide; from the apiserver lifecycle data.',
    })),
    {
      apiVersion: 'authentication.k8s.io/v1alpha1',
      kind: 'SelfSubjectReview',
      deprecatedIn: '1.29',
      removedIn: '1.32',
      replacement: same('authentication.k8s.io/v1', 'SelfSubjectReview'),
      replacementSince: '1.28',
      note: 'Alpha, not in the guide; from the apiserver lifecycle data.',
    },
    // ---- removed after 1.32: confirmed by the apiserver's lifecycle data (k8s.io/api v0.36.3),
    // which the apiserver enforces; the guide does not list them yet. ------------------------
    {
      apiVersion: 'authentication.k8s.io/v1beta1',
      kind: 'SelfSubjectReview',
      deprecatedIn: '1.30',
      removedIn: '1.33',
      replacement: same('authentication.k8s.io/v1', 'SelfSubjectReview'),
      replacementSince: '1.28',
      note: 'Not in the guide; from the apiserver lifecycle data.',
    },
    ...(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'] as const).map((kind): Row => ({
      apiVersion: 'admissionregistration.k8s.io/v1beta1',
      kind,
      deprecatedIn: '1.31',
      removedIn: '1.34',
      replacement: same('admissionregistration.k8s.io/v1', kind),
      replacementSince: '1.30',
      note: 'Not in the guide; from the apiserver lifecycle data. v1beta1 was never served by default.',
    })),
    {
      apiVersion: 'storage.k8s.io/v1alpha1',
      kind: 'VolumeAttributesClass',
      deprecatedIn: '1.32',
      removedIn: '1.35',
      replacement: same('storage.k8s.io/v1', 'VolumeAttributesClass'),
      replacementSince: '1.34',
      note: 'Alpha, not in the guide; from the apiserver lifecycle data.',
    },
    // ---- deprecated now, removal scheduled by the lifecycle data (may slip) -----------------
    ...(['IPAddress', 'ServiceCIDR'] as const).map((kind): Row => ({
      apiVersion: 'networking.k8s.io/v1beta1',
      kind,
      deprecatedIn: '1.34',
      removedIn: '1.37',
      replacement: same('networking.k8s.io/v1', kind),
      replacementSince: '1.33',
      note: 'Scheduled by the apiserver lifecycle data; not in the guide yet. Never served by default.',
    })),
    {
      apiVersion: 'storage.k8s.io/v1beta1',
      kind: 'VolumeAttributesClass',
      deprecatedIn: '1.34',
      removedIn: '1.37',
      replacement: same('storage.k8s.io/v1', 'VolumeAttributesClass'),
      replacementSince: '1.34',
      note: 'Scheduled by the apiserver lifecycle data; not in the guide yet. Never served by default.',
    },
    ...(['DeviceClass', 'ResourceClaim', 'ResourceClaimTemplate', 'ResourceSlice'] as const).flatMap(
      (kind): Row[] => [
        {
          apiVersion: 'resource.k8s.io/v1beta1',
          kind,
          deprecatedIn: '1.35',
          removedIn: '1.38',
          replacement: same('resource.k8s.io/v1', kind),
          replacementSince: '1.34',
          note: 'Scheduled by the apiserver lifecycle data; not in the guide yet. Never served by default.',
        },
        {
          apiVersion: 'resource.k8s.io/v1beta2',
          kind,
          deprecatedIn: '1.36',
          removedIn: '1.39',
          replacement: same('resource.k8s.io/v1', kind),
          replacementSince: '1.34',
          note: 'Scheduled by the apiserver lifecycle data; not in the guide yet. Never served by default.',
        },
      ],
    ),
  ]),
);

const byKey = new Map<string, ApiRemoval>(
  API_REMOVALS.map((r) => [key(r.group ? `${r.group}/${r.version}` : r.version, r.kind), r]),
);

function key(apiVersion: string, kind: string): string {
  return `${apiVersion.trim()}|${kind.trim()}`;
}

/** The row for this apiVersion/kind, if the table has one (exact match; kinds are case-sensitive). */
export function findRemoval(apiVersion: string, kind: string): ApiRemoval | undefined {
  return byKey.get(key(apiVersion, kind));
}

/** `group/version` (or `version` for core) of a row. */
export function removalApiVersion(r: Pick<ApiRemoval, 'group' | 'version'>): string {
  return r.group ? `${r.group}/${r.version}` : r.version;
}

/**
 * Parses a Kubernetes version: '1.29', 'v1.29', 'v1.29.3', '1.29.3-gke.100' → {1, 29}.
 * Throws an Error naming the input for anything else.
 */
export function parseKubeVersion(v: string): { major: number; minor: number } {
  const m = /^v?(\d+)\.(\d+)(?:\.\d+)?(?:[-+][0-9A-Za-z.+-]*)?$/.exec(String(v).trim());
  if (!m) {
    throw new Error(
      `invalid Kubernetes version ${JSON.stringify(v)}: expected MAJOR.MINOR such as 1.29 or v1.29.3`,
    );
  }
  return { major: Number(m[1]), minor: Number(m[2]) };
}

/** Orders two Kubernetes versions by major.minor (patch ignored): <0, 0, >0. */
export function compareKubeVersions(a: string, b: string): number {
  const x = parseKubeVersion(a);
  const y = parseKubeVersion(b);
  return x.major !== y.major ? x.major - y.major : x.minor - y.minor;
}

/** How a row stands at a target version. */
export type RemovalStatus = 'removed' | 'deprecated' | 'ok';

/** 'removed' once target ≥ removedIn, 'deprecated' once target ≥ deprecatedIn, else 'ok'. */
export function removalStatusAt(r: ApiRemoval, targetVersion: string): RemovalStatus {
  if (r.removedIn !== null && compareKubeVersions(targetVersion, r.removedIn) >= 0) return 'removed';
  if (compareKubeVersions(targetVersion, r.deprecatedIn) >= 0) return 'deprecated';
  return 'ok';
}

/**
 * The apiVersion/kind to migrate to for a given target cluster version: the row's replacement
 * when the target serves it, else the newest interim version of the same kind the table knows
 * to be served at the target (flowcontrol v1beta3 for 1.26–1.28). null when nothing is served.
 */
export function replacementAt(
  r: ApiRemoval,
  targetVersion: string,
): { apiVersion: string; kind: string } | null {
  if (!r.replacement) return null;
  if (!r.replacementSince || compareKubeVersions(targetVersion, r.replacementSince) >= 0) {
    const next = findRemoval(r.replacement.apiVersion, r.replacement.kind);
    if (!next || removalStatusAt(next, targetVersion) !== 'removed') return r.replacement;
    return replacementAt(next, targetVersion);
  }
  // The GA replacement is too new for the target: pick a sibling beta still served there.
  const interim = API_REMOVALS.filter(
    (o) =>
      o.group === r.group &&
      o.kind === r.kind &&
      o !== r &&
      o.removedIn !== null &&
      compareKubeVersions(targetVersion, o.removedIn) < 0 &&
      introducedBy(o, targetVersion),
  ).sort((a, b) => compareKubeVersions(b.removedIn!, a.removedIn!));
  const pick = interim[0];
  return pick ? { apiVersion: removalApiVersion(pick), kind: pick.kind } : null;
}

// Kubernetes deprecates a beta at the earliest three releases after it ships, and every row
// here was introduced at deprecatedIn - 3 (checked against the lifecycle data for flowcontrol).
function introducedBy(r: ApiRemoval, targetVersion: string): boolean {
  const d = parseKubeVersion(r.deprecatedIn);
  return compareKubeVersions(`${d.major}.${d.minor - 3}`, targetVersion) <= 0;
}
