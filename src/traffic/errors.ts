import { FieldError } from '../placement/field-error.js';
import { TRAFFIC_PROVIDERS } from '../api/canary-release.js';

/**
 * A CanaryRelease whose `spec.trafficRouting` no router can act on (an unknown provider, the
 * provider's block missing). Terminal: retrying the same spec cannot succeed. Admission rejects
 * these already; this guards releases stored before a schema change and hand-built contexts.
 */
export class RouterConfigError extends FieldError {}

/** `spec.trafficRouting.provider` names no router Sluice has: never a silent default. */
export class UnknownTrafficProviderError extends RouterConfigError {
  readonly provider: unknown;

  constructor(provider: unknown) {
    const list = TRAFFIC_PROVIDERS.map((p) => JSON.stringify(p)).join(', ');
    super(
      'spec.trafficRouting.provider',
      `Unsupported value: ${JSON.stringify(provider) ?? String(provider)}: supported values: ${list}`,
    );
    this.provider = provider;
  }
}

/** A split that is not two whole percentages adding up to 100: a caller bug, never sent. */
export class InvalidSplitError extends Error {
  override readonly name = 'InvalidSplitError';
}

/**
 * The router object cannot take a split: missing, or it does not route to both Services.
 * `problems` are the same lines `verify` reports, each naming the object and field.
 */
export class TrafficRouteError extends Error {
  override readonly name = 'TrafficRouteError';
  readonly problems: readonly string[];

  constructor(problems: readonly string[], opts?: { cause?: unknown }) {
    super(problems.join('; '), opts);
    this.problems = problems;
  }
}
