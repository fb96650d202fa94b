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
  type JsonSchema,
  type ResourceKind,
  type ValidationRule,
} from './schema.js';
import { metricProviderSchema, type MetricProvider } from './metric-template.js';

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
  /** The apex Service; defaults (in the controller) to the target's name. */
  name?: string;
  /** Appended to the apex name for the primary Deployment and Service (Flagger's `-primary`). */
  primarySuffix: string;
  /** Appended to the apex name for the canary Service. */
  canarySuffix: string;
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

/**
 * Metrics Sluice knows how to query without PromQL, from the OpenTelemetry HTTP semantic
 * conventions (`http.server.request.duration`, `http.response.status_code`) as a
 * Prometheus-compatible backend stores them.
 */
export type BuiltinMetric = 'requestSuccessRate' | 'requestDuration';
/** The values of `BuiltinMetric`, for schemas. */
export const BUILTIN_METRICS: readonly BuiltinMetric[] = ['requestSuccessRate', 'requestDuration'];

/** Which way a metric may move for the statistical judge (Kayenta's direction). */
export type ComparisonDirection = 'increase' | 'decrease' | 'either';

/**
 * How the statistical judge compares the canary's samples of a metric with the primary's
 * (Mann-Whitney U, as Kayenta's NetflixACAJudge).
 */
export interface MetricComparison {
  /** The direction that counts as worse: `increase` fails a canary that is higher (latency, errors). */
  direction: ComparisonDirection;
  /** Tolerated change in percent before a significant difference fails the metric. */
  allowedIncrease?: number;
  allowedDecrease?: number;
  /** A failing critical metric fails the step whatever the score. */
  critical: boolean;
  /** NaN samples: dropped (`remove`) or counted as 0 (`replace`). */
  nanStrategy: 'remove' | 'replace';
}

/** One metric the canary is scored on. */
export interface CanaryMetric {
  name: string;
  query?: string;
  templateRef?: LocalObjectReference;
  builtin?: BuiltinMetric;
  /** For `builtin: requestDuration`: the latency quantile, e.g. 0.99. */
  quantile?: number;
  /** Required by the threshold judge; the statistical judge uses `comparison` instead. */
  thresholdRange?: ThresholdRange;
  comparison?: MetricComparison;
  weight: number;
  onNoData: 'fail' | 'hold';
  interval?: string;
}

/** The judge that turns measurements into a step verdict. */
export type JudgeKind = 'threshold' | 'mannWhitney';

/** How the canary is scored at each step. */
export interface CanaryAnalysis {
  scoreThreshold: number;
  failureLimit: number;
  judge: JudgeKind;
  /** Confidence level of the statistical judge's interval, e.g. 0.95. */
  confidence: number;
  /** Where inline `query` and `builtin` metrics run; MetricTemplates carry their own. */
  provider?: MetricProvider;
  metrics?: CanaryMetric[];
}

/** A webhook gate's endpoint. */
export interface GateWebhook {
  url: string;
  timeout: string;
  /** Further attempts after a failed call (network error, timeout or 5xx) before the gate counts as closed. */
  retries: number;
}

/**
 * Where a gate sits (Flagger's webhook types): before the first traffic shift, before each
 * traffic increase, before promotion, or — `rollback` — a hook whose 2xx answer rolls the
 * release back while it progresses or waits.
 */
export type GatePoint = 'preRollout' | 'confirmTrafficIncrease' | 'confirmPromotion' | 'rollback';
/** The values of `GatePoint`, for schemas. */
export const GATE_POINTS: readonly GatePoint[] = [
  'preRollout',
  'confirmTrafficIncrease',
  'confirmPromotion',
  'rollback',
];

/** A point where the release waits for a person (`sluice promote`) or a webhook to say go. */
export interface CanaryGate {
  name: string;
  at: GatePoint;
  type: 'manual' | 'webhook';
  webhook?: GateWebhook;
}

/** The Git host API a pull request is opened through. */
export interface PullRequestTarget {
  provider: 'github' | 'gitlab';
  /** API base URL, e.g. https://api.github.com or https://gitlab.example.com/api/v4. */
  apiURL: string;
  /** `owner/name` on GitHub; the project path or numeric id on GitLab. */
  repository: string;
  /** Secret in this namespace with key `token`. */
  secretRef: LocalObjectReference;
  /** Branch the pull request targets; the Delivery's source branch when unset. */
  baseBranch?: string;
}

/** What Sluice does in Git after a rollback. */
export interface GitWriteBack {
  mode: 'revert' | 'pullRequest' | 'none';
  pullRequest?: PullRequestTarget;
}

/** How one workload is released. */
export interface CanaryReleaseSpec {
  /**
   * The Delivery that syncs the target from Git. With it, the release runs in lockstep on
   * every cluster the Delivery is applied to and writes back to the Delivery's GitSource;
   * without it, the target lives in the cluster the CanaryRelease is in (Flagger's model)
   * and `gitWriteBack.mode` must be `none`.
   */
  deliveryRef?: LocalObjectReference;
  targetRef: TargetReference;
  service: CanaryService;
  strategy: Strategy;
  trafficRouting: TrafficRouting;
  steps?: CanarySteps;
  interval: string;
  analysis: CanaryAnalysis;
  gates?: CanaryGate[];
  rollbackSLA?: string;
  /**
   * How long the target keeps its pods after all traffic was routed back to the primary (on
   * promotion and on rollback), so that proxies still applying the route do not send requests
   * to pods already gone (Argo Rollouts' scaleDownDelaySeconds). Default 30s. Not used by the
   * `replicas` router, whose route is the scaling itself.
   */
  scaleDownDelay?: string;
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
  /** The member cluster it was measured on (releases that follow a Delivery run on several). */
  cluster?: string;
  /** Canary traffic weight when measured. */
  canaryWeight: number;
  /** The value as text: JSON has no NaN or ±Inf, and they must stay distinct (`NaN`, `+Inf`, `-Inf`). */
  value?: string;
  /** The threshold as on-call reads it, e.g. `>= 0.99`, `<= 500`, `0.1..0.9`, or the judge's interval. */
  threshold?: string;
  outcome: MeasurementOutcome;
  measuredAt: string;
  message?: string;
}

/** One entry of the release's timeline: a phase change, a step, a decision. */
export interface Transition {
  at: string;
  phase: CanaryPhase;
  canaryWeight: number;
  step?: string;
  /** CamelCase reason, also the Event reason, e.g. `StepAdvanced`, `AnalysisFailed`, `Promoted`. */
  reason: string;
  message: string;
}

/** What Git write-back did after a rollback. */
export interface WriteBackRecord {
  mode: 'revert' | 'pullRequest' | 'none';
  /** `revert` when the bad commit reverted cleanly, `restore` when file contents were restored. */
  method?: 'revert' | 'restore';
  commit?: string;
  pullRequestURL?: string;
  pushedAt?: string;
  /** Why write-back failed (it is retried; the rollback in the cluster does not wait for it). */
  error?: string;
}

/** Why and how a release was rolled back, for on-call. */
export interface RollbackRecord {
  at: string;
  step: string;
  canaryWeight: number;
  /** CamelCase: AnalysisFailed, Aborted, RollbackGate, ProgressDeadline… */
  reason: string;
  message: string;
  /** The metric that failed the last analysis, with its value and threshold. */
  metric?: string;
  value?: string;
  threshold?: string;
  /** The revision that was rolled back; the Delivery never applies it again. */
  revision?: string;
  writeBack?: WriteBackRecord;
}

/**
 * Operator requests already acted on: for each action, the value of its `sluice.dev/<action>`
 * annotation when it was handled. A different annotation value is a new request; the same
 * value is never acted on twice, even after a restart.
 */
export interface AcknowledgedRequests {
  promote?: string;
  abort?: string;
  pause?: string;
  resume?: string;
  retry?: string;
}

/** The gate the release waits at, if any. */
export interface GateStatus {
  name: string;
  since: string;
  attempts: number;
  message?: string;
}

/** Where the release stands. */
export interface CanaryReleaseStatus extends ConditionedStatus {
  phase?: CanaryPhase;
  canaryWeight?: number;
  step?: string;
  failedChecks?: number;
  /** Weighted score of the last analysis, 0 to 1. */
  lastScore?: number;
  measurements?: Measurement[];
  /** Revision under test: the Git revision of the Delivery, or the target's template hash. */
  revision?: string;
  /** Hash of the target's pod template and the ConfigMaps and Secrets it references. */
  templateHash?: string;
  lastPromotedRevision?: string;
  lastPromotedTemplateHash?: string;
  /** Phase the release was in when paused, restored on resume. */
  pausedFrom?: CanaryPhase;
  phaseSince?: string;
  stepSince?: string;
  lastAnalysisAt?: string;
  /** When all traffic was last routed back to the primary (promotion or rollback); the target is scaled to 0 `scaleDownDelay` after it. */
  primaryRoutedAt?: string;
  gate?: GateStatus;
  /** The clusters this run acts on. */
  clusters?: string[];
  transitions?: Transition[];
  rollback?: RollbackRecord;
  /** Revisions rolled back, newest last; the Delivery refuses to apply them. */
  rolledBackRevisions?: string[];
  acknowledgedRequests?: AcknowledgedRequests;
}

/** Progressive delivery of one workload. */
export type CanaryRelease = SluiceObject<'CanaryRelease', CanaryReleaseSpec, CanaryReleaseStatus>;

/** `status.measurements` keeps the newest this many. */
export const MAX_MEASUREMENTS = 100;
/** `status.transitions` keeps the newest this many. */
export const MAX_TRANSITIONS = 50;
/** `status.rolledBackRevisions` keeps the newest this many. */
export const MAX_ROLLED_BACK_REVISIONS = 20;
/** Annotations an operator sets (through `sluice promote|abort|pause|resume|retry`). */
export const OPERATOR_ACTIONS = ['promote', 'abort', 'pause', 'resume', 'retry'] as const;
export type OperatorAction = (typeof OPERATOR_ACTIONS)[number];
/** The annotation of an operator action; its value (a timestamp) identifies one request. */
export function operatorAnnotation(action: OperatorAction): string {
  return `sluice.dev/${action}`;
}
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
    builtin: enumOf(
      'A metric Sluice queries itself from OpenTelemetry HTTP server metrics: requestSuccessRate (share of non-5xx responses, 0 to 1) or requestDuration (latency quantile in milliseconds).',
      BUILTIN_METRICS,
    ),
    quantile: num('Latency quantile for builtin requestDuration, e.g. 0.99 (the default).', {
      minimum: 0.01,
      maximum: 0.999,
    }),
    comparison: obj<MetricComparison>(
      "How the statistical judge (analysis.judge: mannWhitney) compares the canary's samples with the primary's.",
      {
        direction: enumOf('The direction that counts as worse.', ['increase', 'decrease', 'either'], {
          default: 'increase',
        }),
        allowedIncrease: num('Tolerated increase in percent.', { minimum: 0 }),
        allowedDecrease: num('Tolerated decrease in percent.', { minimum: 0 }),
        critical: bool('A failing critical metric fails the step whatever the score.', { default: false }),
        nanStrategy: enumOf(
          'NaN samples: remove drops them, replace counts them as 0.',
          ['remove', 'replace'],
          {
            default: 'remove',
          },
        ),
      },
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
    required: ['name'],
    'x-kubernetes-validations': [
      exactlyOne(
        ['query', 'templateRef', 'builtin'],
        'a metric must set exactly one of query, templateRef or builtin',
      ),
      rule(
        "!has(self.quantile) || (has(self.builtin) && self.builtin == 'requestDuration')",
        'quantile is only for builtin requestDuration',
        '.quantile',
      ),
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
    judge: enumOf(
      'threshold scores each metric against its thresholdRange; mannWhitney compares canary and primary samples statistically (Kayenta-style).',
      ['threshold', 'mannWhitney'],
      { default: 'threshold' },
    ),
    confidence: num('Confidence level of the statistical judge, e.g. 0.95.', {
      minimum: 0.5,
      maximum: 0.999,
      default: 0.95,
    }),
    provider: metricProviderSchema(
      'Where inline query and builtin metrics run; a MetricTemplate carries its own provider.',
    ),
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
  {
    default: {},
    'x-kubernetes-validations': [
      rule(
        "(has(self.judge) && self.judge == 'mannWhitney') || !has(self.metrics) || self.metrics.all(m, has(m.thresholdRange))",
        'every metric needs a thresholdRange with the threshold judge',
        '.metrics',
      ),
      rule(
        '!has(self.metrics) || !self.metrics.exists(m, has(m.query) || has(m.builtin)) || has(self.provider)',
        'provider is required when a metric uses query or builtin',
        '.provider',
      ),
    ],
  },
);

const gate = obj<CanaryGate>(
  'A gate: the release waits here until a person promotes it (manual) or a webhook answers 2xx.',
  {
    name: dnsLabel('Name of the gate, unique in the list.'),
    at: enumOf(
      'Where the gate sits: preRollout (before the first traffic shift), confirmTrafficIncrease (before each step), confirmPromotion (before promotion), or rollback (a webhook whose 2xx answer rolls the release back).',
      GATE_POINTS,
    ),
    type: enumOf('manual waits for `sluice promote`; webhook calls webhook.url.', ['manual', 'webhook']),
    webhook: obj<GateWebhook>(
      'The endpoint a webhook gate calls.',
      {
        url: httpUrl('URL that is POSTed the release state; a 2xx answer opens the gate.'),
        timeout: duration('Limit for one call.', '10s'),
        retries: int('Further attempts after a failed call (network error, timeout or 5xx).', {
          minimum: 0,
          maximum: 10,
          default: 2,
        }),
      },
      { required: ['url'] },
    ),
  },
  {
    required: ['name', 'at', 'type'],
    'x-kubernetes-validations': [
      rule("self.at != 'rollback' || self.type == 'webhook'", 'a rollback gate must be a webhook', '.type'),
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
    deliveryRef: localRef(
      'The Delivery that syncs the target from Git: the release runs on every cluster it is applied to and writes back to its GitSource. Unset: the target is in this cluster.',
      'Delivery',
    ),
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
        name: dnsLabel("Name of the apex Service; the target's name when unset."),
        primarySuffix: str('Suffix of the primary Deployment and Service names.', {
          default: '-primary',
          pattern: '^-[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
          maxLength: 20,
        }),
        canarySuffix: str('Suffix of the canary Service name.', {
          default: '-canary',
          pattern: '^-[a-z0-9]([-a-z0-9]*[a-z0-9])?$',
          maxLength: 20,
        }),
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
    scaleDownDelay: duration(
      'How long the target keeps its pods after all traffic was routed back to the primary (promotion or rollback), so that proxies still applying the route find them; default 30s. Not used by the replicas router.',
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
        pullRequest: obj<PullRequestTarget>(
          'The Git host API the pull request is opened through (mode pullRequest).',
          {
            provider: enumOf('github or gitlab.', ['github', 'gitlab']),
            apiURL: httpUrl(
              'API base URL, e.g. https://api.github.com or https://gitlab.example.com/api/v4.',
            ),
            repository: str('owner/name on GitHub; the project path or numeric id on GitLab.', {
              minLength: 1,
              maxLength: 255,
            }),
            secretRef: localRef('Secret in this namespace with key token.', 'Secret'),
            baseBranch: str("Branch the pull request targets; the source's branch when unset.", {
              minLength: 1,
              maxLength: 255,
            }),
          },
          { required: ['provider', 'apiURL', 'repository', 'secretRef'] },
        ),
      },
      {
        default: {},
        'x-kubernetes-validations': [
          rule(
            "has(self.pullRequest) == (has(self.mode) && self.mode == 'pullRequest')",
            'pullRequest must be set when, and only when, mode is pullRequest',
            '.pullRequest',
          ),
        ],
      },
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
        "has(self.deliveryRef) || !has(self.gitWriteBack) || !has(self.gitWriteBack.mode) || self.gitWriteBack.mode == 'none'",
        'gitWriteBack needs deliveryRef: the Git repository is the Delivery source',
        '.gitWriteBack.mode',
      ),
      rule(
        '(has(self.skipAnalysis) && self.skipAnalysis) || (has(self.analysis) && has(self.analysis.metrics) && size(self.analysis.metrics) > 0)',
        'analysis.metrics needs at least one metric unless skipAnalysis is true',
        '.analysis.metrics',
      ),
    ],
  },
);

const TIME_TEXT = { maxLength: 64 };
const phaseSchema = (d: string) => enumOf(d, CANARY_PHASES);

const status = statusOf<CanaryReleaseStatus>('Where the release stands.', {
  phase: phaseSchema('Lifecycle phase.'),
  canaryWeight: int('Current canary traffic weight, in percent.', WEIGHT),
  step: str('Current step of all steps, e.g. 3/5.', { pattern: '^[0-9]+/[0-9]+$', maxLength: 16 }),
  failedChecks: int('Failed steps since the release started.', { minimum: 0 }),
  lastScore: num('Weighted score of the last analysis, 0 to 1.', { minimum: 0, maximum: 1 }),
  measurements: list(
    `The newest ${MAX_MEASUREMENTS} measurements, oldest first.`,
    obj<Measurement>(
      'One measured value.',
      {
        metric: str('Name of the metric.', { maxLength: 63 }),
        cluster: str('Member cluster it was measured on.', { maxLength: 253 }),
        canaryWeight: int('Canary weight when measured.', WEIGHT),
        value: str('Measured value as text (NaN, +Inf and -Inf included); absent when there was no data.', {
          maxLength: 64,
        }),
        threshold: str('The threshold as text, e.g. >= 0.99 or <= 500.', { maxLength: 128 }),
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
  revision: str(
    'Revision under test: the Git revision of the Delivery, or the target template hash.',
    REVISION,
  ),
  templateHash: str(
    'Hash of the target pod template and the ConfigMaps and Secrets it references.',
    REVISION,
  ),
  lastPromotedRevision: str('Last revision that was promoted to all traffic.', REVISION),
  lastPromotedTemplateHash: str('Template hash of the last promoted revision.', REVISION),
  pausedFrom: phaseSchema('Phase the release was in when paused; restored on resume.'),
  phaseSince: timestamp('When the current phase began.'),
  stepSince: timestamp('When the current step began.'),
  lastAnalysisAt: timestamp('When the analysis last ran.'),
  primaryRoutedAt: timestamp(
    'When all traffic was last routed back to the primary (promotion or rollback); the target is scaled to 0 scaleDownDelay after it.',
  ),
  gate: obj<GateStatus>(
    'The gate the release waits at.',
    {
      name: str('Name of the gate.', { maxLength: 63 }),
      since: timestamp('Since when it waits.'),
      attempts: int('Webhook calls made.', { minimum: 0 }),
      message: str('Last answer or error.', { maxLength: 1024 }),
    },
    { required: ['name', 'since', 'attempts'] },
  ),
  clusters: list('The member clusters this run acts on.', str('Cluster name.', { maxLength: 253 }), {
    maxItems: 256,
  }),
  transitions: list(
    `The timeline, newest last (at most ${MAX_TRANSITIONS}).`,
    obj<Transition>(
      'One transition.',
      {
        at: timestamp('When.'),
        phase: phaseSchema('Phase after the transition.'),
        canaryWeight: int('Canary weight after the transition.', WEIGHT),
        step: str('Step after the transition.', { maxLength: 16 }),
        reason: str('CamelCase reason, as the Event.', { maxLength: 128 }),
        message: str('What happened and why.', { maxLength: 2048 }),
      },
      { required: ['at', 'phase', 'canaryWeight', 'reason', 'message'] },
    ),
    { maxItems: MAX_TRANSITIONS },
  ),
  rollback: obj<RollbackRecord>(
    'Why and how the release was last rolled back.',
    {
      at: timestamp('When.'),
      step: str('Step it was at.', { maxLength: 16 }),
      canaryWeight: int('Canary weight it was at.', WEIGHT),
      reason: str('CamelCase reason.', { maxLength: 128 }),
      message: str('What failed.', { maxLength: 2048 }),
      metric: str('The failing metric.', { maxLength: 63 }),
      value: str('Its value.', { maxLength: 64 }),
      threshold: str('Its threshold.', { maxLength: 128 }),
      revision: str('The revision rolled back.', REVISION),
      writeBack: obj<WriteBackRecord>(
        'What Git write-back did.',
        {
          mode: enumOf('The write-back mode.', ['revert', 'pullRequest', 'none']),
          method: enumOf('revert (clean revert) or restore (file contents restored).', ['revert', 'restore']),
          commit: str('The commit pushed.', { maxLength: 64 }),
          pullRequestURL: str('The pull request opened.', { maxLength: 2048 }),
          pushedAt: timestamp('When it was pushed.'),
          error: str('Why it failed (retried).', { maxLength: 2048 }),
        },
        { required: ['mode'] },
      ),
    },
    { required: ['at', 'step', 'canaryWeight', 'reason', 'message'] },
  ),
  rolledBackRevisions: list(
    `Revisions rolled back, newest last (at most ${MAX_ROLLED_BACK_REVISIONS}); the Delivery refuses them.`,
    str('A revision.', REVISION),
    { maxItems: MAX_ROLLED_BACK_REVISIONS },
  ),
  acknowledgedRequests: obj<AcknowledgedRequests>(
    'For each operator action, the annotation value last acted on.',
    Object.fromEntries(
      OPERATOR_ACTIONS.map((a) => [a, str(`Value of sluice.dev/${a} last acted on.`, TIME_TEXT)]),
    ) as Record<OperatorAction, JsonSchema>,
  ),
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
