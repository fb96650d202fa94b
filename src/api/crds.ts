import { canaryReleaseKind } from './canary-release.js';
import { clusterKind } from './cluster.js';
import { API_VERSION, CATEGORY, GROUP, VERSION } from './common.js';
import { deliveryKind } from './delivery.js';
import { gitSourceKind } from './git-source.js';
import { metricTemplateKind } from './metric-template.js';
import { placementRuleKind } from './placement-rule.js';
import { str, type CustomResourceDefinition, type ResourceKind } from './schema.js';

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

/** The apiextensions.k8s.io/v1 CRD for one kind: served and stored as `v1`, with the status subresource. */
export function toCrd(def: ResourceKind): CustomResourceDefinition {
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
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: def.description,
              properties: {
                apiVersion: str('Versioned schema of this object; sluice.dev/v1.'),
                kind: str(`Kind of this object; ${def.kind}.`),
                // The apiserver validates metadata itself and allows no other schema for it.
                metadata: { type: 'object' },
                spec: def.spec,
                status: def.status,
              },
              required: ['spec'],
            },
          },
          subresources: { status: {} },
          additionalPrinterColumns: def.printerColumns,
        },
      ],
    },
  };
  // A deep copy: callers may edit what they get without changing the shared kind definitions.
  return structuredClone(crd);
}

/** The six Sluice CRDs, in `SLUICE_KINDS` order; fresh objects on every call. */
export function allCrds(): CustomResourceDefinition[] {
  return SLUICE_KINDS.map(toCrd);
}
