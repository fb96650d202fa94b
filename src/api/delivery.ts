import type { ConditionedStatus } from '../kube/conditions.js';
import {
  AGE_COLUMN,
  conditionColumn,
  conditionMessageColumn,
  dnsLabel,
  dnsSubdomain,
  duration,
  interval,
  localRef,
  statusOf,
  type LocalObjectReference,
  type SluiceObject,
} from './common.js';
import {
  bool,
  enumOf,
  int,
  keyedList,
  list,
  obj,
  rule,
  str,
  timestamp,
  type ResourceKind,
} from './schema.js';

/** The source a Delivery reads from (only `GitSource` today; the kind is explicit so that more can follow). */
export interface SourceReference {
  name: string;
  kind: 'GitSource';
}

/** What a `Delivery` applies and where. */
export interface DeliverySpec {
  sourceRef: SourceReference;
  path: string;
  placementRef: LocalObjectReference;
  targetNamespace?: string;
  prune: boolean;
  interval: string;
  suspend: boolean;
  timeout?: string;
}

/** Where a Delivery stands on one cluster. */
export type DeliveryPhase = 'Pending' | 'Applying' | 'Healthy' | 'Degraded' | 'Unreachable';
/** The values of `DeliveryPhase`, for schemas. */
export const DELIVERY_PHASES: readonly DeliveryPhase[] = [
  'Pending',
  'Applying',
  'Healthy',
  'Degraded',
  'Unreachable',
];

/** The Delivery's state on one placed cluster. */
export interface DeliveryClusterStatus {
  name: string;
  revision?: string;
  phase: DeliveryPhase;
  /** How many objects the inventory holds on this cluster. */
  objects?: number;
  message?: string;
}

/** One revision that was applied (newest first in `history`). */
export interface AppliedRevision {
  revision: string;
  appliedAt: string;
}

/** What the Delivery controller last applied, per cluster. */
export interface DeliveryStatus extends ConditionedStatus {
  clusters?: DeliveryClusterStatus[];
  lastAppliedRevision?: string;
  history?: AppliedRevision[];
  /**
   * The value of the `sluice.dev/reconcile-requested-at` annotation the controller last
   * acted on (as Flux's `lastHandledReconcileAt`): equal to the annotation once the requested
   * reconcile ran.
   */
  lastHandledReconcileAt?: string;
}

/** A path of a source applied to the clusters a PlacementRule decides. */
export type Delivery = SluiceObject<'Delivery', DeliverySpec, DeliveryStatus>;

/** `status.history` keeps this many applied revisions. */
export const DELIVERY_HISTORY_LIMIT = 10;
const MAX_CLUSTERS = 256;
const REVISION = { maxLength: 512 };

const spec = obj<DeliverySpec>(
  'What to apply (a path of a source) and where (the Clusters a PlacementRule decides).',
  {
    sourceRef: obj<SourceReference>(
      'The source in this namespace whose artifact is applied.',
      {
        name: dnsSubdomain('Name of the source.'),
        kind: enumOf('Kind of the source.', ['GitSource'], { default: 'GitSource' }),
      },
      { required: ['name'] },
    ),
    path: str('Directory in the source to apply, relative to its root, e.g. ./deploy/prod.', {
      maxLength: 1024,
      default: './',
      'x-kubernetes-validations': [
        rule(
          "!self.startsWith('/') && !self.matches('(^|/)\\\\.\\\\.(/|$)')",
          "must be relative to the source root and must not contain '..'",
        ),
      ],
    }),
    placementRef: localRef(
      'The PlacementRule in this namespace whose decisions say which Clusters to apply to.',
      'PlacementRule',
    ),
    targetNamespace: dnsLabel(
      'Namespace every namespaced object is applied to; when unset, objects keep their own.',
    ),
    prune: bool(
      'Delete objects that were applied before and are no longer in the source (never on a failed or empty render).',
      {
        default: true,
      },
    ),
    interval: interval('How often to re-apply and correct drift even when the source has not changed.', '5m'),
    suspend: bool('Stop applying; what was applied stays.', { default: false }),
    timeout: duration(
      'How long the placed objects may take to become healthy after an apply before the cluster is Degraded (default 5m).',
    ),
  },
  { required: ['sourceRef', 'placementRef'] },
);

const status = statusOf<DeliveryStatus>('What the Delivery controller last applied, per cluster.', {
  clusters: keyedList(
    'State on each placed Cluster.',
    'name',
    obj<DeliveryClusterStatus>(
      'State on one Cluster.',
      {
        name: dnsSubdomain('Name of the Cluster.'),
        revision: str('Revision applied on this Cluster.', REVISION),
        phase: enumOf('Pending, Applying, Healthy, Degraded or Unreachable.', DELIVERY_PHASES),
        objects: int('Number of objects in the inventory on this Cluster.', { minimum: 0 }),
        message: str('Details for the phase, e.g. the failed health check.', { maxLength: 4096 }),
      },
      { required: ['name', 'phase'] },
    ),
    { maxItems: MAX_CLUSTERS },
  ),
  lastAppliedRevision: str('The last revision applied on every placed Cluster.', REVISION),
  history: list(
    `The last ${DELIVERY_HISTORY_LIMIT} applied revisions, newest first.`,
    obj<AppliedRevision>(
      'An applied revision.',
      {
        revision: str('The revision, e.g. main@sha1:4f1c2d….', REVISION),
        appliedAt: timestamp('When it was first applied on every placed Cluster.'),
      },
      { required: ['revision', 'appliedAt'] },
    ),
    { maxItems: DELIVERY_HISTORY_LIMIT },
  ),
  lastHandledReconcileAt: str(
    'The sluice.dev/reconcile-requested-at annotation value the controller last acted on.',
    { maxLength: 256 },
  ),
});

/** The `Delivery` kind: render, staged server-side apply, inventory, prune and health per placed cluster. */
export const deliveryKind: ResourceKind<'Delivery'> = {
  kind: 'Delivery',
  plural: 'deliveries',
  singular: 'delivery',
  scope: 'Namespaced',
  shortNames: ['dlv'],
  description:
    'Delivery applies a path of a source to the Clusters a PlacementRule decides, prunes what left the source and reports health per cluster.',
  spec,
  status,
  printerColumns: [
    { name: 'Revision', type: 'string', jsonPath: '.status.lastAppliedRevision' },
    conditionColumn('Ready'),
    { name: 'Clusters', type: 'string', jsonPath: '.status.clusters[*].name' },
    conditionMessageColumn('Ready'),
    AGE_COLUMN,
  ],
};
