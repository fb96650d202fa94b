import { crdRewrite } from './crd.js';
import { hpaV2beta1Rewrite } from './hpa.js';
import { ingressRewrite } from './ingress.js';
import { pdbRewrite } from './pdb.js';
import { mutatingWebhookRewrite, validatingWebhookRewrite } from './webhook-config.js';
import { volatileLabel, workloadRewrite } from './workload.js';
import { priorityLevelRewrite } from './flowcontrol.js';
import { rewriteFor } from './index.js';
import { endpointSliceRewrite } from './endpoint-slice.js';
import type { Manifest, RewriteResult } from '../types.js';

const ok = (r: RewriteResult): Manifest => {
  if (!r.ok) throw new Error(`expected a rewrite, got flags: ${JSON.stringify(r.flags)}`);
  return r.object;
};
const flagsOf = (r: RewriteResult) => {
  if (r.ok) throw new Error('expected flags, got a rewrite');
  return r.flags.map((f) => f.path.join('.'));
};

const crd = (spec: object): Manifest => ({
  apiVersion: 'apiextensions.k8s.io/v1beta1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'things.example.com' },
  spec: {
    group: 'example.com',
    names: { kind: 'Thing', plural: 'things' },
    preserveUnknownFields: false,
    ...spec,
  },
});

describe('CRD v1beta1 → v1', () => {
  it('GIVEN version + top-level validation/subresources/columns THEN one versions[] entry carries them all', () => {
    const out = ok(
      crdRewrite.rewrite(
        crd({
          version: 'v1',
          validation: { openAPIV3Schema: { type: 'object' } },
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'Age', type: 'date', JSONPath: '.metadata.creationTimestamp' }],
        }),
      ),
    );
    expect(out.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(out.spec).toEqual({
      group: 'example.com',
      names: { kind: 'Thing', plural: 'things' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object' } },
          subresources: { status: {} },
          additionalPrinterColumns: [{ name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
        },
      ],
    });
  });

  it('GIVEN several versions and a top-level schema THEN every version gets its own copy, own ones win', () => {
    const out = ok(
      crdRewrite.rewrite(
        crd({
          scope: 'Cluster',
          versions: [
            { name: 'v2', served: true, storage: true },
            {
              name: 'v1',
              served: true,
              storage: false,
              schema: { openAPIV3Schema: { type: 'object', description: 'own' } },
            },
          ],
          validation: { openAPIV3Schema: { type: 'object', description: 'shared' } },
        }),
      ),
    );
    const versions = (
      out.spec as { versions: Array<{ schema: { openAPIV3Schema: { description: string } } }> }
    ).versions;
    expect(versions.map((v) => v.schema.openAPIV3Schema.description)).toEqual(['shared', 'own']);
    expect((out.spec as { scope: string }).scope).toBe('Cluster');
  });

  it('GIVEN conversion strategy Webhook THEN v1 webhook.clientConfig and the v1beta1 default review versions', () => {
    const out = ok(
      crdRewrite.rewrite(
        crd({
          version: 'v1',
          validation: { openAPIV3Schema: { type: 'object' } },
          conversion: { strategy: 'Webhook', webhookClientConfig: { url: 'https://conv.example.com' } },
        }),
      ),
    );
    expect((out.spec as { conversion: unknown }).conversion).toEqual({
      strategy: 'Webhook',
      webhook: { clientConfig: { url: 'https://conv.example.com' }, conversionReviewVersions: ['v1beta1'] },
    });
  });

  it('GIVEN conversion strategy None THEN strategy None only', () => {
    const out = ok(
      crdRewrite.rewrite(
        crd({
          version: 'v1',
          validation: { openAPIV3Schema: { type: 'object' } },
          conversion: { strategy: 'None' },
        }),
      ),
    );
    expect((out.spec as { conversion: unknown }).conversion).toEqual({ strategy: 'None' });
  });

  it.each([
    ['true', { preserveUnknownFields: true }],
    ['absent (the v1beta1 default is true)', { preserveUnknownFields: undefined }],
  ])('GIVEN preserveUnknownFields %s THEN FLAG, never a guess', (_, extra) => {
    const obj = crd({ version: 'v1', validation: { openAPIV3Schema: { type: 'object' } }, ...extra });
    if (extra.preserveUnknownFields === undefined)
      delete (obj.spec as Record<string, unknown>).preserveUnknownFields;
    expect(flagsOf(crdRewrite.rewrite(obj))).toContain('spec.preserveUnknownFields');
  });

  it('GIVEN a version without schema THEN FLAG (v1 requires one per version)', () => {
    expect(flagsOf(crdRewrite.rewrite(crd({ version: 'v1' })))).toEqual(['spec.versions.0.schema']);
  });

  it('GIVEN the input THEN it is not mutated', () => {
    const input = crd({
      version: 'v1',
      validation: { openAPIV3Schema: { properties: { a: { properties: {} } } } },
    });
    const copy = structuredClone(input);
    crdRewrite.rewrite(input);
    expect(input).toEqual(copy);
  });
});

describe('Ingress → networking.k8s.io/v1', () => {
  const ingress = (spec: object, annotations?: object): Manifest => ({
    apiVersion: 'extensions/v1beta1',
    kind: 'Ingress',
    metadata: { name: 'web', ...(annotations ? { annotations } : {}) },
    spec,
  });

  it.each([
    [80, { number: 80 }],
    ['http', { name: 'http' }],
    ['8080', { number: 8080 }],
  ])('GIVEN servicePort %j THEN port %j', (servicePort, port) => {
    const out = ok(ingressRewrite.rewrite(ingress({ backend: { serviceName: 'web', servicePort } })));
    expect(out.spec).toEqual({ defaultBackend: { service: { name: 'web', port } } });
  });

  it('GIVEN paths without pathType THEN ImplementationSpecific (the v1beta1 behaviour) with a comment; set ones kept', () => {
    const result = ingressRewrite.rewrite(
      ingress({
        rules: [
          {
            http: {
              paths: [
                { path: '/a', backend: { serviceName: 'a', servicePort: 80 } },
                { path: '/b', pathType: 'Exact', backend: { serviceName: 'b', servicePort: 80 } },
              ],
            },
          },
        ],
      }),
    );
    const out = ok(result);
    const paths = (out.spec as { rules: Array<{ http: { paths: Array<Record<string, unknown>> } }> })
      .rules[0]!.http.paths;
    expect(paths.map((p) => p.pathType)).toEqual(['ImplementationSpecific', 'Exact']);
    expect(Object.keys(paths[0]!)).toEqual(['path', 'pathType', 'backend']);
    expect(result.ok && result.notes.filter((n) => n.comment).map((n) => n.path.join('.'))).toEqual([
      'spec.rules.0.http.paths.0.pathType',
    ]);
  });

  it('GIVEN the ingress.class annotation THEN it is kept and ingressClassName is not invented', () => {
    const out = ok(
      ingressRewrite.rewrite(
        ingress(
          { backend: { serviceName: 'web', servicePort: 80 } },
          { 'kubernetes.io/ingress.class': 'nginx' },
        ),
      ),
    );
    expect(out.metadata).toEqual({ name: 'web', annotations: { 'kubernetes.io/ingress.class': 'nginx' } });
    expect(out.spec).not.toHaveProperty('ingressClassName');
  });

  it('GIVEN a path without backend (invalid, left for the apiserver to say) THEN no backend key is invented', () => {
    const out = ok(ingressRewrite.rewrite(ingress({ rules: [{ http: { paths: [{ path: '/' }] } }] })));
    expect(out.spec).toEqual({
      rules: [{ http: { paths: [{ path: '/', pathType: 'ImplementationSpecific' }] } }],
    });
  });

  it('GIVEN a backend without servicePort THEN FLAG naming it', () => {
    expect(flagsOf(ingressRewrite.rewrite(ingress({ backend: { serviceName: 'web' } })))).toEqual([
      'spec.backend.servicePort',
    ]);
  });
});

describe('webhook configurations v1beta1 → v1', () => {
  const config = (kind: string, webhook: object): Manifest => ({
    apiVersion: 'admissionregistration.k8s.io/v1beta1',
    kind,
    metadata: { name: 'x' },
    webhooks: [{ name: 'a.example.com', clientConfig: { url: 'https://a.example.com' }, ...webhook }],
  });

  it('GIVEN only sideEffects None THEN every v1beta1 default is written out', () => {
    const out = ok(
      validatingWebhookRewrite.rewrite(config('ValidatingWebhookConfiguration', { sideEffects: 'None' })),
    );
    expect(out.webhooks).toEqual([
      {
        name: 'a.example.com',
        clientConfig: { url: 'https://a.example.com' },
        sideEffects: 'None',
        failurePolicy: 'Ignore',
        matchPolicy: 'Exact',
        timeoutSeconds: 30,
        admissionReviewVersions: ['v1beta1'],
      },
    ]);
  });

  it('GIVEN a mutating webhook THEN reinvocationPolicy Never too, and set values are kept', () => {
    const out = ok(
      mutatingWebhookRewrite.rewrite(
        config('MutatingWebhookConfiguration', {
          sideEffects: 'NoneOnDryRun',
          failurePolicy: 'Fail',
          timeoutSeconds: 5,
        }),
      ),
    );
    expect(out.webhooks).toEqual([
      expect.objectContaining({ failurePolicy: 'Fail', timeoutSeconds: 5, reinvocationPolicy: 'Never' }),
    ]);
  });

  it('GIVEN a configuration without webhooks THEN renamed, nothing invented', () => {
    const out = ok(
      validatingWebhookRewrite.rewrite({
        apiVersion: 'admissionregistration.k8s.io/v1beta1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'empty' },
      }),
    );
    expect(out).toEqual({
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'empty' },
    });
  });

  it.each([[{}], [{ sideEffects: 'Unknown' }], [{ sideEffects: 'Some' }]])(
    'GIVEN %j THEN FLAG sideEffects (never None for the user)',
    (w) => {
      expect(flagsOf(validatingWebhookRewrite.rewrite(config('ValidatingWebhookConfiguration', w)))).toEqual([
        'webhooks.0.sideEffects',
      ]);
    },
  );
});

describe('PodDisruptionBudget → policy/v1', () => {
  const pdb = (selector: unknown): Manifest => ({
    apiVersion: 'policy/v1beta1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'p' },
    spec: selector === undefined ? { minAvailable: 1 } : { minAvailable: 1, selector },
  });
  it.each([[{}], [{ matchLabels: {} }], [{ matchLabels: {}, matchExpressions: [] }]])(
    'GIVEN the empty selector %j THEN FLAG: none in v1beta1, every pod in v1',
    (selector) => expect(flagsOf(pdbRewrite.rewrite(pdb(selector)))).toEqual(['spec.selector']),
  );
  it.each([[{ matchLabels: { app: 'web' } }], [undefined]])('GIVEN %j THEN renamed', (selector) => {
    expect(ok(pdbRewrite.rewrite(pdb(selector))).apiVersion).toBe('policy/v1');
  });
});

describe('HPA v2beta1 → v2', () => {
  it('GIVEN every metric source THEN v2 target blocks', () => {
    const out = ok(
      hpaV2beta1Rewrite.rewrite({
        apiVersion: 'autoscaling/v2beta1',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'h' },
        spec: {
          metrics: [
            { type: 'Resource', resource: { name: 'cpu', targetAverageUtilization: 70 } },
            { type: 'Pods', pods: { metricName: 'rps', targetAverageValue: '10' } },
            {
              type: 'Object',
              object: { target: { kind: 'Service', name: 's' }, metricName: 'hits', averageValue: '5' },
            },
            {
              type: 'External',
              external: { metricName: 'q', metricSelector: { matchLabels: { a: 'b' } }, targetValue: '3' },
            },
          ],
        },
      }),
    );
    expect((out.spec as { metrics: unknown }).metrics).toEqual([
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
      },
      {
        type: 'Pods',
        pods: { metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '10' } },
      },
      {
        type: 'Object',
        object: {
          describedObject: { kind: 'Service', name: 's' },
          metric: { name: 'hits' },
          target: { type: 'AverageValue', averageValue: '5' },
        },
      },
      {
        type: 'External',
        external: {
          metric: { name: 'q', selector: { matchLabels: { a: 'b' } } },
          target: { type: 'Value', value: '3' },
        },
      },
    ]);
  });
  it('GIVEN a Resource metric with both targets THEN FLAG', () => {
    const r = hpaV2beta1Rewrite.rewrite({
      apiVersion: 'autoscaling/v2beta1',
      kind: 'HorizontalPodAutoscaler',
      spec: {
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', targetAverageUtilization: 1, targetAverageValue: '1' },
          },
        ],
      },
    });
    expect(flagsOf(r)).toEqual(['spec.metrics.0.resource']);
  });
});

describe('workloads → apps/v1', () => {
  const deployment = (apiVersion: string, labels: Record<string, string>, extra: object = {}): Manifest => ({
    apiVersion,
    kind: 'Deployment',
    metadata: { name: 'd' },
    spec: { replicas: 1, template: { metadata: { labels }, spec: { containers: [] } }, ...extra },
  });

  it('GIVEN no selector THEN matchLabels from the template, before the template', () => {
    const out = ok(workloadRewrite.rewrite(deployment('apps/v1beta2', { app: 'web' })));
    expect(out.spec).toEqual({
      replicas: 1,
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [] } },
    });
    expect(Object.keys(out.spec as object)).toEqual(['replicas', 'selector', 'template']);
  });

  it('GIVEN extensions/v1beta1 THEN its rolling-update defaults (1/1) are written out', () => {
    const out = ok(workloadRewrite.rewrite(deployment('extensions/v1beta1', { app: 'web' })));
    expect((out.spec as { strategy: unknown }).strategy).toEqual({
      type: 'RollingUpdate',
      rollingUpdate: { maxUnavailable: 1, maxSurge: 1 },
    });
  });

  it('GIVEN an explicit selector THEN volatile template labels are fine and kept', () => {
    const out = ok(
      workloadRewrite.rewrite(
        deployment(
          'apps/v1beta2',
          { app: 'web', version: '1.2.3' },
          { selector: { matchLabels: { app: 'web' } } },
        ),
      ),
    );
    expect((out.spec as { selector: unknown }).selector).toEqual({ matchLabels: { app: 'web' } });
  });

  it.each([
    ['pod-template-hash', '5d8f7c9b6'],
    ['app.kubernetes.io/version', 'stable'],
    ['release', 'v2.3.1'],
    ['built', '2021-04-01'],
    ['git-sha', 'abc'],
  ])('GIVEN no selector and label %s=%s THEN FLAG the label', (k, v) => {
    expect(flagsOf(workloadRewrite.rewrite(deployment('apps/v1beta1', { app: 'web', [k]: v })))).toEqual([
      `spec.template.metadata.labels.${k}`,
    ]);
  });

  it.each([
    ['app', 'web'],
    ['tier', 'frontend'],
    ['app.kubernetes.io/name', 'shop'],
    ['shard', 'eu'],
  ])('GIVEN the label %s=%s THEN it is stable', (k, v) => expect(volatileLabel(k, v)).toBeUndefined());
});

describe('EndpointSlice → discovery.k8s.io/v1', () => {
  it('GIVEN topology THEN nodeName and zone from it, every other key kept in deprecatedTopology', () => {
    const out = ok(
      endpointSliceRewrite.rewrite({
        apiVersion: 'discovery.k8s.io/v1beta1',
        kind: 'EndpointSlice',
        addressType: 'IPv4',
        endpoints: [
          {
            addresses: ['10.0.0.1'],
            topology: { 'kubernetes.io/hostname': 'n1', 'topology.kubernetes.io/zone': 'z1', rack: 'r7' },
          },
          { addresses: ['10.0.0.2'] },
        ],
      }),
    );
    expect(out.endpoints).toEqual([
      { addresses: ['10.0.0.1'], nodeName: 'n1', zone: 'z1', deprecatedTopology: { rack: 'r7' } },
      { addresses: ['10.0.0.2'] },
    ]);
  });
});

describe('flowcontrol and the rewrite table', () => {
  it('GIVEN assuredConcurrencyShares THEN nominalConcurrencyShares', () => {
    const out = ok(
      priorityLevelRewrite.rewrite({
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1beta2',
        kind: 'PriorityLevelConfiguration',
        spec: {
          type: 'Limited',
          limited: { assuredConcurrencyShares: 5, limitResponse: { type: 'Reject' } },
        },
      }),
    );
    expect((out.spec as { limited: unknown }).limited).toEqual({
      nominalConcurrencyShares: 5,
      limitResponse: { type: 'Reject' },
    });
  });

  it.each([
    ['batch/v1beta1', 'CronJob', 'batch/v1'],
    ['rbac.authorization.k8s.io/v1beta1', 'RoleBinding', 'rbac.authorization.k8s.io/v1'],
    ['scheduling.k8s.io/v1beta1', 'PriorityClass', 'scheduling.k8s.io/v1'],
    ['storage.k8s.io/v1beta1', 'CSIDriver', 'storage.k8s.io/v1'],
    ['autoscaling/v2beta2', 'HorizontalPodAutoscaler', 'autoscaling/v2'],
  ])('GIVEN %s %s THEN the rewrite produces %s', (apiVersion, kind, to) => {
    const rewrite = rewriteFor(apiVersion, kind)!;
    expect(rewrite.to).toBe(to);
    expect(ok(rewrite.rewrite({ apiVersion, kind, metadata: { name: 'x' } })).apiVersion).toBe(to);
  });

  it.each([
    ['certificates.k8s.io/v1beta1', 'CertificateSigningRequest'],
    ['policy/v1beta1', 'PodSecurityPolicy'],
    ['events.k8s.io/v1beta1', 'Event'],
  ])('GIVEN %s %s THEN no mechanical rewrite is claimed', (apiVersion, kind) => {
    expect(rewriteFor(apiVersion, kind)).toBeUndefined();
  });
});
