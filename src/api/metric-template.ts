import type { ConditionedStatus } from '../kube/conditions.js';
import {
  AGE_COLUMN,
  duration,
  httpUrl,
  localRef,
  statusOf,
  type LocalObjectReference,
  type SluiceObject,
} from './common.js';
import { enumOf, obj, str, type JsonSchema, type ResourceKind } from './schema.js';

/** The metric backends Sluice can query; any other name is rejected at admission. */
export type MetricProviderType = 'prometheus';

/** Where a metric is queried. */
export interface MetricProvider {
  type: MetricProviderType;
  address: string;
  secretRef?: LocalObjectReference;
  timeout: string;
}

/** A reusable provider and query template. */
export interface MetricTemplateSpec {
  provider: MetricProvider;
  query: string;
}

/** Whether the provider answered when last checked. */
export type MetricTemplateStatus = ConditionedStatus;

/** A reusable metric provider and query template that CanaryRelease metrics refer to. */
export type MetricTemplate = SluiceObject<'MetricTemplate', MetricTemplateSpec, MetricTemplateStatus>;

/** Schema of a metric backend; shared with CanaryRelease's `analysis.provider`. */
export function metricProviderSchema(description: string): JsonSchema {
  return obj<MetricProvider>(
    description,
    {
      type: enumOf(
        'Kind of backend: prometheus (any Prometheus-compatible API: Prometheus, Mimir, Thanos, VictoriaMetrics).',
        ['prometheus'],
      ),
      address: httpUrl('Base URL of the API, e.g. http://prometheus.monitoring:9090.'),
      secretRef: localRef(
        'Secret in this namespace with credentials: keys username and password (basic auth) or token (bearer).',
        'Secret',
      ),
      timeout: duration('Limit for one query.', '30s'),
    },
    { required: ['type', 'address'] },
  );
}

const spec = obj<MetricTemplateSpec>(
  'The metric provider and the query template.',
  {
    provider: metricProviderSchema('The backend the query runs against.'),
    query: str(
      'Query template; {{ target }}, {{ namespace }} and {{ interval }} are filled in per CanaryRelease metric.',
      {
        minLength: 1,
        maxLength: 8192,
      },
    ),
  },
  { required: ['provider', 'query'] },
);

/** The `MetricTemplate` kind: a provider and query shared by many CanaryRelease metrics. */
export const metricTemplateKind: ResourceKind<'MetricTemplate'> = {
  kind: 'MetricTemplate',
  plural: 'metrictemplates',
  singular: 'metrictemplate',
  scope: 'Namespaced',
  shortNames: ['mt'],
  description:
    'MetricTemplate is a metric provider and a query template that CanaryRelease metrics use through templateRef.',
  spec,
  status: statusOf<MetricTemplateStatus>('Whether the provider answered when last checked.', {}),
  printerColumns: [
    { name: 'Provider', type: 'string', jsonPath: '.spec.provider.type' },
    { name: 'Address', type: 'string', jsonPath: '.spec.provider.address' },
    AGE_COLUMN,
  ],
};
