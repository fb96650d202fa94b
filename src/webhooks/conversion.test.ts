import {
  API_V1,
  API_V1ALPHA1,
  canaryReleaseToV1,
  canaryReleaseToV1alpha1,
  ConversionError,
  convertCanaryRelease,
  METRIC_NAMES_ANNOTATION,
  V1_SPEC_ANNOTATION,
  type JsonObject,
} from './conversion.js';
import { thresholdDirection } from '../api/canary-release-v1alpha1.js';
import { randomAlpha, randomV1, rng, type Rng } from '../../test/support/canary-release-generator.js';

/** The example release engineers already use (examples/api-migration/canary-release-v1alpha1.yaml). */
const paymentAlpha: JsonObject = {
  apiVersion: API_V1ALPHA1,
  kind: 'CanaryRelease',
  metadata: { name: 'payment-service-v2', namespace: 'shop' },
  spec: {
    targetService: { name: 'payment-service', port: 8080 },
    trafficSplit: { baseline: 90, canary: 10 },
    metrics: [
      {
        name: 'business_order_success_rate',
        query: 'sum(rate(orders_total{status="ok"}[5m])) / sum(rate(orders_total[5m]))',
        threshold: 0.995,
        weight: 0.6,
      },
      {
        name: 'p95_latency_ms',
        query:
          'histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket[5m]))) * 1000',
        threshold: 800,
        weight: 0.4,
      },
    ],
  },
};

function withoutConversionAnnotations(obj: JsonObject): JsonObject {
  const copy = structuredClone(obj);
  const meta = copy.metadata as { annotations?: Record<string, string> };
  if (meta.annotations) {
    delete meta.annotations[V1_SPEC_ANNOTATION];
    delete meta.annotations[METRIC_NAMES_ANNOTATION];
    if (Object.keys(meta.annotations).length === 0) delete meta.annotations;
  }
  return copy;
}

describe('thresholdDirection', () => {
  it.each([
    ['business_order_success_rate', 'floor'],
    ['p95_latency_ms', 'ceiling'],
    ['availability', 'floor'],
    ['http-5xx-ratio', 'ceiling'],
    ['error_rate', 'ceiling'],
    ['cache_hit_ratio', 'floor'],
    ['request_duration_p99', 'ceiling'],
    ['checkout', undefined],
    ['orders_per_minute', undefined],
    ['success_latency', undefined],
  ])('GIVEN metric name %s WHEN its direction is decided THEN it is %s', (name, want) => {
    expect(thresholdDirection(name)).toBe(want);
  });
});

describe('CanaryRelease conversion', () => {
  it('GIVEN the payment-service-v2 example WHEN converted to v1 THEN success rate is a floor, p95 latency a ceiling, the split one step', () => {
    const v1 = canaryReleaseToV1(paymentAlpha) as { spec: JsonObject; metadata: JsonObject };
    expect(v1.spec).toEqual({
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'payment-service' },
      service: { name: 'payment-service', port: 8080 },
      strategy: 'canary',
      trafficRouting: { provider: 'replicas' },
      steps: { weights: [10] },
      analysis: {
        provider: { type: 'prometheus', address: 'http://prometheus.monitoring:9090' },
        metrics: [
          {
            name: 'business-order-success-rate',
            query: 'sum(rate(orders_total{status="ok"}[5m])) / sum(rate(orders_total[5m]))',
            thresholdRange: { min: 0.995 },
            weight: 0.6,
          },
          {
            name: 'p95-latency-ms',
            query:
              'histogram_quantile(0.95, sum by (le) (rate(http_request_duration_seconds_bucket[5m]))) * 1000',
            thresholdRange: { max: 800 },
            weight: 0.4,
          },
        ],
      },
    });
    expect(JSON.parse((v1.metadata.annotations as Record<string, string>)[METRIC_NAMES_ANNOTATION]!)).toEqual(
      {
        'business-order-success-rate': 'business_order_success_rate',
        'p95-latency-ms': 'p95_latency_ms',
      },
    );
    const back = canaryReleaseToV1alpha1(v1);
    expect(withoutConversionAnnotations(back)).toEqual(paymentAlpha);
  });

  it('GIVEN a metric whose name says neither floor nor ceiling WHEN converted to v1 THEN it is refused with the field path', () => {
    const bad = structuredClone(paymentAlpha) as { spec: { metrics: Array<{ name: string }> } };
    bad.spec.metrics[1]!.name = 'checkout';
    expect(() => canaryReleaseToV1(bad as unknown as JsonObject)).toThrow(ConversionError);
    expect(() => canaryReleaseToV1(bad as unknown as JsonObject)).toThrow(
      /^spec\.metrics\[1\]\.threshold: .*thresholdRange/,
    );
  });

  it('GIVEN two v1alpha1 names that are one v1 name WHEN converted THEN the second is named in the error', () => {
    const bad = structuredClone(paymentAlpha) as { spec: { metrics: Array<{ name: string }> } };
    bad.spec.metrics[1]!.name = 'business-order-success-rate';
    expect(() => canaryReleaseToV1(bad as unknown as JsonObject)).toThrow(/^spec\.metrics\[1\]\.name:/);
  });

  it('GIVEN a split that does not add up to 100 WHEN converted THEN it is refused', () => {
    const bad = structuredClone(paymentAlpha) as { spec: { trafficSplit: object } };
    bad.spec.trafficSplit = { baseline: 80, canary: 10 };
    expect(() => canaryReleaseToV1(bad as unknown as JsonObject)).toThrow(
      /^spec\.trafficSplit: baseline \+ canary must be 100/,
    );
  });

  it('GIVEN a broken v1-spec annotation WHEN converted THEN the error names the annotation', () => {
    const bad = structuredClone(paymentAlpha);
    (bad.metadata as JsonObject).annotations = { [V1_SPEC_ANNOTATION]: '{not json' };
    expect(() => canaryReleaseToV1(bad)).toThrow(/metadata\.annotations\[sluice\.dev\/v1-spec\]: not JSON/);
  });

  it('GIVEN the same version WHEN converted THEN the object is returned unchanged; an unknown version is refused', () => {
    expect(convertCanaryRelease(paymentAlpha, API_V1ALPHA1)).toBe(paymentAlpha);
    expect(() => convertCanaryRelease(paymentAlpha, 'sluice.dev/v2')).toThrow(/^apiVersion: cannot convert/);
  });

  it('GIVEN a v1 release with a templateRef metric and blueGreen WHEN converted to v1alpha1 THEN the metric is hidden, the split is 0/100, and both come back', () => {
    const v1: JsonObject = {
      apiVersion: API_V1,
      kind: 'CanaryRelease',
      metadata: { name: 'web', namespace: 'x' },
      spec: {
        targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        service: { port: 80, primarySuffix: '-primary', canarySuffix: '-canary' },
        strategy: 'blueGreen',
        trafficRouting: { provider: 'gatewayAPI', gatewayAPI: { httpRoute: { name: 'web' } } },
        analysis: {
          provider: { type: 'prometheus', address: 'http://p:9090' },
          metrics: [
            { name: 'errors', templateRef: { name: 't' }, thresholdRange: { max: 1 }, weight: 1 },
            { name: 'success-rate', query: 'up', thresholdRange: { min: 0.9 }, weight: 2, onNoData: 'hold' },
          ],
        },
      },
      status: { phase: 'Progressing', canaryWeight: 20 },
    };
    const alpha = canaryReleaseToV1alpha1(v1) as { spec: JsonObject; status: unknown };
    expect(alpha.spec).toEqual({
      targetService: { name: 'web', port: 80 },
      trafficSplit: { baseline: 0, canary: 100 },
      metrics: [{ name: 'success-rate', query: 'up', threshold: 0.9, weight: 2 }],
    });
    expect(alpha.status).toEqual(v1.status);
    expect(canaryReleaseToV1(alpha as unknown as JsonObject)).toEqual(v1);
  });

  it('GIVEN a v1alpha1 read of a v1 release WHEN its threshold and split are edited THEN v1 takes the edits and keeps the rest', () => {
    const v1 = canaryReleaseToV1(paymentAlpha) as { spec: JsonObject };
    (v1.spec.analysis as { metrics: Array<{ onNoData?: string }> }).metrics[0]!.onNoData = 'hold';
    v1.spec.trafficRouting = { provider: 'istio', istio: { virtualService: { name: 'pay' } } };
    const alpha = canaryReleaseToV1alpha1(v1 as unknown as JsonObject) as {
      spec: { trafficSplit: object; metrics: Array<{ threshold: number }> };
    };
    alpha.spec.trafficSplit = { baseline: 75, canary: 25 };
    alpha.spec.metrics[0]!.threshold = 0.99;
    const edited = canaryReleaseToV1(alpha as unknown as JsonObject) as {
      spec: { steps: object; trafficRouting: object; analysis: { metrics: JsonObject[] } };
    };
    expect(edited.spec.steps).toEqual({ weights: [25] });
    expect(edited.spec.trafficRouting).toEqual({
      provider: 'istio',
      istio: { virtualService: { name: 'pay' } },
    });
    expect(edited.spec.analysis.metrics[0]).toMatchObject({
      thresholdRange: { min: 0.99 },
      onNoData: 'hold',
    });
  });
});

/** Round trips over generated objects: the acceptance figure is ≥ 1,000 each way. */
describe('CanaryRelease conversion round trips (generated)', () => {
  const N = 1500;

  it(`GIVEN ${N} generated v1 releases WHEN converted to v1alpha1 and back THEN each is deep-equal to the original`, () => {
    const r = rng(1);
    let hiddenSeen = 0;
    for (let i = 0; i < N; i++) {
      const v1 = randomV1(r, i);
      const alpha = canaryReleaseToV1alpha1(structuredClone(v1));
      const alphaMetrics = (alpha.spec as { metrics: unknown[] }).metrics.length;
      const v1Metrics = ((v1.spec as { analysis?: { metrics?: unknown[] } }).analysis?.metrics ?? []).length;
      if (alphaMetrics < v1Metrics) hiddenSeen++;
      expect({ i, back: canaryReleaseToV1(alpha) }).toEqual({ i, back: v1 });
    }
    // The generator must exercise what v1alpha1 cannot say, or the test proves little.
    expect(hiddenSeen).toBeGreaterThan(N / 4);
  });

  it(`GIVEN ${N} generated v1alpha1 releases WHEN converted to v1 and back THEN each equals the original apart from the conversion annotations`, () => {
    const r = rng(2);
    for (let i = 0; i < N; i++) {
      const alpha = randomAlpha(r, i);
      const v1 = canaryReleaseToV1(structuredClone(alpha));
      expect((v1.metadata as JsonObject).annotations ?? {}).not.toHaveProperty([V1_SPEC_ANNOTATION]);
      const back = canaryReleaseToV1alpha1(v1);
      expect({ i, back: withoutConversionAnnotations(back) }).toEqual({
        i,
        back: withoutConversionAnnotations(alpha),
      });
      // And once more from the annotated form: still a fixed point.
      expect(canaryReleaseToV1alpha1(canaryReleaseToV1(back))).toEqual(back);
    }
  });

  it(`GIVEN ${N} v1 releases edited through v1alpha1 WHEN converted back THEN v1alpha1 reads the edits and v1-only fields survive`, () => {
    const r = rng(3);
    for (let i = 0; i < N; i++) {
      const v1 = randomV1(r, i);
      const alpha = canaryReleaseToV1alpha1(v1);
      const edited = editAlpha(r, alpha);
      const v1b = canaryReleaseToV1(structuredClone(edited));
      const back = canaryReleaseToV1alpha1(v1b);
      expect({ i, spec: back.spec }).toEqual({ i, spec: edited.spec });
      const s = v1.spec as JsonObject;
      const sb = v1b.spec as JsonObject;
      expect({ i, routing: sb.trafficRouting, gates: sb.gates, wb: sb.gitWriteBack }).toEqual({
        i,
        routing: s.trafficRouting,
        gates: s.gates,
        wb: s.gitWriteBack,
      });
      expect(v1b.status).toEqual(v1.status);
    }
  });
});

/** A random edit a v1alpha1 client could make: threshold, weight, split, port, a metric added or removed. */
function editAlpha(r: Rng, alpha: JsonObject): JsonObject {
  const out = structuredClone(alpha);
  const spec = out.spec as {
    targetService: { port: number };
    trafficSplit: { baseline: number; canary: number };
    metrics: Array<{ name: string; query: string; threshold: number; weight?: number }>;
  };
  switch (r.int(0, 5)) {
    case 0:
      if (spec.metrics[0]) spec.metrics[0].threshold = r.float();
      break;
    case 1: {
      const canary = r.int(1, 100);
      spec.trafficSplit = { baseline: 100 - canary, canary };
      break;
    }
    case 2:
      spec.targetService.port = r.int(1, 65535);
      break;
    case 3:
      spec.metrics.push({
        name: `extra_error_count_${r.int(0, 9)}x`,
        query: 'sum(x)',
        threshold: r.int(0, 50),
      });
      break;
    case 4:
      spec.metrics.shift();
      break;
    default:
      if (spec.metrics[0]) delete spec.metrics[0].weight;
  }
  return out;
}
