/**
 * How Sluice writes OpenAPI v3 schemas for its CRDs: the plain-object types the apiserver
 * reads (JSON keys such as `x-kubernetes-validations`, not client-node's camelCase models)
 * and small builders that keep each kind's schema short and tied to its TypeScript type.
 *
 * The builders only assemble objects; whether a schema is structural is checked by the unit
 * test, and whether its CEL rules compile and reject what they should, by the integration test
 * against a real apiserver.
 */

/** One CEL rule (`x-kubernetes-validations` item) as apiextensions.k8s.io/v1 takes it. */
export interface ValidationRule {
  rule: string;
  message: string;
  /** JSONPath-like path (relative to the node that holds the rule) the error is reported at. */
  fieldPath?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
}

/** The subset of OpenAPI v3 (with Kubernetes extensions) that structural CRD schemas use. */
export interface JsonSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  enum?: Array<string | number | boolean>;
  default?: unknown;
  format?: 'date-time' | 'int32' | 'int64' | 'double';
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  maxProperties?: number;
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-int-or-string'?: true;
}

/** One `additionalPrinterColumns` entry (`kubectl get` output). */
export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  description?: string;
  /** 0 shows in `kubectl get`; higher only with `-o wide`. */
  priority?: number;
}

/** An apiextensions.k8s.io/v1 CustomResourceDefinition as a plain object (JSON keys). */
export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    versions: CrdVersion[];
    /** Present when more than one version is served and they differ in shape. */
    conversion?: CrdConversion;
  };
}

/** One entry of a CRD's `spec.versions`. */
export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  /** Shown by kubectl on every request for this version (a deprecated version says what replaces it). */
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: { openAPIV3Schema: JsonSchema };
  subresources: { status: Record<string, never> };
  additionalPrinterColumns: PrinterColumn[];
}

/**
 * Where the apiserver sends a ConversionReview: a URL (out of cluster: kube-local, tests) or
 * a Service (in cluster). `caBundle` is the base64 PEM of the CA that signed the server's
 * certificate; the controller writes it.
 */
export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  caBundle?: string;
}

/** A CRD's `spec.conversion` (apiextensions.k8s.io/v1). */
export interface CrdConversion {
  strategy: 'None' | 'Webhook';
  webhook?: { conversionReviewVersions: string[]; clientConfig: WebhookClientConfig };
}

/**
 * Everything one kind's file declares; `crds.ts` turns it into a CRD. Keeping this a plain
 * description (not a CRD) lets later versions (`v1alpha1`) reuse the names.
 */
export interface ResourceKind<K extends string = string> {
  kind: K;
  plural: string;
  singular: string;
  scope: 'Namespaced' | 'Cluster';
  shortNames: string[];
  /** What the resource is for: the top line of `kubectl explain <plural>`. */
  description: string;
  spec: JsonSchema;
  status: JsonSchema;
  printerColumns: PrinterColumn[];
}

/**
 * One schema per property of `T`, no more and no fewer: a field added to a TypeScript
 * interface without a schema (or the reverse) fails to compile, so the two cannot drift.
 */
export type SchemaProps<T> = { [K in keyof T]-?: JsonSchema };

/** Extra keywords a builder passes through unchanged. */
type Extra = Omit<JsonSchema, 'type' | 'description' | 'properties' | 'items'>;

/** A CEL rule; `fieldPath` (e.g. `.ref`) makes the apiserver report the error at that field. */
export function rule(celRule: string, message: string, fieldPath?: string): ValidationRule {
  return fieldPath === undefined ? { rule: celRule, message } : { rule: celRule, message, fieldPath };
}

/**
 * A rule that exactly one of `fields` is set. Counting with `has()` (rather than a oneOf in
 * OpenAPI) keeps the schema structural and yields one readable message instead of a list of
 * failed branches.
 */
export function exactlyOne(fields: readonly string[], message: string): ValidationRule {
  return rule(fields.map((f) => `(has(self.${f}) ? 1 : 0)`).join(' + ') + ' == 1', message);
}

/** An object with exactly the properties of `T` (see `SchemaProps`). */
export function obj<T>(
  description: string,
  properties: SchemaProps<T>,
  extra: Omit<Extra, 'required'> & { required?: Array<keyof T & string> } = {},
): JsonSchema {
  return { type: 'object', description, properties, ...extra };
}

/** A string; `extra` adds `pattern`, `maxLength`, `enum`, `default`, rules. */
export function str(description: string, extra: Extra = {}): JsonSchema {
  return { type: 'string', description, ...extra };
}

/** A string restricted to `values`: anything else is rejected as "Unsupported value". */
export function enumOf(description: string, values: readonly string[], extra: Extra = {}): JsonSchema {
  return str(description, { enum: [...values], ...extra });
}

/** A 64-bit integer (JSON number without a fraction). */
export function int(description: string, extra: Extra = {}): JsonSchema {
  return { type: 'integer', format: 'int64', description, ...extra };
}

/** A floating-point number. */
export function num(description: string, extra: Extra = {}): JsonSchema {
  return { type: 'number', description, ...extra };
}

/**
 * An integer or a string (a port number or a port name). Structural schemas allow this one
 * untyped node, spelled exactly so (`x-kubernetes-int-or-string` with this `anyOf`).
 */
export function intOrString(description: string): JsonSchema {
  return {
    description,
    'x-kubernetes-int-or-string': true,
    anyOf: [{ type: 'integer' }, { type: 'string' }],
  };
}

/** A boolean, optionally with a default. */
export function bool(description: string, extra: Extra = {}): JsonSchema {
  return { type: 'boolean', description, ...extra };
}

/** An RFC 3339 timestamp written by a controller. */
export function timestamp(description: string): JsonSchema {
  return str(description, { format: 'date-time' });
}

/**
 * A list. `maxItems` is required: every list is bounded, both for etcd's object size and
 * because the apiserver rejects CEL rules whose cost it cannot bound.
 */
export function list(
  description: string,
  items: JsonSchema,
  extra: Extra & { maxItems: number },
): JsonSchema {
  return { type: 'array', description, items, ...extra };
}

/**
 * A list of objects keyed by `key` (`x-kubernetes-list-type: map`): duplicate keys are
 * rejected ("Duplicate value") and server-side apply merges entries by key.
 */
export function keyedList(
  description: string,
  key: string,
  items: JsonSchema,
  extra: Extra & { maxItems: number },
): JsonSchema {
  return list(description, items, {
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': [key],
    ...extra,
  });
}
