import { canaryReleaseKind } from './canary-release.js';
import { clusterKind } from './cluster.js';
import { API_VERSION, CATEGORY, GROUP, VERSION } from './common.js';
import { deliveryKind } from './delivery.js';
import { gitSourceKind } from './git-source.js';
import { metricTemplateKind } from './metric-template.js';
import { placementRuleKind } from './placement-rule.js';
import { canaryReleaseV1alpha1Schema, V1ALPHA1 } from './canary-release-v1alpha1.js';
import {
  str,
  type CrdVersion,
  type CustomResourceDefinition,
  type JsonSchema,
  type ResourceKind,
} from './schema.js';

export { API_VERSION, GROUP, VERSION };

/** Every Sluice kind, in the order data flows through them (DESIGN.md). */
export const SLUICE_KINDS = [
  gitSourceKind,
  clusterKind,
  placementRuleKind,
  deliveryKind,
  canaryReleaseKind,
  metricTemplateKind,
] as const satisfies readonly ResourceKind[];

/** The name of a Sluice kind. */
export type SluiceKind = (typeof SLUICE_KINDS)[number]['kind'];

/** What a client needs to address a kind: its REST names and whether objects live in a namespace. */
export interface KindInfo {
  group: typeof GROUP;
  version: typeof VERSION;
  apiVersion: typeof API_VERSION;
  kind: SluiceKind;
  plural: string;
  singular: string;
  scope: 'Namespaced' | 'Cluster';
  namespaced: boolean;
  /** The CRD's name, `<plural>.sluice.dev`. */
  crdName: string;
}

/** Label on every Sluice CRD, so that `kubectl get crd -l app.kubernetes.io/part-of=sluice` lists them. */
export const CRD_LABELS: Readonly<Record<string, string>> = { 'app.kubernetes.io/part-of': 'sluice' };

/**
 * The REST names and scope of `kind`. Throws for a kind Sluice does not define (a typo in a
 * caller is a bug, not a runtime condition).
 */
export function kindInfo(kind: SluiceKind): KindInfo {
  const def = SLUICE_KINDS.find((k): k is ResourceKind<SluiceKind> => k.kind === kind);
  if (!def)
    throw new Error(`unknown Sluice kind "${kind}"; known: ${SLUICE_KINDS.map((k) => k.kind).join(', ')}`);
  return {
    group: GROUP,
    version: VERSION,
    apiVersion: API_VERSION,
    kind,
    plural: def.plural,
    singular: def.singular,
    scope: def.scope,
    namespaced: def.scope === 'Namespaced',
    crdName: `${def.plural}.${GROUP}`,
  };
}

/**
 * Where the conversion webhook is in cluster (the Helm chart's Service; the CRD files under
 * crds/ cannot be templated, so the namespace is fixed). The controller rewrites the client
 * config and writes the caBundle when it starts (src/webhooks/registration.ts).
 */
export const CONVERSION_SERVICE = {
  namespace: 'sluice-system',
  name: 'sluice-admission',
  port: 443,
} as const;
/** Path of the conversion endpoint on the webhook server. */
export const CONVERSION_PATH = '/convert';

/** The versions a kind is served in besides v1 (only CanaryRelease has any): v1 stays the storage version. */
const OLDER_VERSIONS: Partial<Record<string, Array<{ name: string; spec: JsonSchema; status: JsonSchema }>>> =
  {
    CanaryRelease: [{ name: V1ALPHA1, ...canaryReleaseV1alpha1Schema }],
  };

function versionOf(
  def: ResourceKind,
  name: string,
  parts: { spec: JsonSchema; status: JsonSchema },
  storage: boolean,
): CrdVersion {
  return {
    name,
    served: true,
    storage,
    schema: {
      openAPIV3Schema: {
        type: 'object',
        description: def.description,
        properties: {
          apiVersion: str(`Versioned schema of this object; ${GROUP}/${name}.`),
          kind: str(`Kind of this object; ${def.kind}.`),
          // The apiserver validates metadata itself and allows no other schema for it.
          metadata: { type: 'object' },
          spec: parts.spec,
          status: parts.status,
        },
        required: ['spec'],
      },
    },
    subresources: { status: {} },
    additionalPrinterColumns: def.printerColumns,
  };
}

/**
 * The apiextensions.k8s.io/v1 CRD for one kind: stored as `v1`, with the status subresource.
 * A kind with older served versions (CanaryRelease: `v1alpha1`) gets them too, and the
 * `Webhook` conversion strategy pointing at `CONVERSION_SERVICE`.
 */
export function toCrd(def: ResourceKind): CustomResourceDefinition {
  const older = OLDER_VERSIONS[def.kind] ?? [];
  const crd: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${GROUP}`, labels: { ...CRD_LABELS } },
    spec: {
      group: GROUP,
      scope: def.scope,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        shortNames: def.shortNames,
        categories: [CATEGORY],
      },
      versions: [
        versionOf(def, VERSION, def, true),
        ...older.map((v) => ({
          ...versionOf(def, v.name, v, false),
          deprecated: true,
          deprecationWarning: `${GROUP}/${v.name} ${def.kind} is deprecated; use ${GROUP}/${VERSION}`,
        })),
      ],
      ...(older.length > 0
        ? {
            conversion: {
              strategy: 'Webhook' as const,
              webhook: {
                conversionReviewVersions: ['v1'],
                clientConfig: { service: { ...CONVERSION_SERVICE, path: CONVERSION_PATH } },
              },
            },
          }
        : {}),
    },
  };
  // A deep copy: callers may edit what they get without changing the shared kind definitions.
  return structuredClone(crd);
}

/** The six Sluice CRDs, in `SLUICE_KINDS` order; fresh objects on every call. */
export function allCrds(): CustomResourceDefinition[] {
  return SLUICE_KINDS.map(toCrd);
}
