import type { ConditionedStatus } from '../kube/conditions.js';
import {
  AGE_COLUMN,
  conditionColumn,
  conditionMessageColumn,
  dnsLabel,
  dnsSubdomain,
  statusOf,
  type SluiceObject,
} from './common.js';
import { bool, int, list, obj, rule, str, timestamp, type ResourceKind } from './schema.js';

/** A key of a Secret in a named namespace (a Cluster is cluster-scoped, so it names both). */
export interface KubeconfigSecretRef {
  namespace: string;
  name: string;
  key: string;
}

/** How Sluice reaches a member cluster: exactly one of `kubeconfigSecretRef` or `inCluster: true`. */
export interface ClusterSpec {
  kubeconfigSecretRef?: KubeconfigSecretRef;
  inCluster?: boolean;
}

/** What the API server of a member cluster serves, summarised and bounded. */
export interface ApiGroupsSummary {
  /** How many group/versions the cluster serves (may exceed `groupVersions.length`). */
  count: number;
  groupVersions?: string[];
}

/** Allocatable capacity summed over the cluster's ready nodes, as Kubernetes quantities. */
export interface ClusterAllocatable {
  cpu?: string;
  memory?: string;
  pods?: string;
}

/** What the Cluster controller last probed. */
export interface ClusterStatus extends ConditionedStatus {
  version?: string;
  apiGroups?: ApiGroupsSummary;
  allocatable?: ClusterAllocatable;
  lastProbeTime?: string;
}

/** A member cluster Sluice can place workloads on, selected by its labels. */
export type Cluster = SluiceObject<'Cluster', ClusterSpec, ClusterStatus>;

/** At most this many group/versions are listed in status (a cluster with many CRDs serves hundreds). */
export const MAX_LISTED_GROUP_VERSIONS = 256;

const spec = obj<ClusterSpec>(
  'How to reach the cluster: exactly one of kubeconfigSecretRef or inCluster: true.',
  {
    kubeconfigSecretRef: obj<KubeconfigSecretRef>(
      'A Secret holding a kubeconfig for the cluster.',
      {
        namespace: dnsLabel('Namespace of the Secret.'),
        name: dnsSubdomain('Name of the Secret.'),
        key: str('Key in the Secret whose value is the kubeconfig.', {
          pattern: '^[-._a-zA-Z0-9]+$',
          maxLength: 253,
          default: 'kubeconfig',
        }),
      },
      { required: ['namespace', 'name'] },
    ),
    inCluster: bool('true: the cluster Sluice itself runs in, reached with its service account.'),
  },
  {
    'x-kubernetes-validations': [
      rule(
        'has(self.kubeconfigSecretRef) != (has(self.inCluster) && self.inCluster)',
        'spec must set exactly one of kubeconfigSecretRef or inCluster: true',
      ),
    ],
  },
);

const QUANTITY = { maxLength: 64 };

const status = statusOf<ClusterStatus>('What the Cluster controller last probed.', {
  version: str('Kubernetes version the API server reports, e.g. v1.36.3.', { maxLength: 64 }),
  apiGroups: obj<ApiGroupsSummary>(
    'The API group/versions the cluster serves.',
    {
      count: int('Number of group/versions served.', { minimum: 0 }),
      groupVersions: list(
        `Served group/versions, e.g. apps/v1, sorted; at most ${MAX_LISTED_GROUP_VERSIONS} are listed.`,
        str('A group/version.', { maxLength: 317 }),
        { maxItems: MAX_LISTED_GROUP_VERSIONS },
      ),
    },
    { required: ['count'] },
  ),
  allocatable: obj<ClusterAllocatable>('Allocatable capacity summed over ready nodes.', {
    cpu: str('CPU, as a Kubernetes quantity, e.g. 7500m.', QUANTITY),
    memory: str('Memory, as a Kubernetes quantity, e.g. 31Gi.', QUANTITY),
    pods: str('Pod slots, as a Kubernetes quantity, e.g. 330.', QUANTITY),
  }),
  lastProbeTime: timestamp('When the cluster was last probed.'),
});

/** The `Cluster` kind: one member cluster, its credentials and its observed health. */
export const clusterKind: ResourceKind<'Cluster'> = {
  kind: 'Cluster',
  plural: 'clusters',
  singular: 'cluster',
  scope: 'Cluster',
  // Not "cluster": Cluster API and others define a `Cluster` kind too.
  shortNames: ['scl'],
  description:
    'Cluster is a member cluster Sluice can deliver to: how to reach it, and its observed health, version and capacity. PlacementRules select Clusters by their labels.',
  spec,
  status,
  printerColumns: [
    conditionColumn('Available'),
    { name: 'Version', type: 'string', jsonPath: '.status.version' },
    conditionMessageColumn('Available'),
    AGE_COLUMN,
  ],
};
