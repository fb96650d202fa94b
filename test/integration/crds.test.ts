import { request } from 'node:https';
import type { RequestOptions } from 'node:https';
import type { CanaryRelease, CanaryReleaseSpec, CanaryReleaseStatus } from '../../src/api/canary-release.js';
import type { ClusterSpec, ClusterStatus } from '../../src/api/cluster.js';
import { API_VERSION, allCrds, kindInfo, toCrd, type SluiceKind } from '../../src/api/crds.js';
import type { DeliverySpec, DeliveryStatus } from '../../src/api/delivery.js';
import { gitSourceKind, type GitSourceSpec, type GitSourceStatus } from '../../src/api/git-source.js';
import { CrdInstallError, installCrds } from '../../src/api/install.js';
import type { MetricTemplateSpec, MetricTemplateStatus } from '../../src/api/metric-template.js';
import type { PlacementRuleSpec, PlacementRuleStatus } from '../../src/api/placement-rule.js';
import type { JsonSchema } from '../../src/api/schema.js';
import { normalizeKubeError } from '../../src/kube/errors.js';
import { writeStatus } from '../../src/kube/status.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';

const hub = testClient('hub');
const namespace = uniqueName('crds');
/** Cluster is cluster-scoped: its objects are named per run and deleted one by one. */
const clusterNames: string[] = [];
/** A CRD whose short name collides with GitSource's (plurals are lowercase letters and digits only). */
const conflicting = toCrd({
  ...gitSourceKind,
  kind: 'GitSourceCopy',
  plural: uniqueName('gscopies').replace('-', ''),
  singular: 'gitsourcecopy',
});

/** GET `path` on the hub and parse the JSON body: what `kubectl explain` and `kubectl get --raw` read. */
async function getRaw(path: string): Promise<unknown> {
  const server = hub.kubeConfig.getCurrentCluster()!.server;
  const opts: RequestOptions = {};
  await hub.kubeConfig.applyToHTTPSOptions(opts);
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, server), { ...opts, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(JSON.parse(body))
          : reject(new Error(`GET ${path}: ${res.statusCode} ${body}`)),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

/** What the tests create: a Sluice object with a name (and a namespace unless cluster-scoped). */
interface TestObject {
  apiVersion: string;
  kind: SluiceKind;
  metadata: { name: string; namespace?: string };
  spec: object;
  status?: object;
}

/** A Sluice object of `kind` with `spec`, named uniquely, in the test namespace unless cluster-scoped. */
function objectOf(kind: SluiceKind, spec: object, prefix = 'ok'): TestObject {
  const name = uniqueName(`${prefix}-${kind.toLowerCase()}`);
  const info = kindInfo(kind);
  if (!info.namespaced) clusterNames.push(name);
  return { apiVersion: API_VERSION, kind, metadata: info.namespaced ? { name, namespace } : { name }, spec };
}

// Smallest valid spec of each kind (what a user writes): the defaults are checked on these and
// the invalid cases start from them.
const minimal: { [K in SluiceKind]: object } = {
  GitSource: { url: 'https://git.example.com/team/app.git', ref: { branch: 'main' } },
  Cluster: { kubeconfigSecretRef: { namespace: 'sluice-system', name: 'member-1' } },
  PlacementRule: { clusterSelector: { matchLabels: { env: 'prod' } }, resourceHint: { type: 'cpu' } },
  Delivery: { sourceRef: { name: 'app' }, placementRef: { name: 'prod' } },
  CanaryRelease: {
    targetRef: { kind: 'Deployment', name: 'web' },
    service: { port: 80 },
    strategy: 'canary',
    trafficRouting: { provider: 'gatewayAPI', gatewayAPI: { httpRoute: { name: 'web' } } },
    steps: { weights: [5, 20, 50] },
    analysis: {
      provider: { type: 'prometheus', address: 'http://prometheus.monitoring:9090' },
      metrics: [{ name: 'error-rate', query: 'sum(rate(errors[1m]))', thresholdRange: { max: 0.01 } }],
    },
  },
  MetricTemplate: {
    provider: { type: 'prometheus', address: 'http://prometheus.monitoring:9090' },
    query: 'sum(rate(http_requests_total{job="{{ target }}"}[{{ interval }}]))',
  },
};

// Every field of every spec set, typed by the TypeScript types: the server must keep all of
// them (a field the schema lacks would be pruned silently), so types and schemas agree.
const full: { [K in SluiceKind]: object } = {
  GitSource: {
    url: 'https://git.example.com/team/app.git',
    ref: { semver: '>=1.2.0 <2.0.0' },
    interval: '30s',
    secretRef: { name: 'git-credentials' },
    timeout: '90s',
    suspend: true,
    webhook: { secretRef: { name: 'git-webhook' } },
  } satisfies Required<GitSourceSpec>,
  Cluster: { inCluster: true } satisfies ClusterSpec,
  PlacementRule: {
    clusterSelector: {
      matchLabels: { env: 'prod' },
      matchExpressions: [
        { key: 'region', operator: 'In', values: ['eu-west', 'eu-north'] },
        { key: 'deprecated', operator: 'DoesNotExist' },
      ],
    },
    clusters: [{ name: 'member-1' }, { name: 'member-2' }],
    clusterConditions: [{ type: 'Available', status: 'True' }],
    clusterReplicas: 2,
    resourceHint: { type: 'memory', order: 'Asc' },
  } satisfies Required<PlacementRuleSpec>,
  Delivery: {
    sourceRef: { name: 'app', kind: 'GitSource' },
    path: './deploy/prod',
    placementRef: { name: 'prod' },
    targetNamespace: 'shop',
    prune: false,
    interval: '10m',
    suspend: true,
    timeout: '2m',
  } satisfies Required<DeliverySpec>,
  CanaryRelease: {
    deliveryRef: { name: 'web' },
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    service: {
      port: 80,
      targetPort: 'http',
      name: 'web-svc',
      primarySuffix: '-stable',
      canarySuffix: '-next',
    },
    strategy: 'canary',
    trafficRouting: {
      provider: 'istio',
      istio: { virtualService: { name: 'web' }, destinationRule: { name: 'web' } },
    },
    steps: { stepWeight: 10, maxWeight: 50 },
    interval: '2m',
    analysis: {
      scoreThreshold: 0.9,
      failureLimit: 3,
      judge: 'threshold',
      confidence: 0.9,
      provider: { type: 'prometheus', address: 'http://prometheus.monitoring:9090', timeout: '5s' },
      metrics: [
        {
          name: 'error-rate',
          query: 'sum(rate(errors[1m]))',
          thresholdRange: { max: 0.01 },
          weight: 2,
          onNoData: 'hold',
          interval: '1m',
        },
        {
          name: 'latency',
          templateRef: { name: 'p99-latency' },
          thresholdRange: { min: 0, max: 0.5 },
          weight: 0.5,
          onNoData: 'fail',
        },
      ],
    },
    gates: [
      { name: 'approve', at: 'confirmPromotion', type: 'manual' },
      {
        name: 'load-test',
        at: 'confirmTrafficIncrease',
        type: 'webhook',
        webhook: { url: 'http://loadtest.tools/run', timeout: '30s', retries: 1 },
      },
    ],
    rollbackSLA: '5m',
    scaleDownDelay: '30s',
    skipAnalysis: false,
    gitWriteBack: { mode: 'revert' },
  } satisfies Required<CanaryReleaseSpec>,
  MetricTemplate: {
    provider: {
      type: 'prometheus',
      address: 'https://mimir.example.com/prometheus',
      secretRef: { name: 'mimir' },
      timeout: '10s',
    },
    query:
      'histogram_quantile(0.99, sum by (le) (rate(http_server_request_duration_seconds_bucket[{{ interval }}])))',
  } satisfies Required<MetricTemplateSpec>,
};

const now = '2026-01-02T03:04:05Z';
const ready = {
  type: 'Ready',
  status: 'True',
  reason: 'Succeeded',
  message: 'ok',
  lastTransitionTime: now,
  observedGeneration: 1,
} as const;

// A realistic status of each kind, every field set: written through the status subresource.
const statuses: { [K in SluiceKind]: object } = {
  GitSource: {
    artifact: {
      revision: 'main@sha1:4f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c',
      digest: 'sha256:abc',
      lastUpdateTime: now,
      url: 'http://sluice/a.tgz',
      path: '/var/lib/sluice/artifacts/abc',
    },
    lastHandledReconcileAt: now,
    observedGeneration: 1,
    conditions: [ready],
  } satisfies Required<GitSourceStatus>,
  Cluster: {
    version: 'v1.36.3',
    apiGroups: { count: 3, groupVersions: ['v1', 'apps/v1', 'sluice.dev/v1'] },
    allocatable: { cpu: '7500m', memory: '31Gi', pods: '330' },
    lastProbeTime: now,
    observedGeneration: 1,
    conditions: [{ ...ready, type: 'Available' }, ready],
  } satisfies Required<ClusterStatus>,
  PlacementRule: {
    decisions: [{ clusterName: 'member-1', reason: 'matched labels' }, { clusterName: 'member-2' }],
    observedGeneration: 1,
    conditions: [ready],
  } satisfies Required<PlacementRuleStatus>,
  Delivery: {
    clusters: [
      { name: 'member-1', revision: 'main@sha1:4f1c', phase: 'Healthy', objects: 7, message: 'all healthy' },
      { name: 'member-2', phase: 'Unreachable' },
    ],
    lastAppliedRevision: 'main@sha1:4f1c',
    history: [{ revision: 'main@sha1:4f1c', appliedAt: now }],
    lastHandledReconcileAt: now,
    observedGeneration: 1,
    conditions: [ready],
  } satisfies Required<DeliveryStatus>,
  CanaryRelease: {
    phase: 'Progressing',
    canaryWeight: 20,
    step: '2/5',
    failedChecks: 1,
    measurements: [
      { metric: 'error-rate', canaryWeight: 20, value: '0.002', outcome: 'Successful', measuredAt: now },
      {
        metric: 'latency',
        canaryWeight: 20,
        value: 'NaN',
        threshold: '<= 500',
        cluster: 'member-1',
        outcome: 'Error',
        measuredAt: now,
        message: 'query returned NaN',
      },
    ],
    revision: 'main@sha1:4f1c',
    lastPromotedRevision: 'main@sha1:0a0b',
    lastScore: 0.6,
    templateHash: 'c0ffee',
    lastPromotedTemplateHash: 'beef',
    pausedFrom: 'Progressing',
    phaseSince: now,
    stepSince: now,
    lastAnalysisAt: now,
    primaryRoutedAt: now,
    gate: { name: 'approve', since: now, attempts: 2, message: 'HTTP 503' },
    clusters: ['member-1', 'member-2'],
    transitions: [
      {
        at: now,
        phase: 'Progressing',
        canaryWeight: 20,
        step: '2/5',
        reason: 'StepAdvanced',
        message: 'score 1',
      },
    ],
    rollback: {
      at: now,
      step: '2/5',
      canaryWeight: 20,
      reason: 'AnalysisFailed',
      message: 'error-rate 0.2 > 0.01',
      metric: 'error-rate',
      value: '0.2',
      threshold: '<= 0.01',
      revision: 'main@sha1:4f1c',
      writeBack: {
        mode: 'revert',
        method: 'revert',
        commit: '4f1c',
        pullRequestURL: 'https://git.example/pr/1',
        pushedAt: now,
        error: 'none',
      },
    },
    rolledBackRevisions: ['main@sha1:4f1c'],
    acknowledgedRequests: { promote: now, abort: now, pause: now, resume: now, retry: now },
    observedGeneration: 1,
    conditions: [ready],
  } satisfies Required<CanaryReleaseStatus>,
  MetricTemplate: { observedGeneration: 1, conditions: [ready] } satisfies Required<MetricTemplateStatus>,
};

type Mutate = (spec: Record<string, any>) => void; // eslint-disable-line @typescript-eslint/no-explicit-any

// [kind, what is wrong, field path in the error, text in the error, mutation of the minimal spec]
const invalid: Array<[SluiceKind, string, string, string, Mutate]> = [
  [
    'GitSource',
    'two refs',
    'spec.ref',
    'ref must set exactly one of branch, tag, semver or commit',
    (s) => (s.ref.tag = 'v1.0.0'),
  ],
  [
    'GitSource',
    'an empty ref',
    'spec.ref',
    'ref must set exactly one of branch, tag, semver or commit',
    (s) => (s.ref = {}),
  ],
  ['GitSource', 'an interval in words', 'spec.interval', 'should match', (s) => (s.interval = '5 minutes')],
  ['GitSource', 'a zero interval', 'spec.interval', 'must be greater than zero', (s) => (s.interval = '0s')],
  ['GitSource', 'an SSH URL', 'spec.url', 'should match', (s) => (s.url = 'git@github.com:team/app.git')],
  ['GitSource', 'a short commit', 'spec.ref.commit', 'should match', (s) => (s.ref = { commit: 'abc123' })],
  [
    'Cluster',
    'both credentials',
    'spec',
    'exactly one of kubeconfigSecretRef or inCluster: true',
    (s) => (s.inCluster = true),
  ],
  [
    'Cluster',
    'inCluster: false alone',
    'spec',
    'exactly one of kubeconfigSecretRef or inCluster: true',
    (s) => (delete s.kubeconfigSecretRef, (s.inCluster = false)),
  ],
  [
    'Cluster',
    'a Secret without namespace',
    'spec.kubeconfigSecretRef.namespace',
    'Required value',
    (s) => delete s.kubeconfigSecretRef.namespace,
  ],
  [
    'PlacementRule',
    'an unknown operator',
    'spec.clusterSelector.matchExpressions[0].operator',
    'Unsupported value: "Contains"',
    (s) => (s.clusterSelector.matchExpressions = [{ key: 'env', operator: 'Contains', values: ['p'] }]),
  ],
  [
    'PlacementRule',
    'In without values',
    'spec.clusterSelector.matchExpressions[0].values',
    'values must be non-empty for In and NotIn',
    (s) => (s.clusterSelector.matchExpressions = [{ key: 'env', operator: 'In' }]),
  ],
  [
    'PlacementRule',
    'negative clusterReplicas',
    'spec.clusterReplicas',
    'greater than or equal to 0',
    (s) => (s.clusterReplicas = -1),
  ],
  [
    'PlacementRule',
    'an unknown resource hint',
    'spec.resourceHint.type',
    'Unsupported value: "gpu"',
    (s) => (s.resourceHint.type = 'gpu'),
  ],
  [
    'PlacementRule',
    'a cluster named twice',
    'spec.clusters[1]',
    'Duplicate value',
    (s) => (s.clusters = [{ name: 'a' }, { name: 'a' }]),
  ],
  [
    'Delivery',
    'an unknown source kind',
    'spec.sourceRef.kind',
    'Unsupported value: "Bucket"',
    (s) => (s.sourceRef.kind = 'Bucket'),
  ],
  [
    'Delivery',
    'a path leaving the source',
    'spec.path',
    "must not contain '..'",
    (s) => (s.path = 'deploy/../../etc'),
  ],
  ['Delivery', 'no placementRef', 'spec.placementRef', 'Required value', (s) => delete s.placementRef],
  [
    'Delivery',
    'a target namespace that is not a DNS label',
    'spec.targetNamespace',
    'should match',
    (s) => (s.targetNamespace = 'Team_A'),
  ],
  [
    'CanaryRelease',
    'a weight over 100',
    'spec.steps.weights[1]',
    'less than or equal to 100',
    (s) => (s.steps.weights = [5, 150]),
  ],
  [
    'CanaryRelease',
    'decreasing weights',
    'spec.steps.weights',
    'weights must be strictly increasing',
    (s) => (s.steps.weights = [50, 20]),
  ],
  [
    'CanaryRelease',
    'a repeated weight',
    'spec.steps.weights[1]',
    'Duplicate value: 20',
    (s) => (s.steps.weights = [20, 20]),
  ],
  [
    'CanaryRelease',
    'only a zero weight',
    'spec.steps.weights',
    'at least one weight must be greater than 0',
    (s) => (s.steps.weights = [0]),
  ],
  [
    'CanaryRelease',
    'weights and stepWeight',
    'spec.steps',
    'either weights or stepWeight',
    (s) => Object.assign(s.steps, { stepWeight: 10, maxWeight: 50 }),
  ],
  [
    'CanaryRelease',
    'stepWeight without maxWeight',
    'spec.steps.maxWeight',
    'stepWeight and maxWeight must be set together',
    (s) => (s.steps = { stepWeight: 10 }),
  ],
  [
    'CanaryRelease',
    'an unknown provider',
    'spec.trafficRouting.provider',
    'Unsupported value: "linkerd"',
    (s) => (s.trafficRouting = { provider: 'linkerd' }),
  ],
  [
    'CanaryRelease',
    'a provider without its refs',
    'spec.trafficRouting.gatewayAPI',
    'gatewayAPI must be set when, and only when, provider is gatewayAPI',
    (s) => delete s.trafficRouting.gatewayAPI,
  ],
  [
    'CanaryRelease',
    "another provider's refs",
    'spec.trafficRouting.istio',
    'istio must be set when, and only when, provider is istio',
    (s) => (s.trafficRouting.istio = { virtualService: { name: 'web' } }),
  ],
  ['CanaryRelease', 'no strategy', 'spec.strategy', 'Required value', (s) => delete s.strategy],
  [
    'CanaryRelease',
    'a scaleDownDelay in words',
    'spec.scaleDownDelay',
    'should match',
    (s) => (s.scaleDownDelay = 'half a minute'),
  ],
  [
    'CanaryRelease',
    'an unknown strategy',
    'spec.strategy',
    'Unsupported value: "rolling"',
    (s) => (s.strategy = 'rolling'),
  ],
  [
    'CanaryRelease',
    'canary without steps',
    'spec.steps',
    'strategy canary needs steps',
    (s) => delete s.steps,
  ],
  [
    'CanaryRelease',
    'blueGreen with steps',
    'spec.steps',
    'blueGreen switches all traffic at once',
    (s) => (s.strategy = 'blueGreen'),
  ],
  [
    'CanaryRelease',
    'a score threshold over 1',
    'spec.analysis.scoreThreshold',
    'less than or equal to 1',
    (s) => (s.analysis.scoreThreshold = 1.5),
  ],
  [
    'CanaryRelease',
    'a metric with no query',
    'spec.analysis.metrics[0]',
    'exactly one of query, templateRef or builtin',
    (s) => delete s.analysis.metrics[0].query,
  ],
  [
    'CanaryRelease',
    'metric weights all 0',
    'spec.analysis.metrics',
    'at least one metric must have a weight greater than 0',
    (s) => (s.analysis.metrics[0].weight = 0),
  ],
  [
    'CanaryRelease',
    'an unknown onNoData',
    'spec.analysis.metrics[0].onNoData',
    'Unsupported value: "ignore"',
    (s) => (s.analysis.metrics[0].onNoData = 'ignore'),
  ],
  [
    'CanaryRelease',
    'an empty threshold range',
    'spec.analysis.metrics[0].thresholdRange',
    'thresholdRange must set min, max or both',
    (s) => (s.analysis.metrics[0].thresholdRange = {}),
  ],
  [
    'CanaryRelease',
    'min above max',
    'spec.analysis.metrics[0].thresholdRange.min',
    'min must not exceed max',
    (s) => (s.analysis.metrics[0].thresholdRange = { min: 2, max: 1 }),
  ],
  [
    'CanaryRelease',
    'no metrics without skipAnalysis',
    'spec.analysis.metrics',
    'needs at least one metric unless skipAnalysis is true',
    (s) => (s.analysis = {}),
  ],
  [
    'CanaryRelease',
    'a webhook gate without webhook',
    'spec.gates[0].webhook',
    'webhook must be set when, and only when, type is webhook',
    (s) => (s.gates = [{ name: 'g', at: 'confirmTrafficIncrease', type: 'webhook' }]),
  ],
  [
    'CanaryRelease',
    'an unknown write-back mode',
    'spec.gitWriteBack.mode',
    'Unsupported value: "push"',
    (s) => (s.gitWriteBack = { mode: 'push' }),
  ],
  [
    'CanaryRelease',
    'a revert write-back without a Delivery to find the repository',
    'spec.gitWriteBack.mode',
    'gitWriteBack needs deliveryRef',
    (s) => (s.gitWriteBack = { mode: 'revert' }),
  ],
  [
    'CanaryRelease',
    'a pull-request write-back without its API target',
    'spec.gitWriteBack.pullRequest',
    'pullRequest must be set when, and only when, mode is pullRequest',
    (s) => ((s.deliveryRef = { name: 'web' }), (s.gitWriteBack = { mode: 'pullRequest' })),
  ],
  [
    'CanaryRelease',
    'a metric without thresholdRange under the threshold judge',
    'spec.analysis.metrics',
    'every metric needs a thresholdRange with the threshold judge',
    (s) => delete s.analysis.metrics[0].thresholdRange,
  ],
  [
    'CanaryRelease',
    'an inline query without a provider',
    'spec.analysis.provider',
    'provider is required when a metric uses query or builtin',
    (s) => delete s.analysis.provider,
  ],
  [
    'CanaryRelease',
    'a quantile on a metric that is not builtin requestDuration',
    'spec.analysis.metrics[0].quantile',
    'quantile is only for builtin requestDuration',
    (s) => (s.analysis.metrics[0].quantile = 0.99),
  ],
  [
    'CanaryRelease',
    'a manual rollback gate',
    'spec.gates[0].type',
    'a rollback gate must be a webhook',
    (s) => (s.gates = [{ name: 'g', at: 'rollback', type: 'manual' }]),
  ],
  [
    'MetricTemplate',
    'an unknown provider type',
    'spec.provider.type',
    'Unsupported value: "datadog"',
    (s) => (s.provider.type = 'datadog'),
  ],
  ['MetricTemplate', 'no query', 'spec.query', 'Required value', (s) => delete s.query],
  [
    'MetricTemplate',
    'an address without scheme',
    'spec.provider.address',
    'should match',
    (s) => (s.provider.address = 'prometheus:9090'),
  ],
];

/** Every description-less property in a served schema, as dotted paths. */
function undescribed(node: JsonSchema, path: string): string[] {
  return Object.entries(node.properties ?? {}).flatMap(([name, child]) => [
    ...(child.description || (path === '' && name === 'metadata') ? [] : [`${path}.${name}`]),
    ...undescribed(child, `${path}.${name}`),
    ...(child.items ? undescribed(child.items, `${path}.${name}[]`) : []),
  ]);
}

beforeAll(async () => {
  await installCrds(hub);
  await hub.core.createNamespace({ body: { metadata: { name: namespace } } });
});

afterAll(async () => {
  const { group, version, plural } = kindInfo('Cluster');
  await Promise.all(
    clusterNames.map((name) =>
      hub.custom.deleteClusterCustomObject({ group, version, plural, name }).catch(() => undefined),
    ),
  );
  await hub.core.deleteNamespace({ name: namespace }).catch(() => undefined);
  await hub.apiextensions
    .deleteCustomResourceDefinition({ name: conflicting.metadata.name })
    .catch(() => undefined);
});

describe('installCrds on a real apiserver', () => {
  it('GIVEN the hub WHEN installCrds runs (again: it is an upgrade too) THEN all six CRDs are Established', async () => {
    const names = await installCrds(hub);
    expect(names).toEqual(allCrds().map((c) => c.metadata.name));
    for (const name of names) {
      const crd = await hub.apiextensions.readCustomResourceDefinition({ name });
      expect(crd.status?.conditions?.find((c) => c.type === 'Established')?.status).toBe('True');
    }
  });

  it.each(allCrds().map((crd) => [crd.metadata.name, crd] as const))(
    'GIVEN %s installed THEN the server stores exactly the generated schema (defaults and rules not dropped on the way)',
    async (name, crd) => {
      const served = (await getRaw(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      )) as typeof crd;
      expect(served.spec.versions).toEqual(crd.spec.versions);
      expect(served.spec.names).toEqual(crd.spec.names);
    },
  );

  it('GIVEN the CRDs THEN their OpenAPI v3 (what kubectl explain reads) describes every field, with defaults', async () => {
    const doc = await eventually(async () => {
      const d = (await getRaw(`/openapi/v3/apis/sluice.dev/v1`)) as {
        components: { schemas: Record<string, JsonSchema> };
      };
      return d.components.schemas['dev.sluice.v1.MetricTemplate'] && d;
    });
    for (const { spec } of allCrds()) {
      const schema = doc.components.schemas[`dev.sluice.v1.${spec.names.kind}`];
      expect(schema?.description).toBeTruthy();
      expect(undescribed(schema!, spec.names.kind).filter((p) => !p.includes('.metadata.'))).toEqual([]);
    }
    const analysis =
      doc.components.schemas['dev.sluice.v1.CanaryRelease']!.properties!.spec!.properties!.analysis!;
    expect(analysis.properties!.scoreThreshold).toMatchObject({
      default: 0.95,
      description: expect.stringContaining('score'),
    });
  });
});

describe('installCrds with a CRD the apiserver cannot serve', () => {
  it('GIVEN a short name another CRD holds WHEN installed THEN it fails with a CrdInstallError naming the CRD and why', async () => {
    const err = await installCrds(hub, { crds: [conflicting] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrdInstallError);
    expect((err as CrdInstallError).message).toContain(
      `CRD ${conflicting.metadata.name}: names not accepted`,
    );
    expect((err as CrdInstallError).message).toContain('"gs" is already in use');
    expect((err as CrdInstallError).pending).toEqual([
      { name: conflicting.metadata.name, condition: expect.stringContaining('NamesAccepted=False') },
    ]);
  });
});

describe('validation by the real apiserver', () => {
  it.each(invalid)('rejects a %s with %s at %s (%s)', async (kind, _what, path, text, mutate) => {
    const spec = structuredClone(minimal[kind]) as Record<string, unknown>;
    mutate(spec);
    const obj = objectOf(kind, spec, 'bad');
    const err = await hub.objects.create(obj).then(
      () => undefined,
      (e: unknown) => normalizeKubeError(e),
    );
    expect(err).toBeDefined();
    expect(err!.reason).toBe('Invalid');
    expect(err!.message).toContain(`${path}: `);
    expect(err!.message).toContain(text);
    // Nothing half-created.
    const read = await hub.objects.read(obj).catch((e: unknown) => normalizeKubeError(e));
    expect(read).toMatchObject({ reason: 'NotFound' });
  });

  it.each([
    ['GitSource', { interval: '1m', suspend: false }],
    ['Cluster', { kubeconfigSecretRef: { key: 'kubeconfig' } }],
    ['PlacementRule', { resourceHint: { type: 'cpu', order: 'Desc' } }],
    [
      'Delivery',
      { sourceRef: { kind: 'GitSource' }, path: './', prune: true, interval: '5m', suspend: false },
    ],
    [
      'CanaryRelease',
      {
        targetRef: { apiVersion: 'apps/v1' },
        service: { primarySuffix: '-primary', canarySuffix: '-canary' },
        interval: '1m',
        skipAnalysis: false,
        gitWriteBack: { mode: 'none' },
        analysis: {
          scoreThreshold: 0.95,
          failureLimit: 2,
          judge: 'threshold',
          confidence: 0.95,
          provider: { timeout: '30s' },
          metrics: [{ weight: 1, onNoData: 'fail' }],
        },
      },
    ],
    ['MetricTemplate', { provider: { timeout: '30s' } }],
  ] as const)('accepts a minimal %s and applies the defaults %j', async (kind, defaults) => {
    const created = (await hub.objects.create(objectOf(kind, structuredClone(minimal[kind])))) as {
      spec: object;
    };
    expect(created.spec).toMatchObject(minimal[kind]);
    expect(created.spec).toMatchObject(defaults);
  });

  it.each(Object.entries(full) as Array<[SluiceKind, object]>)(
    'accepts a %s with every spec and status field set, and keeps every field (nothing pruned)',
    async (kind, spec) => {
      const obj = objectOf(kind, spec, 'full');
      const created = (await hub.objects.create(obj)) as { spec: object };
      expect(created.spec).toMatchObject(spec);

      const info = kindInfo(kind);
      const ref = {
        apiVersion: API_VERSION,
        plural: info.plural,
        namespace: obj.metadata.namespace,
        name: obj.metadata.name,
      };
      expect(await writeStatus(hub, ref, statuses[kind])).toBe(true);
      const read = (await hub.objects.read(obj)) as { status?: object };
      expect(read.status).toEqual(statuses[kind]);
    },
  );

  it('GIVEN the status subresource THEN a status sent with create is ignored and an invalid status is rejected at its path', async () => {
    const obj = { ...objectOf('CanaryRelease', minimal.CanaryRelease), status: { phase: 'Succeeded' } };
    const created = (await hub.objects.create(obj)) as CanaryRelease;
    expect(created.status).toBeUndefined();

    const ref = { apiVersion: API_VERSION, plural: 'canaryreleases', namespace, name: obj.metadata.name };
    const err = await writeStatus(hub, ref, { phase: 'Exploded', canaryWeight: 20 }).catch((e: unknown) =>
      normalizeKubeError(e),
    );
    expect(err).toMatchObject({
      reason: 'Invalid',
      message: expect.stringContaining('status.phase: Unsupported value: "Exploded"'),
    });
  });
});
