import type { ConditionedStatus } from '../kube/conditions.js';
import {
  AGE_COLUMN,
  conditionMessageColumn,
  dnsLabel,
  dnsSubdomain,
  duration,
  httpUrl,
  interval,
  localRef,
  statusOf,
  type LocalObjectReference,
  type SluiceObject,
} from './common.js';
import {
  bool,
  enumOf,
  exactlyOne,
  int,
  intOrString,
  keyedList,
  list,
  num,
  obj,
  rule,
  str,
  timestamp,
  type ResourceKind,
  type ValidationRule,
} from './schema.js';

/** How traffic moves to the new version. Always written explicitly; never inferred from other fields. */
export type Strategy = 'canary' | 'blueGreen';
/** The values of `Strategy`, for schemas. */
export const STRATEGIES: readonly Strategy[] = ['canary', 'blueGreen'];

/** The traffic routers Sluice has; any other name is rejected at admission. */
export type TrafficProvider = 'gatewayAPI' | 'istio' | 'smi' | 'nginx' | 'replicas';
/** The values of `TrafficProvider`, for schemas. */
export const TRAFFIC_PROVIDERS: readonly TrafficProvider[] = [
  'gatewayAPI',
  'istio',
  'smi',
  'nginx',
  'replicas',
];

/** The workload being released. */
export interface TargetReference {
  apiVersion: 'apps/v1';
  kind: 'Deployment';
  name: string;
}

/** The Service in front of the workload, which the router splits. */
export interface CanaryService {
  port: number;
  targetPort?: number | string;
  /** Defaults (in the controller) to the target's name. */
  name?: string;
}

/** Gateway API: the HTTPRoute whose backendRefs weights Sluice sets. */
export interface GatewayApiRouting {
  httpRoute: LocalObjectReference;
}

/** Istio: the VirtualService whose route weights Sluice sets. */
export interface IstioRouting {
  virtualService: LocalObjectReference;
  destinationRule?: LocalObjectReference;
}

/** SMI: the TrafficSplit Sluice manages. */
export interface SmiRouting {
  trafficSplit: LocalObjectReference;
}

/** NGINX Ingress: the Ingress Sluice shadows with a canary Ingress. */
export interface NginxRouting {
  ingress: LocalObjectReference;
}

/** Which router shifts traffic, and the objects it works on. */
export interface TrafficRouting {
  provider: TrafficProvider;
  gatewayAPI?: GatewayApiRouting;
  istio?: IstioRouting;
  smi?: SmiRouting;
  nginx?: NginxRouting;
}

/** Canary weights: an explicit list, or `stepWeight` increments up to `maxWeight`. */
export interface CanarySteps {
  weights?: number[];
  stepWeight?: number;
  maxWeight?: number;
}

/** The acceptable range of a metric's value; a value outside fails the check. */
export interface ThresholdRange {
  min?: number;
  max?: number;
}

/** One metric the canary is scored on. */
export interface CanaryMetric {
  name: string;
  query?: string;
  templateRef?: LocalObjectReference;
  thresholdRange: ThresholdRange;
  weight: number;
  onNoData: 'fail' | 'hold';
  interval?: string;
}

/** How the canary is scored at each step. */
export interface CanaryAnalysis {
  scoreThreshold: number;
  failureLimit: number;
  metrics?: CanaryMetric[];
}

/** A webhook gate's endpoint. */
export interface GateWebhook {
  url: string;
  timeout: string;
}

/** A point where the release waits for a person (`sluice promote`) or a webhook to say go. */
export interface CanaryGate {
  name: string;
  before: 'rollout' | 'step' | 'promotion';
  type: 'manual' | 'webhook';
  webhook?: GateWebhook;
}

/** What Sluice does in Git after a rollback. */
export interface GitWriteBack {
  mode: 'revert' | 'pullRequest' | 'none';
}

/** How one workload is released. */
export interface CanaryReleaseSpec {
  targetRef: TargetReference;
  service: CanaryService;
  strategy: Strategy;
  trafficRouting: TrafficRouting;
  steps?: CanarySteps;
  interval: string;
  analysis: CanaryAnalysis;
  gates?: CanaryGate[];
  rollbackSLA?: string;
  skipAnalysis: boolean;
  gitWriteBack: GitWriteBack;
}

/** Where a release is in its lifecycle. */
export type CanaryPhase =
  | 'Initializing'
  | 'Progressing'
  | 'Paused'
  | 'WaitingPromotion'
  | 'Promoting'
  | 'Succeeded'
  | 'RollingBack'
  | 'RolledBack'
  | 'Failed';
/** The values of `CanaryPhase`, for schemas. */
export const CANARY_PHASES: readonly CanaryPhase[] = [
  'Initializing',
  'Progressing',
  'Paused',
  'WaitingPromotion',
  'Promoting',
  'Succeeded',
  'RollingBack',
  'RolledBack',
  'Failed',
];

/** The outcome of one measurement (Argo Rollouts' model: each has its own meaning for the judge). */
export type MeasurementOutcome = 'Successful' | 'Failed' | 'Inconclusive' | 'Error';

/** One measured metric value, kept so that on-call can see it against its threshold. */
export interface Measurement {
  metric: string;
  /** Canary traffic weight when measured. */
  canaryWeight: number;
  /** The value as text: JSON has no NaN or ±Inf, and they must stay distinct (`NaN`, `+Inf`, `-Inf`). */
  value?: string;
  outcome: MeasurementOutcome;
  measuredAt: string;
  message?: string;
}

/** Where the release stands. */
export interface CanaryReleaseStatus extends ConditionedStatus {
  phase?: CanaryPhase;
  canaryWeight?: number;
  step?: string;
  failedChecks?: number;
  measurements?: Measurement[];
  revision?: string;
  lastPromotedRevision?: string;
}

/** Progressive delivery of one workload. */
export type CanaryRelease = SluiceObject<'CanaryRelease', CanaryReleaseSpec, CanaryReleaseStatus>;

/** `status.measurements` keeps the newest this many. */
export const MAX_MEASUREMENTS = 100;
const WEIGHT = { minimum: 0, maximum: 100 };
const REVISION = { maxLength: 512 };

/**
 * The block named after `provider` is set exactly when that provider is chosen (or, for a
 * block that is optional, only then): a block for another router is a mistake, not a no-op.
 */
function providerBlockRule(provider: TrafficProvider, required: boolean): ValidationRule {
  const chosen = `self.provider == '${provider}'`;
  return required
    ? rule(
        `has(self.${provider}) == (${chosen})`,
        `${provider} must be set when, and only when, provider is ${provider}`,
        `.${provider}`,
      )
    : rule(
        `!has(self.${provider}) || ${chosen}`,
        `${provider} may only be set when provider is ${provider}`,
        `.${provider}`,
      );
}

const trafficRouting = obj<TrafficRouting>(
  'Which router shifts traffic between the stable and the canary version, and the objects it works on.',
  {
    provider: enumOf(
      'The router: gatewayAPI (HTTPRoute weights), istio (VirtualService), smi (TrafficSplit), nginx (canary Ingress) or replicas (replica ratio, no router).',
      TRAFFIC_PROVIDERS,
    ),
    gatewayAPI: obj<GatewayApiRouting>(
      'Gateway API routing.',
      { httpRoute: localRef('The HTTPRoute whose backendRefs weights are set.', 'HTTPRoute') },
      { required: ['httpRoute'] },
    ),
    istio: obj<IstioRouting>(
      'Istio routing.',
      {
        virtualService: localRef('The VirtualService whose route weights are set.', 'VirtualService'),
        destinationRule: localRef(
          'The DestinationRule with the stable and canary subsets.',
          'DestinationRule',
        ),
      },
      { required: ['virtualService'] },
    ),
    smi: obj<SmiRouting>(
      'SMI routing.',
      { trafficSplit: localRef('The TrafficSplit Sluice manages.', 'TrafficSplit') },
      { required: ['trafficSplit'] },
    ),
    nginx: obj<NginxRouting>(
      'NGINX Ingress routing.',
      { ingress: localRef('The Ingress a canary Ingress is created beside.', 'Ingress') },
      { required: ['ingress'] },
    ),
  },
  {
    required: ['provider'],
    'x-kubernetes-validations': [
      providerBlockRule('gatewayAPI', true),
      providerBlockRule('istio', true),
      providerBlockRule('nginx', true),
      providerBlockRule('smi', false),
    ],
  },
);

const steps = obj<CanarySteps>(
  'Canary traffic weights: either an explicit list (weights) or stepWeight increments up to maxWeight. After the last step the canary is promoted to all traffic.',
  {
    weights: list(
      'Canary weights in percent, strictly increasing, e.g. [5, 20, 50].',
      int('A weight in percent.', WEIGHT),
      {
        minItems: 1,
        maxItems: 20,
        // "set" makes a repeated weight a "Duplicate value" error naming its index.
        'x-kubernetes-list-type': 'set',
        'x-kubernetes-validations': [
          rule('self.isSorted()', 'weights must be strictly increasing, e.g. [5, 20, 50]'),
          rule('self.exists(w, w > 0)', 'at least one weight must be greater than 0'),
        ],
      },
    ),
    stepWeight: int('Weight added at each step, in percent.', { minimum: 1, maximum: 100 }),
    maxWeight: int('Last canary weight before promotion, in percent.', { minimum: 1, maximum: 100 }),
  },
  {
    'x-kubernetes-validations': [
      exactlyOne(
        ['weights', 'stepWeight'],
        'steps must set either weights or stepWeight (with maxWeight), not both',
      ),
      rule(
        'has(self.stepWeight) == has(self.maxWeight)',
        'stepWeight and maxWeight must be set together',
        '.maxWeight',
      ),
      rule(
        '!has(self.stepWeight) || !has(self.maxWeight) || self.stepWeight <= self.maxWeight',
        'stepWeight must not exceed maxWeight',
        '.stepWeight',
      ),
    ],
  },
);

const metric = obj<CanaryMetric>(
  'A metric: a query (or a MetricTemplate), the range its value must stay in, and its weight in the score.',
  {
    name: dnsLabel('Name of the metric, unique in the list, e.g. error-rate.'),
    query: str(
      'PromQL query returning one value; may use {{ target }}, {{ namespace }} and {{ interval }}.',
      {
        minLength: 1,
        maxLength: 8192,
      },
    ),
    templateRef: localRef(
      'A MetricTemplate in this namespace that provides the provider and query.',
      'MetricTemplate',
    ),
    thresholdRange: obj<ThresholdRange>(
      'The range the value must stay in; outside it the check fails.',
      { min: num('Lowest acceptable value.'), max: num('Highest acceptable value.') },
      {
        'x-kubernetes-validations': [
          rule('has(self.min) || has(self.max)', 'thresholdRange must set min, max or both'),
          rule('!has(self.min) || !has(self.max) || self.min <= self.max', 'min must not exceed max', '.min'),
        ],
      },
    ),
    weight: num('Weight of the metric in the score; 0 records the metric without scoring it.', {
      minimum: 0,
      default: 1,
    }),
    onNoData: enumOf(
      'When the query returns no data: fail counts a failed check, hold waits (never promotes).',
      ['fail', 'hold'],
      {
        default: 'fail',
      },
    ),
    interval: duration('Range the query aggregates over ({{ interval }}); the step interval when unset.'),
  },
  {
    required: ['name', 'thresholdRange'],
    'x-kubernetes-validations': [
      exactlyOne(['query', 'templateRef'], 'a metric must set exactly one of query or templateRef'),
    ],
  },
);

const analysis = obj<CanaryAnalysis>(
  'How the canary is scored at each step: the weighted share of passing metrics must reach scoreThreshold.',
  {
    scoreThreshold: num('Minimum weighted score (0 to 1) for a step to pass.', {
      minimum: 0,
      maximum: 1,
      default: 0.95,
    }),
    failureLimit: int('Failed steps tolerated before rolling back.', { minimum: 0, default: 2 }),
    metrics: keyedList('Metrics the score is computed from.', 'name', metric, {
      maxItems: 20,
      'x-kubernetes-validations': [
        rule(
          'self.exists(m, !has(m.weight) || m.weight > 0)',
          'at least one metric must have a weight greater than 0',
        ),
      ],
    }),
  },
  { default: {} },
);

const gate = obj<CanaryGate>(
  'A gate: the release waits here until a person promotes it (manual) or a webhook answers 2xx.',
  {
    name: dnsLabel('Name of the gate, unique in the list.'),
    before: enumOf(
      'Where the release waits: before the first traffic shift (rollout), before each step, or before promotion.',
      ['rollout', 'step', 'promotion'],
    ),
    type: enumOf('manual waits for `sluice promote`; webhook calls webhook.url.', ['manual', 'webhook']),
    webhook: obj<GateWebhook>(
      'The endpoint a webhook gate calls.',
      {
        url: httpUrl('URL that is POSTed the release state; a 2xx answer opens the gate.'),
        timeout: duration('Limit for one call.', '10s'),
      },
      { required: ['url'] },
    ),
  },
  {
    required: ['name', 'before', 'type'],
    'x-kubernetes-validations': [
      rule(
        "has(self.webhook) == (self.type == 'webhook')",
        'webhook must be set when, and only when, type is webhook',
        '.webhook',
      ),
    ],
  },
);

const spec = obj<CanaryReleaseSpec>(
  'How the workload is released: the strategy, the router, the steps, the analysis and what happens in Git on rollback.',
  {
    targetRef: obj<TargetReference>(
      'The workload being released.',
      {
        apiVersion: enumOf('API version of the workload.', ['apps/v1'], { default: 'apps/v1' }),
        kind: enumOf('Kind of the workload.', ['Deployment']),
        name: dnsSubdomain('Name of the workload in this namespace.'),
      },
      { required: ['kind', 'name'] },
    ),
    service: obj<CanaryService>(
      'The Service in front of the workload.',
      {
        port: int('Port the Service exposes.', { minimum: 1, maximum: 65535 }),
        targetPort: intOrString('Container port (number or name) the Service sends to; port when unset.'),
        name: dnsLabel("Name of the Service; the target's name when unset."),
      },
      { required: ['port'] },
    ),
    strategy: enumOf(
      'canary shifts traffic step by step; blueGreen switches all traffic at once after analysis.',
      STRATEGIES,
    ),
    trafficRouting,
    steps,
    interval: interval('Time between steps; analysis runs once per interval.', '1m'),
    analysis,
    gates: keyedList('Points where the release waits for a person or a webhook.', 'name', gate, {
      maxItems: 8,
    }),
    rollbackSLA: duration(
      'Longest acceptable time from a failed analysis to all traffic back on the stable version; beyond it the release reports Stalled.',
    ),
    skipAnalysis: bool('Promote through the steps without running the analysis (emergency fixes).', {
      default: false,
    }),
    gitWriteBack: obj<GitWriteBack>(
      'What Sluice does in Git after a rollback, so that Git keeps saying what runs.',
      {
        mode: enumOf(
          'revert pushes a revert commit; pullRequest opens a pull request with it; none leaves Git alone.',
          ['revert', 'pullRequest', 'none'],
          { default: 'none' },
        ),
      },
      { default: {} },
    ),
  },
  {
    required: ['targetRef', 'service', 'strategy', 'trafficRouting'],
    'x-kubernetes-validations': [
      rule("self.strategy != 'canary' || has(self.steps)", 'strategy canary needs steps', '.steps'),
      rule(
        "self.strategy != 'blueGreen' || !has(self.steps)",
        'strategy blueGreen switches all traffic at once and takes no steps',
        '.steps',
      ),
      rule(
        '(has(self.skipAnalysis) && self.skipAnalysis) || (has(self.analysis) && has(self.analysis.metrics) && size(self.analysis.metrics) > 0)',
        'analysis.metrics needs at least one metric unless skipAnalysis is true',
        '.analysis.metrics',
      ),
    ],
  },
);

const status = statusOf<CanaryReleaseStatus>('Where the release stands.', {
  phase: enumOf('Lifecycle phase.', CANARY_PHASES),
  canaryWeight: int('Current canary traffic weight, in percent.', WEIGHT),
  step: str('Current step of all steps, e.g. 3/5.', { pattern: '^[0-9]+/[0-9]+$', maxLength: 16 }),
  failedChecks: int('Failed steps since the release started.', { minimum: 0 }),
  measurements: list(
    `The newest ${MAX_MEASUREMENTS} measurements, oldest first.`,
    obj<Measurement>(
      'One measured value.',
      {
        metric: str('Name of the metric.', { maxLength: 63 }),
        canaryWeight: int('Canary weight when measured.', WEIGHT),
        value: str('Measured value as text (NaN, +Inf and -Inf included); absent when there was no data.', {
          maxLength: 64,
        }),
        outcome: enumOf('Successful, Failed, Inconclusive or Error.', [
          'Successful',
          'Failed',
          'Inconclusive',
          'Error',
        ]),
        measuredAt: timestamp('When the value was measured.'),
        message: str('Why, e.g. the threshold it broke or the query error.', { maxLength: 1024 }),
      },
      { required: ['metric', 'canaryWeight', 'outcome', 'measuredAt'] },
    ),
    { maxItems: MAX_MEASUREMENTS },
  ),
  revision: str('Revision being released (the workload template hash or the Git revision).', REVISION),
  lastPromotedRevision: str('Last revision that was promoted to all traffic.', REVISION),
});

/** The `CanaryRelease` kind: traffic steps, metric analysis, gates and Git write-back for one workload. */
export const canaryReleaseKind: ResourceKind<'CanaryRelease'> = {
  kind: 'CanaryRelease',
  plural: 'canaryreleases',
  singular: 'canaryrelease',
  scope: 'Namespaced',
  // Not "canary": Flagger's Canary kind uses it.
  shortNames: ['crel'],
  description:
    'CanaryRelease ships a new version of one workload progressively: it shifts traffic step by step, scores the canary on metrics, then promotes it or rolls it back (in the cluster and in Git).',
  spec,
  status,
  printerColumns: [
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Weight', type: 'integer', jsonPath: '.status.canaryWeight' },
    { name: 'Step', type: 'string', jsonPath: '.status.step' },
    conditionMessageColumn('Ready'),
    AGE_COLUMN,
  ],
};
