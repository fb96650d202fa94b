import type { CanaryRelease } from '../api/canary-release.js';

/**
 * The names of everything a release works on, derived once from its spec (Flagger's model):
 * the target Deployment synced from Git is the canary; Sluice keeps `<apex><primarySuffix>`
 * as the stable Deployment and three Services — apex (what clients call), primary and canary.
 */
export interface ReleaseNames {
  readonly namespace: string;
  /** The Deployment from Git: the version under test. */
  readonly target: string;
  /** The stable Deployment Sluice maintains. */
  readonly primary: string;
  readonly apexService: string;
  readonly primaryService: string;
  readonly canaryService: string;
}

const DEFAULT_PRIMARY_SUFFIX = '-primary';
const DEFAULT_CANARY_SUFFIX = '-canary';

/** The names for one release; suffixes default as the schema defaults them. */
export function releaseNames(release: Pick<CanaryRelease, 'metadata' | 'spec'>): ReleaseNames {
  const { targetRef, service } = release.spec;
  const apex = service.name ?? targetRef.name;
  const primarySuffix = service.primarySuffix ?? DEFAULT_PRIMARY_SUFFIX;
  const canarySuffix = service.canarySuffix ?? DEFAULT_CANARY_SUFFIX;
  return {
    namespace: release.metadata.namespace ?? 'default',
    target: targetRef.name,
    primary: `${targetRef.name}${primarySuffix}`,
    apexService: apex,
    primaryService: `${apex}${primarySuffix}`,
    canaryService: `${apex}${canarySuffix}`,
  };
}
