/**
 * Feature gates, as Kubernetes components have them: a fixed table of named features, each
 * with a default and a maturity stage, switched with `--feature-gates=Name=true,Other=false`.
 * The table is the one place a gate is declared; `sluice version --features` prints it.
 */

/** Maturity of a feature (Kubernetes' wording): Alpha off by default, Beta on, GA always on. */
export type FeatureStage = 'Alpha' | 'Beta' | 'GA';

/** One gate: its default and stage, and what it switches, for `sluice version --features`. */
export interface FeatureSpec {
  readonly default: boolean;
  readonly stage: FeatureStage;
  readonly description: string;
}

/** Every gate Sluice knows. A name not in this table is a usage error, never silently ignored. */
export const FEATURES = {
  ConversionWebhook: {
    default: true,
    stage: 'Beta',
    description:
      'serve CanaryRelease v1alpha1 through the conversion webhook (TLS, caBundle written to the CRD)',
  },
  AdmissionWebhook: {
    default: true,
    stage: 'Beta',
    description: 'validate CanaryRelease and Delivery at admission (templates exist, queries parse, steps)',
  },
  StorageMigration: {
    default: false,
    stage: 'Alpha',
    description: 'on start, rewrite CanaryReleases stored as v1alpha1 and trim status.storedVersions',
  },
  StatisticalJudge: {
    default: false,
    stage: 'Alpha',
    description: 'allow analysis.judge mannWhitney (canary vs primary samples)',
  },
  GitWriteBack: {
    default: true,
    stage: 'Beta',
    description: 'revert the rolled-back change in Git (commit or pull request)',
  },
} as const satisfies Record<string, FeatureSpec>;

/** The name of a gate. */
export type FeatureName = keyof typeof FEATURES;

/** Every gate name, in table order. */
export const FEATURE_NAMES = Object.keys(FEATURES) as FeatureName[];

/** A `--feature-gates` value that names an unknown gate or is not `Name=true|false`. */
export class FeatureGateError extends Error {
  override readonly name = 'FeatureGateError';
}

/**
 * The gates in force for one process. Immutable: gates are decided once, at start, so that
 * no reconcile sees a feature flip under it.
 */
export class FeatureGates {
  readonly #overrides: ReadonlyMap<FeatureName, boolean>;

  constructor(overrides: ReadonlyMap<FeatureName, boolean> | Partial<Record<FeatureName, boolean>> = {}) {
    this.#overrides =
      overrides instanceof Map
        ? new Map(overrides)
        : new Map(Object.entries(overrides) as Array<[FeatureName, boolean]>);
  }

  /** Parses `Name=true,Other=false` (Kubernetes' syntax; empty means all defaults). */
  static parse(text: string): FeatureGates {
    const overrides = new Map<FeatureName, boolean>();
    for (const raw of text.split(',')) {
      const item = raw.trim();
      if (item === '') continue;
      const eq = item.indexOf('=');
      if (eq < 0) throw new FeatureGateError(`"${item}": expected Name=true or Name=false`);
      const name = item.slice(0, eq).trim();
      const value = item.slice(eq + 1).trim();
      if (!(name in FEATURES)) {
        throw new FeatureGateError(`unknown feature gate "${name}"; known: ${FEATURE_NAMES.join(', ')}`);
      }
      if (value !== 'true' && value !== 'false') {
        throw new FeatureGateError(`${name}: value must be true or false, got "${value}"`);
      }
      overrides.set(name as FeatureName, value === 'true');
    }
    return new FeatureGates(overrides);
  }

  /** Whether `name` is on: its override, else its default. */
  enabled(name: FeatureName): boolean {
    return this.#overrides.get(name) ?? FEATURES[name].default;
  }

  /** Every gate with its value and where the value came from, for logs and `version --features`. */
  list(): Array<{
    name: FeatureName;
    enabled: boolean;
    default: boolean;
    stage: FeatureStage;
    description: string;
  }> {
    return FEATURE_NAMES.map((name) => ({
      name,
      enabled: this.enabled(name),
      default: FEATURES[name].default,
      stage: FEATURES[name].stage,
      description: FEATURES[name].description,
    }));
  }
}

/** The defaults, for callers that take no flags (tests, `sluice` sub-commands). */
export const DEFAULT_FEATURE_GATES = new FeatureGates();
