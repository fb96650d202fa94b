import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { Condition, ConditionedStatus, ConditionStatus } from '../kube/conditions.js';
import {
  enumOf,
  int,
  keyedList,
  list,
  obj,
  rule,
  str,
  timestamp,
  type JsonSchema,
  type PrinterColumn,
  type SchemaProps,
} from './schema.js';
import { DURATION_PATTERN } from './duration.js';

/** The API group of every Sluice resource. */
export const GROUP = 'sluice.dev';
/** The served and stored version of every Sluice resource. */
export const VERSION = 'v1';
/** `apiVersion` of every Sluice object. */
export const API_VERSION = `${GROUP}/${VERSION}` as const;
/** The `kubectl get sluice` category every Sluice CRD joins. */
export const CATEGORY = 'sluice';

// A Go-style duration limited to the units people write in manifests; every string it
// accepts parses with Go's time.ParseDuration.
export { DURATION_PATTERN } from './duration.js';
/** An RFC 1123 DNS label: Namespace names, Service names, port names. */
export const DNS1123_LABEL_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** An RFC 1123 DNS subdomain: the names of most Kubernetes objects. */
export const DNS1123_SUBDOMAIN_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** A duration field; `default` is applied by the apiserver when the field is omitted. */
export function duration(description: string, defaultValue?: string): JsonSchema {
  return str(`${description} A duration such as 30s, 5m or 1h30m.`, {
    pattern: DURATION_PATTERN,
    maxLength: 32,
    ...(defaultValue === undefined ? {} : { default: defaultValue }),
  });
}

/**
 * A poll or step interval: a duration that is not zero, because a zero interval would make
 * a controller requeue in a hot loop.
 */
export function interval(description: string, defaultValue?: string): JsonSchema {
  return {
    ...duration(description, defaultValue),
    'x-kubernetes-validations': [
      rule("!self.matches('^(0+(\\\\.0+)?(ms|s|m|h))+$')", 'must be greater than zero'),
    ],
  };
}

/** The name of an object in the same namespace (or of a cluster-scoped object). */
export function dnsSubdomain(description: string): JsonSchema {
  return str(description, { pattern: DNS1123_SUBDOMAIN_PATTERN, minLength: 1, maxLength: 253 });
}

/** A DNS label: a Namespace name, a Service name. */
export function dnsLabel(description: string): JsonSchema {
  return str(description, { pattern: DNS1123_LABEL_PATTERN, minLength: 1, maxLength: 63 });
}

/** An http(s) URL; Sluice's git client and metric providers speak HTTP only. */
export function httpUrl(description: string): JsonSchema {
  return str(description, { pattern: '^https?://[^\\s]+$', maxLength: 2048 });
}

/** A reference to an object by name, in the referrer's namespace. */
export interface LocalObjectReference {
  name: string;
}

/** Schema for a `LocalObjectReference` to a `what` (e.g. "Secret holding the git credentials"). */
export function localRef(description: string, what: string): JsonSchema {
  return obj<LocalObjectReference>(
    description,
    { name: dnsSubdomain(`Name of the ${what}.`) },
    { required: ['name'] },
  );
}

/** The values of `ConditionStatus`, for schemas. */
export const CONDITION_STATUSES: readonly ConditionStatus[] = ['True', 'False', 'Unknown'];

/**
 * The upstream `metav1.Condition` schema (same patterns and limits as the Go markers). Sluice
 * sets `Ready`, `Reconciling` and `Stalled` (kstatus) so that `kubectl wait
 * --for=condition=Ready` works; some kinds add their own (e.g. Cluster's `Available`).
 */
const conditionSchema = obj<Condition>(
  'One aspect of the resource state.',
  {
    type: str('Type of the condition in CamelCase, e.g. Ready, Reconciling, Stalled.', {
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      maxLength: 316,
    }),
    status: enumOf('Status of the condition: True, False or Unknown.', CONDITION_STATUSES),
    observedGeneration: int('The .metadata.generation the condition was set for.', { minimum: 0 }),
    lastTransitionTime: timestamp('When the condition last changed status.'),
    reason: str('Machine-readable CamelCase reason for the last transition, e.g. ArtifactFailed.', {
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      minLength: 1,
      maxLength: 1024,
    }),
    message: str('Human-readable details of the last transition.', { maxLength: 32768 }),
  },
  { required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'] },
);

/**
 * A status schema: `properties` plus `observedGeneration` and `conditions` (the fields
 * kube/conditions.ts maintains), so that every kind reports readiness the same way.
 */
export function statusOf<T extends ConditionedStatus>(
  description: string,
  properties: SchemaProps<Omit<T, keyof ConditionedStatus>>,
): JsonSchema {
  return obj<ConditionedStatus>(description, {
    ...properties,
    observedGeneration: int('The .metadata.generation this status describes.', { minimum: 0 }),
    conditions: keyedList(
      'Current state: Ready, Reconciling, Stalled and kind-specific conditions.',
      'type',
      conditionSchema,
      {
        maxItems: 16,
      },
    ),
  });
}

/** A label selector requirement (`metav1.LabelSelectorRequirement`). */
export interface LabelSelectorRequirement {
  key: string;
  operator: 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';
  values?: string[];
}

/** A label selector (`metav1.LabelSelector`); all of its terms must match. */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: LabelSelectorRequirement[];
}

/** Schema for a `LabelSelector`, with the apiserver's own rule on `values` made an admission error. */
export function labelSelector(description: string): JsonSchema {
  return obj<LabelSelector>(description, {
    matchLabels: {
      type: 'object',
      description: 'Labels that must all be present with exactly these values.',
      additionalProperties: { type: 'string', maxLength: 63 },
      maxProperties: 64,
    },
    matchExpressions: list(
      'Requirements that must all hold.',
      obj<LabelSelectorRequirement>(
        'A requirement on one label.',
        {
          key: str('The label key.', { minLength: 1, maxLength: 317 }),
          operator: enumOf('How the label is compared with values: In, NotIn, Exists or DoesNotExist.', [
            'In',
            'NotIn',
            'Exists',
            'DoesNotExist',
          ]),
          values: list(
            'Values for In and NotIn; must be empty for Exists and DoesNotExist.',
            str('A label value.', { maxLength: 63 }),
            {
              maxItems: 64,
            },
          ),
        },
        {
          required: ['key', 'operator'],
          'x-kubernetes-validations': [
            rule(
              "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",
              'values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist',
              '.values',
            ),
          ],
        },
      ),
      { maxItems: 32 },
    ),
  });
}

/** A printer column with the status of condition `type` (True/False/Unknown). */
export function conditionColumn(type: string, name: string = type): PrinterColumn {
  return { name, type: 'string', jsonPath: `.status.conditions[?(@.type=="${type}")].status` };
}

/** A wide-only printer column with the message of condition `type`: why it is not ready. */
export function conditionMessageColumn(type: string): PrinterColumn {
  return {
    name: 'Message',
    type: 'string',
    jsonPath: `.status.conditions[?(@.type=="${type}")].message`,
    priority: 1,
  };
}

/** The `Age` column every `kubectl get` shows. */
export const AGE_COLUMN: PrinterColumn = {
  name: 'Age',
  type: 'date',
  jsonPath: '.metadata.creationTimestamp',
};

/**
 * A Sluice object as the apiserver returns it: `spec` is what the user wants, `status` what
 * a controller observed (absent until the first reconcile). A spec field with a schema
 * `default` is never absent in what the server returns, so the types make it required and
 * controllers never restate a default.
 */
export interface SluiceObject<K extends string, Spec, Status> {
  apiVersion: typeof API_VERSION;
  kind: K;
  metadata: V1ObjectMeta;
  spec: Spec;
  status?: Status;
}
