/**
 * Seeded random CanaryReleases for the conversion round-trip tests: every v1 field appears
 * (present, absent, and in each of its shapes), so that what v1alpha1 cannot say is exercised.
 * Deterministic per seed, so a failure names an index that reproduces.
 */
import {
  BUILTIN_METRICS,
  CANARY_PHASES,
  GATE_POINTS,
  TRAFFIC_PROVIDERS,
} from '../../src/api/canary-release.js';
import type { JsonObject } from '../../src/webhooks/conversion.js';

/** A small seeded PRNG (mulberry32) with the helpers the generators need. */
export interface Rng {
  next(): number;
  int(min: number, max: number): number;
  float(): number;
  bool(p?: number): boolean;
  pick<T>(xs: readonly T[]): T;
}

export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const r: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    // Decimals of every kind (0.995, 800, 1e-7): JSON must carry each exactly.
    float: () =>
      [() => Math.round(next() * 1000) / 1000, () => r.int(0, 5000), () => next() * 1e-6, next][
        r.int(0, 3)
      ]!(),
    bool: (p = 0.5) => next() < p,
    pick: (xs) => xs[Math.floor(next() * xs.length)]!,
  };
  return r;
}

const FLOOR = ['success', 'availability', 'uptime', 'apdex', 'hit'];
const CEILING = ['latency', 'p95', 'p99', 'error', 'errors', 'duration', '5xx', 'ms'];
const NEUTRAL = ['http', 'orders', 'checkout', 'business', 'rate', 'ratio', 'api', 'db'];

function word(r: Rng): string {
  return r.pick([...FLOOR, ...CEILING, ...NEUTRAL]);
}

/** A metric name of 1–4 words joined by `sep`, unique in `used`. */
function metricName(r: Rng, sep: string, used: Set<string>): string {
  for (;;) {
    const n =
      Array.from({ length: r.int(1, 4) }, () => word(r)).join(sep) +
      (r.bool(0.3) ? `${sep}${r.int(1, 9)}` : '');
    const key = n.replaceAll('_', '-');
    if (!used.has(key)) {
      used.add(key);
      return n;
    }
  }
}

function maybe<T>(r: Rng, v: () => T, p = 0.5): T | undefined {
  return r.bool(p) ? v() : undefined;
}

/** `o` without undefined values (generated objects are JSON: absent, never undefined). */
function c(o: Record<string, unknown>): JsonObject {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function randomMetric(r: Rng, used: Set<string>): JsonObject {
  const name = metricName(r, '-', used);
  const source = r.int(0, 5);
  const range = r.pick([
    () => ({ min: r.float() }),
    () => ({ max: r.float() }),
    () => {
      const a = r.float();
      return { min: a, max: a + r.int(0, 100) };
    },
  ])();
  return c({
    name,
    query: source <= 3 ? `sum(rate(${name.replaceAll('-', '_')}_total[{{ interval }}]))` : undefined,
    templateRef: source === 4 ? { name: `tpl-${r.int(0, 9)}` } : undefined,
    builtin: source === 5 ? r.pick(BUILTIN_METRICS) : undefined,
    quantile: source === 5 && r.bool() ? r.pick([0.5, 0.95, 0.99]) : undefined,
    thresholdRange: r.bool(0.9) ? range : undefined,
    comparison: maybe(
      r,
      () =>
        c({
          direction: r.pick(['increase', 'decrease', 'either']),
          allowedIncrease: maybe(r, () => r.int(0, 50)),
          allowedDecrease: maybe(r, () => r.int(0, 50)),
          critical: r.bool(),
          nanStrategy: r.pick(['remove', 'replace']),
        }),
      0.2,
    ),
    weight: r.bool(0.9) ? r.pick([0, 1, 0.4, 0.6, r.float()]) : undefined,
    onNoData: r.bool(0.8) ? r.pick(['fail', 'hold']) : undefined,
    interval: maybe(r, () => r.pick(['1m', '30s', '5m'])),
  });
}

function randomStatus(r: Rng): JsonObject | undefined {
  if (r.bool(0.4)) return undefined;
  const at = '2026-11-30T12:00:00Z';
  return c({
    phase: r.pick(CANARY_PHASES),
    canaryWeight: r.int(0, 100),
    step: `${r.int(0, 5)}/5`,
    failedChecks: r.int(0, 3),
    lastScore: r.float() % 1,
    observedGeneration: r.int(1, 9),
    measurements: maybe(r, () => [
      c({
        metric: 'p95-latency',
        canaryWeight: 10,
        value: r.pick(['NaN', '+Inf', '812.5']),
        threshold: '<= 800',
        outcome: 'Failed',
        measuredAt: at,
      }),
    ]),
    transitions: maybe(r, () => [
      { at, phase: 'Progressing', canaryWeight: 5, reason: 'StepAdvanced', message: 'm' },
    ]),
    conditions: maybe(r, () => [
      {
        type: 'Ready',
        status: 'False',
        reason: 'Progressing',
        message: 'x',
        lastTransitionTime: at,
        observedGeneration: 2,
      },
    ]),
    rolledBackRevisions: maybe(r, () => ['main@sha1:abc']),
    acknowledgedRequests: maybe(r, () => ({ promote: at })),
  });
}

/** A random v1 CanaryRelease as the apiserver could hold it (defaults sometimes written, sometimes not). */
export function randomV1(r: Rng, i: number): JsonObject {
  const strategy = r.bool(0.8) ? 'canary' : 'blueGreen';
  const provider = r.pick(TRAFFIC_PROVIDERS);
  const routing: JsonObject = { provider };
  if (provider === 'gatewayAPI') routing.gatewayAPI = { httpRoute: { name: 'route' } };
  if (provider === 'istio')
    routing.istio = c({ virtualService: { name: 'vs' }, destinationRule: maybe(r, () => ({ name: 'dr' })) });
  if (provider === 'nginx') routing.nginx = { ingress: { name: 'ing' } };
  if (provider === 'smi' && r.bool()) routing.smi = { trafficSplit: { name: 'ts' } };
  let steps: JsonObject | undefined;
  if (strategy === 'canary') {
    if (r.bool(0.4)) {
      steps = { weights: [r.int(1, 100)] };
    } else if (r.bool()) {
      const ws = new Set<number>();
      const n = r.int(2, 6);
      while (ws.size < n) ws.add(r.int(1, 100));
      steps = { weights: [...ws].sort((a, b) => a - b) };
    } else {
      const step = r.int(1, 50);
      steps = { stepWeight: step, maxWeight: r.int(step, 100) };
    }
  }
  const used = new Set<string>();
  const metrics = Array.from({ length: r.int(0, 5) }, () => randomMetric(r, used));
  const mode = r.pick(['revert', 'pullRequest', 'none']);
  const name = `rel-${i}`;
  const targetName = r.bool(0.7) ? name : `app-${i}`;
  const spec = c({
    deliveryRef: maybe(r, () => ({ name: 'delivery' })),
    targetRef: c({ apiVersion: r.bool(0.8) ? 'apps/v1' : undefined, kind: 'Deployment', name: targetName }),
    service: c({
      port: r.int(1, 65535),
      targetPort: maybe(r, () => (r.bool() ? r.int(1, 65535) : 'http')),
      name: maybe(r, () => (r.bool() ? targetName : `svc-${i}`), 0.6),
      primarySuffix: r.bool(0.8) ? r.pick(['-primary', '-stable']) : undefined,
      canarySuffix: r.bool(0.8) ? r.pick(['-canary', '-next']) : undefined,
    }),
    strategy,
    trafficRouting: routing,
    steps,
    interval: r.bool(0.8) ? r.pick(['1m', '30s', '2m']) : undefined,
    analysis: c({
      scoreThreshold: maybe(r, () => r.pick([0.95, 0.9, 1]), 0.8),
      failureLimit: maybe(r, () => r.int(0, 5), 0.8),
      judge: maybe(r, () => r.pick(['threshold', 'mannWhitney']), 0.8),
      confidence: maybe(r, () => r.pick([0.95, 0.99]), 0.8),
      provider: maybe(
        r,
        () =>
          c({
            type: 'prometheus',
            address: 'http://prometheus.monitoring:9090',
            secretRef: maybe(r, () => ({ name: 'prom-creds' })),
            timeout: maybe(r, () => '30s', 0.7),
          }),
        0.9,
      ),
      metrics: metrics.length > 0 || r.bool() ? metrics : undefined,
    }),
    gates: maybe(r, () =>
      GATE_POINTS.filter(() => r.bool()).map((at, k) =>
        at === 'rollback' || r.bool()
          ? {
              name: `g${k}`,
              at,
              type: 'webhook',
              webhook: c({
                url: 'https://gate.example/hook',
                timeout: '10s',
                retries: maybe(r, () => r.int(0, 10)),
              }),
            }
          : { name: `g${k}`, at, type: 'manual' },
      ),
    ),
    rollbackSLA: maybe(r, () => '5m'),
    scaleDownDelay: maybe(r, () => r.pick(['0s', '10s', '2m'])),
    skipAnalysis: maybe(r, () => r.bool(0.1), 0.8),
    gitWriteBack: c({
      mode,
      pullRequest:
        mode === 'pullRequest'
          ? c({
              provider: r.pick(['github', 'gitlab']),
              apiURL: 'https://api.github.com',
              repository: 'team/app',
              secretRef: { name: 'gh' },
              baseBranch: maybe(r, () => 'main'),
            })
          : undefined,
    }),
  });
  const annotations = c({
    'sluice.dev/promote': maybe(r, () => '2026-11-30T10:00:00Z', 0.2),
    'kubectl.kubernetes.io/last-applied-configuration': maybe(r, () => '{"x":1}', 0.2),
  }) as Record<string, string>;
  return c({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: c({
      name,
      namespace: 'ns',
      uid: `uid-${i}`,
      resourceVersion: String(i + 1),
      generation: r.int(1, 9),
      labels: maybe(r, () => ({ app: 'web' })),
      annotations: Object.keys(annotations).length > 0 ? annotations : undefined,
    }),
    spec,
    status: randomStatus(r),
  });
}

/** A random valid v1alpha1 CanaryRelease: names with _ and -, thresholds on names that decide a direction. */
export function randomAlpha(r: Rng, i: number): JsonObject {
  const used = new Set<string>();
  const metrics = Array.from({ length: r.int(1, 6) }, () => {
    let name: string;
    do {
      name = metricName(r, r.pick(['_', '-']), used);
    } while (!decides(name));
    return c({
      name,
      query: `sum(rate(${name.replaceAll('-', '_')}[5m]))`,
      threshold: r.float(),
      weight: r.bool(0.8) ? r.pick([0, 0.4, 0.6, 1, r.float()]) : undefined,
    });
  });
  const canary = r.int(1, 100);
  return c({
    apiVersion: 'sluice.dev/v1alpha1',
    kind: 'CanaryRelease',
    metadata: c({
      name: `alpha-${i}`,
      namespace: 'ns',
      annotations: maybe(r, () => ({ 'team.example/owner': 'payments' }), 0.3),
    }),
    spec: {
      targetService: { name: r.bool() ? `svc-${i}` : 'payment-service', port: r.int(1, 65535) },
      trafficSplit: { baseline: 100 - canary, canary },
      metrics,
    },
    status: randomStatus(r),
  });
}

/** Whether the threshold rule decides `name` (one kind of word, not both). */
function decides(name: string): boolean {
  const words = name.split(/[-_]/);
  const f = words.some((w) => FLOOR.includes(w));
  const cl = words.some((w) => CEILING.includes(w));
  return f !== cl;
}
