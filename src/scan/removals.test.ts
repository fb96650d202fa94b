import {
  API_REMOVALS,
  compareKubeVersions,
  findRemoval,
  LATEST_KNOWN_KUBE_VERSION,
  parseKubeVersion,
  removalApiVersion,
  removalStatusAt,
  replacementAt,
} from './removals.js';

// The rows of the Kubernetes Deprecated API Migration Guide, v1.16 … v1.32, as
// [apiVersion, kind, removedIn, replacement apiVersion | null].
const GUIDE: [string, string, string, string | null][] = [
  ['flowcontrol.apiserver.k8s.io/v1beta3', 'FlowSchema', '1.32', 'flowcontrol.apiserver.k8s.io/v1'],
  [
    'flowcontrol.apiserver.k8s.io/v1beta3',
    'PriorityLevelConfiguration',
    '1.32',
    'flowcontrol.apiserver.k8s.io/v1',
  ],
  ['flowcontrol.apiserver.k8s.io/v1beta2', 'FlowSchema', '1.29', 'flowcontrol.apiserver.k8s.io/v1'],
  [
    'flowcontrol.apiserver.k8s.io/v1beta2',
    'PriorityLevelConfiguration',
    '1.29',
    'flowcontrol.apiserver.k8s.io/v1',
  ],
  ['storage.k8s.io/v1beta1', 'CSIStorageCapacity', '1.27', 'storage.k8s.io/v1'],
  ['flowcontrol.apiserver.k8s.io/v1beta1', 'FlowSchema', '1.26', 'flowcontrol.apiserver.k8s.io/v1'],
  [
    'flowcontrol.apiserver.k8s.io/v1beta1',
    'PriorityLevelConfiguration',
    '1.26',
    'flowcontrol.apiserver.k8s.io/v1',
  ],
  ['autoscaling/v2beta2', 'HorizontalPodAutoscaler', '1.26', 'autoscaling/v2'],
  ['batch/v1beta1', 'CronJob', '1.25', 'batch/v1'],
  ['discovery.k8s.io/v1beta1', 'EndpointSlice', '1.25', 'discovery.k8s.io/v1'],
  ['events.k8s.io/v1beta1', 'Event', '1.25', 'events.k8s.io/v1'],
  ['autoscaling/v2beta1', 'HorizontalPodAutoscaler', '1.25', 'autoscaling/v2'],
  ['policy/v1beta1', 'PodDisruptionBudget', '1.25', 'policy/v1'],
  ['policy/v1beta1', 'PodSecurityPolicy', '1.25', null],
  ['node.k8s.io/v1beta1', 'RuntimeClass', '1.25', 'node.k8s.io/v1'],
  [
    'admissionregistration.k8s.io/v1beta1',
    'MutatingWebhookConfiguration',
    '1.22',
    'admissionregistration.k8s.io/v1',
  ],
  [
    'admissionregistration.k8s.io/v1beta1',
    'ValidatingWebhookConfiguration',
    '1.22',
    'admissionregistration.k8s.io/v1',
  ],
  ['apiextensions.k8s.io/v1beta1', 'CustomResourceDefinition', '1.22', 'apiextensions.k8s.io/v1'],
  ['apiregistration.k8s.io/v1beta1', 'APIService', '1.22', 'apiregistration.k8s.io/v1'],
  ['authentication.k8s.io/v1beta1', 'TokenReview', '1.22', 'authentication.k8s.io/v1'],
  ['authorization.k8s.io/v1beta1', 'SubjectAccessReview', '1.22', 'authorization.k8s.io/v1'],
  ['authorization.k8s.io/v1beta1', 'LocalSubjectAccessReview', '1.22', 'authorization.k8s.io/v1'],
  ['authorization.k8s.io/v1beta1', 'SelfSubjectAccessReview', '1.22', 'authorization.k8s.io/v1'],
  ['certificates.k8s.io/v1beta1', 'CertificateSigningRequest', '1.22', 'certificates.k8s.io/v1'],
  ['coordination.k8s.io/v1beta1', 'Lease', '1.22', 'coordination.k8s.io/v1'],
  ['extensions/v1beta1', 'Ingress', '1.22', 'networking.k8s.io/v1'],
  ['networking.k8s.io/v1beta1', 'Ingress', '1.22', 'networking.k8s.io/v1'],
  ['networking.k8s.io/v1beta1', 'IngressClass', '1.22', 'networking.k8s.io/v1'],
  ['rbac.authorization.k8s.io/v1beta1', 'ClusterRole', '1.22', 'rbac.authorization.k8s.io/v1'],
  ['rbac.authorization.k8s.io/v1beta1', 'ClusterRoleBinding', '1.22', 'rbac.authorization.k8s.io/v1'],
  ['rbac.authorization.k8s.io/v1beta1', 'Role', '1.22', 'rbac.authorization.k8s.io/v1'],
  ['rbac.authorization.k8s.io/v1beta1', 'RoleBinding', '1.22', 'rbac.authorization.k8s.io/v1'],
  ['scheduling.k8s.io/v1beta1', 'PriorityClass', '1.22', 'scheduling.k8s.io/v1'],
  ['storage.k8s.io/v1beta1', 'CSIDriver', '1.22', 'storage.k8s.io/v1'],
  ['storage.k8s.io/v1beta1', 'CSINode', '1.22', 'storage.k8s.io/v1'],
  ['storage.k8s.io/v1beta1', 'StorageClass', '1.22', 'storage.k8s.io/v1'],
  ['storage.k8s.io/v1beta1', 'VolumeAttachment', '1.22', 'storage.k8s.io/v1'],
  ['extensions/v1beta1', 'NetworkPolicy', '1.16', 'networking.k8s.io/v1'],
  ['extensions/v1beta1', 'PodSecurityPolicy', '1.16', 'policy/v1beta1'],
  ['extensions/v1beta1', 'DaemonSet', '1.16', 'apps/v1'],
  ['apps/v1beta2', 'DaemonSet', '1.16', 'apps/v1'],
  ['extensions/v1beta1', 'Deployment', '1.16', 'apps/v1'],
  ['apps/v1beta1', 'Deployment', '1.16', 'apps/v1'],
  ['apps/v1beta2', 'Deployment', '1.16', 'apps/v1'],
  ['apps/v1beta1', 'StatefulSet', '1.16', 'apps/v1'],
  ['apps/v1beta2', 'StatefulSet', '1.16', 'apps/v1'],
  ['extensions/v1beta1', 'ReplicaSet', '1.16', 'apps/v1'],
  ['apps/v1beta2', 'ReplicaSet', '1.16', 'apps/v1'],
];

describe('API_REMOVALS', () => {
  it.each(GUIDE)(
    'GIVEN the guide row %s %s WHEN looked up THEN removed in %s with replacement %s',
    (apiVersion, kind, removedIn, replacement) => {
      const row = findRemoval(apiVersion, kind);
      expect(row).toBeDefined();
      expect(row!.removedIn).toBe(removedIn);
      expect(row!.replacement?.apiVersion ?? null).toBe(replacement);
      if (row!.replacement) expect(row!.replacement.kind).toBe(kind);
    },
  );

  it('GIVEN the table WHEN checked THEN every row is unique, deprecated before removal, with parseable versions', () => {
    const seen = new Set<string>();
    for (const r of API_REMOVALS) {
      const k = `${removalApiVersion(r)} ${r.kind}`;
      expect(seen.has(k)).toBe(false);
      seen.add(k);
      parseKubeVersion(r.deprecatedIn);
      if (r.removedIn) expect(compareKubeVersions(r.deprecatedIn, r.removedIn)).toBeLessThan(0);
      if (r.replacementSince) parseKubeVersion(r.replacementSince);
    }
  });

  it('GIVEN a served GA version or a typo kind WHEN looked up THEN nothing is found', () => {
    expect(findRemoval('apps/v1', 'Deployment')).toBeUndefined();
    expect(findRemoval('extensions/v1beta1', 'ingress')).toBeUndefined();
    expect(findRemoval('v1', 'Pod')).toBeUndefined();
  });
});

describe('parseKubeVersion / compareKubeVersions', () => {
  it.each([
    ['1.29', 1, 29],
    ['v1.29.3', 1, 29],
    [' 1.36 ', 1, 36],
    ['v1.27.4-gke.900', 1, 27],
  ])('GIVEN %j WHEN parsed THEN %d.%d', (v, major, minor) => {
    expect(parseKubeVersion(v)).toEqual({ major, minor });
  });

  it.each(['', '1', 'latest', '1.x', 'v1.29.3.4'])(
    'GIVEN %j WHEN parsed THEN a clear error names the input',
    (v) => {
      expect(() => parseKubeVersion(v)).toThrow(/invalid Kubernetes version/);
    },
  );

  it('GIVEN 1.9 and 1.16 WHEN compared THEN numerically, not as strings', () => {
    expect(compareKubeVersions('1.9', '1.16')).toBeLessThan(0);
    expect(compareKubeVersions('v1.29.9', '1.29.0')).toBe(0);
    expect(compareKubeVersions(LATEST_KNOWN_KUBE_VERSION, '1.32')).toBeGreaterThan(0);
  });
});

describe('removalStatusAt / replacementAt', () => {
  const ingress = findRemoval('extensions/v1beta1', 'Ingress')!;
  it('GIVEN extensions/v1beta1 Ingress WHEN judged at 1.13, 1.20, 1.22 THEN ok, deprecated, removed', () => {
    expect(removalStatusAt(ingress, '1.13')).toBe('ok');
    expect(removalStatusAt(ingress, '1.20')).toBe('deprecated');
    expect(removalStatusAt(ingress, '1.22')).toBe('removed');
  });

  it('GIVEN flowcontrol v1beta1 WHEN the target is 1.27 THEN the interim v1beta3 is proposed, v1 from 1.29', () => {
    const fs = findRemoval('flowcontrol.apiserver.k8s.io/v1beta1', 'FlowSchema')!;
    expect(replacementAt(fs, '1.27')).toEqual({
      apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta3',
      kind: 'FlowSchema',
    });
    expect(replacementAt(fs, '1.29')?.apiVersion).toBe('flowcontrol.apiserver.k8s.io/v1');
  });

  it('GIVEN extensions/v1beta1 PodSecurityPolicy WHEN the target is 1.20 or 1.29 THEN policy/v1beta1, then nothing', () => {
    const psp = findRemoval('extensions/v1beta1', 'PodSecurityPolicy')!;
    expect(replacementAt(psp, '1.20')?.apiVersion).toBe('policy/v1beta1');
    expect(replacementAt(psp, '1.29')).toBeNull();
  });
});
