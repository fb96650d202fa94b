import type { ConditionedStatus, ConditionStatus } from '../kube/conditions.js';
import {
  AGE_COLUMN,
  CONDITION_STATUSES,
  conditionColumn,
  conditionMessageColumn,
  dnsSubdomain,
  labelSelector,
  statusOf,
  type LabelSelector,
  type LocalObjectReference,
  type SluiceObject,
} from './common.js';
import { enumOf, int, keyedList, obj, str, timestamp, type ResourceKind } from './schema.js';

/** A condition a Cluster must have to be chosen, e.g. `{type: Available, status: "True"}`. */
export interface ClusterConditionFilter {
  type: string;
  status: ConditionStatus;
}

/** Prefer clusters with more (`Desc`) or less (`Asc`) allocatable `type` when `clusterReplicas` cuts the list. */
export interface ResourceHint {
  type: 'cpu' | 'memory';
  order: 'Asc' | 'Desc';
}

/** Which Clusters to place on; the fields of Open Cluster Management's PlacementRule. */
export interface PlacementRuleSpec {
  clusterSelector?: LabelSelector;
  clusters?: LocalObjectReference[];
  clusterConditions?: ClusterConditionFilter[];
  clusterReplicas?: number;
  resourceHint?: ResourceHint;
}

/** One chosen cluster. */
export interface PlacementDecision {
  clusterName: string;
  /** Why it was chosen, e.g. `matched labels; most allocatable cpu`. */
  reason?: string;
  /** Since when a decided cluster fails `clusterConditions`; it is kept until the debounce passes. */
  failingSince?: string;
}

/** The clusters the PlacementRule controller last decided on. */
export interface PlacementRuleStatus extends ConditionedStatus {
  decisions?: PlacementDecision[];
}

/** A choice of Clusters by labels, names, conditions and capacity. */
export type PlacementRule = SluiceObject<'PlacementRule', PlacementRuleSpec, PlacementRuleStatus>;

/** At most this many clusters can be named or decided on by one PlacementRule. */
export const MAX_PLACED_CLUSTERS = 256;

const spec = obj<PlacementRuleSpec>(
  'Which Clusters to choose. A Cluster is chosen when it matches clusterSelector (if set), is listed in clusters (if set) and has every clusterConditions entry; clusterReplicas then caps how many.',
  {
    clusterSelector: labelSelector(
      'Labels the Clusters must have. An empty selector ({}) matches every Cluster.',
    ),
    clusters: keyedList(
      'Clusters chosen by name.',
      'name',
      obj<LocalObjectReference>(
        'A Cluster by name.',
        { name: dnsSubdomain('Name of the Cluster.') },
        { required: ['name'] },
      ),
      { maxItems: MAX_PLACED_CLUSTERS },
    ),
    clusterConditions: keyedList(
      'Conditions a Cluster must have, e.g. {type: Available, status: "True"}.',
      'type',
      obj<ClusterConditionFilter>(
        'A required Cluster condition.',
        {
          type: str('Condition type on the Cluster, e.g. Available.', { minLength: 1, maxLength: 316 }),
          status: enumOf('Required status: True, False or Unknown.', CONDITION_STATUSES),
        },
        { required: ['type', 'status'] },
      ),
      { maxItems: 16 },
    ),
    clusterReplicas: int('How many of the matching Clusters to choose at most; all when unset.', {
      minimum: 0,
    }),
    resourceHint: obj<ResourceHint>(
      'Which Clusters to prefer when clusterReplicas is less than the number that match.',
      {
        type: enumOf('Resource to compare: cpu or memory (allocatable, from Cluster status).', [
          'cpu',
          'memory',
        ]),
        order: enumOf('Desc prefers the most allocatable, Asc the least.', ['Asc', 'Desc'], {
          default: 'Desc',
        }),
      },
      { required: ['type'] },
    ),
  },
);

const status = statusOf<PlacementRuleStatus>('The clusters the PlacementRule controller last decided on.', {
  decisions: keyedList(
    'The chosen Clusters.',
    'clusterName',
    obj<PlacementDecision>(
      'One chosen Cluster.',
      {
        clusterName: dnsSubdomain('Name of the Cluster.'),
        reason: str('Why the Cluster was chosen.', { maxLength: 1024 }),
        failingSince: timestamp(
          'Since when this decided Cluster has failed spec.clusterConditions; it keeps its place until the flap debounce has passed.',
        ),
      },
      { required: ['clusterName'] },
    ),
    { maxItems: MAX_PLACED_CLUSTERS },
  ),
});

/** The `PlacementRule` kind: label/name/condition/capacity rules → `status.decisions`. */
export const placementRuleKind: ResourceKind<'PlacementRule'> = {
  kind: 'PlacementRule',
  plural: 'placementrules',
  singular: 'placementrule',
  scope: 'Namespaced',
  shortNames: ['plr'],
  description:
    'PlacementRule chooses Clusters by labels, names, conditions and allocatable capacity (the fields of Open Cluster Management PlacementRule); the choice is published in status.decisions.',
  spec,
  status,
  printerColumns: [
    { name: 'Clusters', type: 'string', jsonPath: '.status.decisions[*].clusterName' },
    conditionColumn('Ready'),
    conditionMessageColumn('Ready'),
    AGE_COLUMN,
  ],
};
