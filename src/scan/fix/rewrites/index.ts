/**
 * Which mechanical rewrite applies to an object: a table keyed by `apiVersion` and `kind`.
 * Kinds whose shape did not change between the versions are plain renames; kinds with a shape
 * change have their own module. A kind that is removed but has no entry here is not guessed at:
 * the fixer FLAGs it with the replacement the removal table names.
 */
import type { Manifest, Rewrite, RewriteResult } from '../types.js';
import { withApiVersion } from '../types.js';
import { crdRewrite } from './crd.js';
import { hpaV2beta1Rewrite, hpaV2beta2Rewrite } from './hpa.js';
import { ingressRewrite } from './ingress.js';
import { pdbRewrite } from './pdb.js';
import { mutatingWebhookRewrite, validatingWebhookRewrite } from './webhook-config.js';
import { workloadRewrite } from './workload.js';
import { priorityLevelRewrite } from './flowcontrol.js';
import { endpointSliceRewrite } from './endpoint-slice.js';

const rename = (to: string): Rewrite => ({
  to,
  retargetable: true,
  rewrite: (obj: Manifest): RewriteResult => ({ ok: true, object: withApiVersion(obj, to), notes: [] }),
});

const table = new Map<string, Rewrite>();
const add = (apiVersions: readonly string[], kinds: readonly string[], rewrite: Rewrite) => {
  for (const v of apiVersions) for (const k of kinds) table.set(`${v}|${k}`, rewrite);
};

add(['apiextensions.k8s.io/v1beta1'], ['CustomResourceDefinition'], crdRewrite);
add(['extensions/v1beta1', 'networking.k8s.io/v1beta1'], ['Ingress'], ingressRewrite);
add(['networking.k8s.io/v1beta1'], ['IngressClass'], rename('networking.k8s.io/v1'));
add(['extensions/v1beta1'], ['NetworkPolicy'], rename('networking.k8s.io/v1'));
// Only to policy/v1beta1 (targets before 1.25): from 1.25 nothing replaces a PodSecurityPolicy.
add(['extensions/v1beta1'], ['PodSecurityPolicy'], rename('policy/v1beta1'));
add(['admissionregistration.k8s.io/v1beta1'], ['ValidatingWebhookConfiguration'], validatingWebhookRewrite);
add(['admissionregistration.k8s.io/v1beta1'], ['MutatingWebhookConfiguration'], mutatingWebhookRewrite);
add(
  ['admissionregistration.k8s.io/v1alpha1', 'admissionregistration.k8s.io/v1beta1'],
  ['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'],
  rename('admissionregistration.k8s.io/v1'),
);
add(['batch/v1beta1', 'batch/v2alpha1'], ['CronJob'], rename('batch/v1'));
add(['policy/v1beta1'], ['PodDisruptionBudget'], pdbRewrite);
add(['autoscaling/v2beta1'], ['HorizontalPodAutoscaler'], hpaV2beta1Rewrite);
add(['autoscaling/v2beta2'], ['HorizontalPodAutoscaler'], hpaV2beta2Rewrite);
add(
  ['extensions/v1beta1', 'apps/v1beta1', 'apps/v1beta2'],
  ['Deployment', 'DaemonSet', 'ReplicaSet', 'StatefulSet', 'ControllerRevision'],
  workloadRewrite,
);
add(
  ['rbac.authorization.k8s.io/v1beta1', 'rbac.authorization.k8s.io/v1alpha1'],
  ['Role', 'ClusterRole', 'RoleBinding', 'ClusterRoleBinding'],
  rename('rbac.authorization.k8s.io/v1'),
);
add(
  ['scheduling.k8s.io/v1beta1', 'scheduling.k8s.io/v1alpha1'],
  ['PriorityClass'],
  rename('scheduling.k8s.io/v1'),
);
add(
  ['storage.k8s.io/v1beta1'],
  ['StorageClass', 'VolumeAttachment', 'CSIDriver', 'CSINode', 'CSIStorageCapacity'],
  rename('storage.k8s.io/v1'),
);
add(['storage.k8s.io/v1alpha1'], ['VolumeAttachment'], rename('storage.k8s.io/v1'));
add(['coordination.k8s.io/v1beta1'], ['Lease'], rename('coordination.k8s.io/v1'));
add(['discovery.k8s.io/v1beta1'], ['EndpointSlice'], endpointSliceRewrite);
add(['node.k8s.io/v1beta1'], ['RuntimeClass'], rename('node.k8s.io/v1'));
add(['apiregistration.k8s.io/v1beta1'], ['APIService'], rename('apiregistration.k8s.io/v1'));
add(
  [
    'flowcontrol.apiserver.k8s.io/v1beta1',
    'flowcontrol.apiserver.k8s.io/v1beta2',
    'flowcontrol.apiserver.k8s.io/v1beta3',
  ],
  ['FlowSchema'],
  rename('flowcontrol.apiserver.k8s.io/v1'),
);
add(
  [
    'flowcontrol.apiserver.k8s.io/v1beta1',
    'flowcontrol.apiserver.k8s.io/v1beta2',
    'flowcontrol.apiserver.k8s.io/v1beta3',
  ],
  ['PriorityLevelConfiguration'],
  priorityLevelRewrite,
);

/** The mechanical rewrite for `obj`'s apiVersion and kind, if there is one. */
export function rewriteFor(apiVersion: string, kind: string): Rewrite | undefined {
  return table.get(`${apiVersion}|${kind}`);
}

/** Every (apiVersion, kind) with a rewrite: for tests and documentation. */
export function rewriteKeys(): Array<{ apiVersion: string; kind: string; to: string }> {
  return [...table.entries()].map(([key, r]) => {
    const [apiVersion, kind] = key.split('|') as [string, string];
    return { apiVersion, kind, to: r.to };
  });
}
