/**
 * The conversion and admission webhooks, called by the real apiserver over TLS: kubectl
 * applies and reads CanaryReleases in both versions, invalid objects are refused with field
 * paths, the certificate rotates under load without a failed request, and with the server
 * down each webhook behaves as its failurePolicy says.
 *
 * Leaves the cluster as it found it (plain CRD, no webhook configuration), also when a test
 * fails: other suites share the hub.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { connect } from 'node:tls';
import { join } from 'node:path';
import { REPO_ROOT } from '../support/kube-local.mjs';
import { kubeconfigPath, testClient, uniqueName, eventually } from '../support/clusters.js';
import { restoreWebhookFreeCluster, startTestWebhooks } from '../support/webhook-env.js';
import { installCrds } from '../../src/api/install.js';
import { serverSideApply } from '../../src/kube/apply.js';
import type { Webhooks } from '../../src/webhooks/webhooks.js';
import { createServingMaterial, pemBlocks } from '../../src/webhooks/certs.js';
import { METRIC_NAMES_ANNOTATION, V1_SPEC_ANNOTATION } from '../../src/webhooks/conversion.js';

const hub = testClient('hub');
const namespace = uniqueName('webhooks');
let webhooks: Webhooks | undefined;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs kubectl against the hub; never throws (tests look at the exit code and stderr). */
function kubectl(args: string[], stdin?: string): Promise<Run> {
  return new Promise((resolve) => {
    const p = spawn('kubectl', [...args, '--kubeconfig', kubeconfigPath('hub')]);
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    p.stdin.end(stdin ?? '');
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- kubectl's JSON, read field by field by the assertions
async function kubectlJson<T = Record<string, any>>(args: string[]): Promise<T> {
  const r = await kubectl([...args, '-o', 'json']);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout) as T;
}

const EXAMPLE = join(REPO_ROOT, 'examples', 'api-migration', 'canary-release-v1alpha1.yaml');

/** A v1 release using what v1alpha1 cannot say (istio, gates, a templateRef metric, PR write-back). */
function v1Release(name: string) {
  return {
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { name, namespace },
    spec: {
      deliveryRef: { name: 'shop' },
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'checkout' },
      service: { port: 80, canarySuffix: '-next' },
      strategy: 'canary',
      trafficRouting: { provider: 'istio', istio: { virtualService: { name: 'checkout' } } },
      steps: { weights: [5, 25, 50] },
      analysis: {
        provider: { type: 'prometheus', address: 'http://prometheus.monitoring:9090' },
        metrics: [
          {
            name: 'error-rate',
            query: 'sum(rate(errors_total[{{ interval }}]))',
            thresholdRange: { max: 0.01 },
          },
          { name: 'latency', templateRef: { name: 'latency' }, thresholdRange: { min: 1, max: 500 } },
        ],
      },
      gates: [{ name: 'qa', at: 'confirmPromotion', type: 'manual' }],
      gitWriteBack: {
        mode: 'pullRequest',
        pullRequest: {
          provider: 'github',
          apiURL: 'https://api.github.com',
          repository: 'shop/checkout',
          secretRef: { name: 'gh' },
        },
      },
    },
  };
}

beforeAll(async () => {
  // A previous run that died midway may have left its webhooks registered.
  await restoreWebhookFreeCluster(hub);
  await installCrds(hub);
  await serverSideApply(
    hub,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    {
      fieldManager: 'test',
    },
  );
  await serverSideApply(
    hub,
    {
      apiVersion: 'sluice.dev/v1',
      kind: 'MetricTemplate',
      metadata: { name: 'latency', namespace },
      spec: { provider: { type: 'prometheus', address: 'http://prom:9090' }, query: 'up' },
    } as never,
    { fieldManager: 'test' },
  );
  webhooks = await startTestWebhooks(hub);
  // The apiserver loads the CRD change and the webhook configuration asynchronously.
  await eventually(
    async () => (await kubectl(['get', 'canaryreleases.v1alpha1.sluice.dev', '-n', namespace])).code === 0,
    30_000,
  );
}, 120_000);

afterAll(async () => {
  await webhooks?.stop().catch(() => undefined);
  await hub.raw
    .deleteRaw({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } })
    .catch(() => undefined);
  await restoreWebhookFreeCluster(hub);
}, 120_000);

describe('conversion webhook (real apiserver, TLS)', () => {
  it('GIVEN the payment-service-v2 v1alpha1 example WHEN applied with kubectl THEN it reads back as the equivalent v1', async () => {
    const applied = await kubectl(['apply', '-n', namespace, '-f', EXAMPLE]);
    expect(applied).toMatchObject({ code: 0 });
    const v1 = await kubectlJson([
      'get',
      'canaryreleases.v1.sluice.dev',
      'payment-service-v2',
      '-n',
      namespace,
    ]);
    expect(v1.apiVersion).toBe('sluice.dev/v1');
    expect(v1.spec).toMatchObject({
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'payment-service' },
      service: { name: 'payment-service', port: 8080, primarySuffix: '-primary', canarySuffix: '-canary' },
      strategy: 'canary',
      steps: { weights: [10] },
      trafficRouting: { provider: 'replicas' },
      analysis: {
        judge: 'threshold',
        metrics: [
          { name: 'business-order-success-rate', thresholdRange: { min: 0.995 }, weight: 0.6 },
          { name: 'p95-latency-ms', thresholdRange: { max: 800 }, weight: 0.4 },
        ],
      },
    });
    expect(v1.metadata.annotations?.[V1_SPEC_ANNOTATION]).toBeUndefined();
    expect(JSON.parse(v1.metadata.annotations[METRIC_NAMES_ANNOTATION])).toEqual({
      'business-order-success-rate': 'business_order_success_rate',
      'p95-latency-ms': 'p95_latency_ms',
    });

    // And v1alpha1 still reads what its author wrote.
    const alpha = await kubectlJson([
      'get',
      'canaryreleases.v1alpha1.sluice.dev',
      'payment-service-v2',
      '-n',
      namespace,
    ]);
    expect(alpha.spec).toEqual({
      targetService: { name: 'payment-service', port: 8080 },
      trafficSplit: { baseline: 90, canary: 10 },
      metrics: [
        expect.objectContaining({ name: 'business_order_success_rate', threshold: 0.995, weight: 0.6 }),
        expect.objectContaining({ name: 'p95_latency_ms', threshold: 800, weight: 0.4 }),
      ],
    });
  });

  it('GIVEN a v1 release with fields v1alpha1 cannot say WHEN read and written back as v1alpha1 THEN v1 is unchanged', async () => {
    const name = uniqueName('checkout');
    await serverSideApply(hub, v1Release(name) as never, { fieldManager: 'test' });
    const before = await kubectlJson(['get', 'canaryreleases.v1.sluice.dev', name, '-n', namespace]);
    const alpha = await kubectlJson(['get', 'canaryreleases.v1alpha1.sluice.dev', name, '-n', namespace]);
    expect(alpha.apiVersion).toBe('sluice.dev/v1alpha1');
    expect(alpha.spec).toEqual({
      targetService: { name: 'checkout', port: 80 },
      trafficSplit: { baseline: 50, canary: 50 },
      // weight: the v1 default, written by the apiserver.
      metrics: [
        { name: 'error-rate', query: 'sum(rate(errors_total[{{ interval }}]))', threshold: 0.01, weight: 1 },
      ],
    });
    // Written back whole as v1alpha1 (kubectl replace): the apiserver converts it to v1 for storage.
    const replaced = await kubectl(['replace', '-f', '-'], JSON.stringify(alpha));
    expect(replaced).toMatchObject({ code: 0 });
    const after = await kubectlJson(['get', 'canaryreleases.v1.sluice.dev', name, '-n', namespace]);
    expect(after.spec).toEqual(before.spec);
  });
});

describe('admission webhook (real apiserver, TLS)', () => {
  it('GIVEN a v1alpha1 metric whose name decides no direction WHEN applied THEN it is refused at its field path', async () => {
    const text = readFileSync(EXAMPLE, 'utf8')
      .replace('payment-service-v2', 'bad-direction')
      .replace('p95_latency_ms', 'checkout_orders');
    const r = await kubectl(['apply', '-n', namespace, '-f', '-'], text);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(
      /CanaryRelease "bad-direction" is invalid: .*spec\.metrics\[1\]\.threshold: .*"checkout_orders" does not say whether the threshold is a floor or a ceiling/,
    );
  });

  // Decreasing steps, unknown providers and all-zero weights are caught by the schema's CEL
  // rules before a webhook is called; what is left for the webhook is what CEL cannot see.
  it('GIVEN a v1 release with a broken query and a missing template WHEN applied THEN each field is named', async () => {
    const bad = v1Release(uniqueName('bad'));
    bad.spec.analysis.metrics[0]!.query = 'sum(rate(errors_total[5m])';
    bad.spec.analysis.metrics[1]!.templateRef = { name: 'nope' };
    const r = await kubectl(['apply', '-f', '-'], JSON.stringify(bad));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec.analysis.metrics[0].query');
    expect(r.stderr).toContain('spec.analysis.metrics[1].templateRef.name: Invalid value: "nope"');
  });

  it('GIVEN a Delivery whose timeout outlives its interval WHEN applied THEN spec.timeout is named', async () => {
    const r = await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'sluice.dev/v1',
        kind: 'Delivery',
        metadata: { name: uniqueName('dl'), namespace },
        spec: { sourceRef: { name: 'app' }, placementRef: { name: 'prod' }, interval: '1m', timeout: '10m' },
      }),
    );
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/spec\.timeout: Invalid value: "10m": must not exceed interval/);
  });
});

/** POSTs `body` to the webhook server, trusting its published CA. */
function post(path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: webhooks!.port,
        path,
        method: 'POST',
        ca: webhooks!.trustedCas.join(''),
        servername: 'localhost',
      },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('malformed reviews', () => {
  it.each([
    ['/convert', 'not json', 400, /malformed review: body is not JSON/],
    [
      '/convert',
      '{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}',
      400,
      /request is missing/,
    ],
    [
      '/validate/canaryreleases',
      '{"apiVersion":"admission.k8s.io/v1beta1","kind":"AdmissionReview","request":{"uid":"1"}}',
      400,
      /expected apiVersion admission\.k8s\.io\/v1/,
    ],
    [
      '/validate/deliveries',
      '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"kind":{"version":"v1","kind":"Delivery"}}}',
      400,
      /request\.uid is missing/,
    ],
    ['/nope', '{}', 404, /no webhook at \/nope/],
  ])(
    'GIVEN a POST to %s of %j WHEN served THEN %i names the problem',
    async (path, body, status, message) => {
      const r = await post(path, body);
      expect(r.status).toBe(status);
      expect(r.text).toMatch(message);
    },
  );

  it('GIVEN a ConversionReview with an object that cannot convert WHEN served THEN the result is a Failure naming object and field', async () => {
    const r = await post(
      '/convert',
      JSON.stringify({
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: {
          uid: 'u1',
          desiredAPIVersion: 'sluice.dev/v1',
          objects: [
            {
              apiVersion: 'sluice.dev/v1alpha1',
              kind: 'CanaryRelease',
              metadata: { name: 'x', namespace: 'y' },
              spec: {
                targetService: { name: 'a', port: 1 },
                trafficSplit: { baseline: 90, canary: 10 },
                metrics: [{ name: 'orders', query: 'up', threshold: 1 }],
              },
            },
          ],
        },
      }),
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).response).toEqual({
      uid: 'u1',
      convertedObjects: [],
      result: {
        status: 'Failure',
        message: expect.stringMatching(
          /^cannot convert CanaryRelease y\/x to sluice\.dev\/v1: spec\.metrics\[0\]\.threshold: /,
        ),
      },
    });
  });
});

/** The SHA-256 fingerprint of the certificate the server presents now. */
function servedFingerprint(): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(
      { host: '127.0.0.1', port: webhooks!.port, rejectUnauthorized: false, servername: 'localhost' },
      () => {
        resolve(s.getPeerCertificate().fingerprint256);
        s.end();
      },
    );
    s.on('error', reject);
  });
}

describe('certificate rotation', () => {
  it('GIVEN requests flowing through both webhooks WHEN the CA and certificate rotate twice THEN none fails and the new certificate is served', async () => {
    const first = await servedFingerprint();
    const name = uniqueName('rot');
    const text = readFileSync(EXAMPLE, 'utf8').replace('payment-service-v2', name);
    let stop = false;
    const failures: string[] = [];
    let ok = 0;
    const load = (async () => {
      for (let i = 0; !stop; i++) {
        // A write through admission (v1alpha1 → conversion → storage) and a read through conversion.
        const w = await kubectl(
          ['apply', '-n', namespace, '-f', '-'],
          text.replace('port: 8080', `port: ${8000 + (i % 50)}`),
        );
        const r = await kubectl(['get', 'canaryreleases.v1alpha1.sluice.dev', '-n', namespace, '-o', 'name']);
        for (const x of [w, r])
          if (x.code === 0) ok++;
          else failures.push(x.stderr);
      }
    })();
    await webhooks!.rotate();
    const second = await servedFingerprint();
    await new Promise((r) => setTimeout(r, 1_500));
    await webhooks!.rotate();
    const third = await servedFingerprint();
    // Past the overlap, the old CA is gone from the bundle; requests keep working.
    await new Promise((r) => setTimeout(r, 3_000));
    stop = true;
    await load;
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(4);
    expect(new Set([first, second, third]).size).toBe(3);
    expect(webhooks!.trustedCas).toHaveLength(1);
    expect(webhooks!.rotations).toBe(2);
  });
});

describe('webhook down', () => {
  it('GIVEN the webhook server stopped WHEN objects are written THEN CanaryRelease is refused (Fail), Delivery admitted (Ignore), v1alpha1 unreadable, v1 readable', async () => {
    const existing = uniqueName('before-down');
    await serverSideApply(hub, v1Release(existing) as never, { fieldManager: 'test' });
    await webhooks!.stop();
    const cr = await kubectl(['apply', '-f', '-'], JSON.stringify(v1Release(uniqueName('down'))));
    expect(cr.code).not.toBe(0);
    expect(cr.stderr).toMatch(/failed calling webhook "canaryreleases\.validation\.sluice\.dev"/);
    const dl = await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'sluice.dev/v1',
        kind: 'Delivery',
        metadata: { name: uniqueName('dl'), namespace },
        spec: { sourceRef: { name: 'app' }, placementRef: { name: 'prod' } },
      }),
    );
    expect(dl).toMatchObject({ code: 0 });
    const alpha = await kubectl(['get', 'canaryreleases.v1alpha1.sluice.dev', existing, '-n', namespace]);
    expect(alpha.code).not.toBe(0);
    expect(alpha.stderr).toMatch(/conversion webhook for sluice\.dev\/v1, Kind=CanaryRelease failed/);
    const v1 = await kubectl(['get', 'canaryreleases.v1.sluice.dev', existing, '-n', namespace]);
    expect(v1).toMatchObject({ code: 0 });
  });
});

describe('certificate from a Secret', () => {
  it('GIVEN a kubernetes.io/tls Secret WHEN the webhooks serve it THEN the apiserver trusts its ca.crt, and a changed Secret is rotated in', async () => {
    const secretName = uniqueName('tls');
    const hosts = { dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] };
    const writeSecret = (m: ReturnType<typeof createServingMaterial>) =>
      serverSideApply(
        hub,
        {
          apiVersion: 'v1',
          kind: 'Secret',
          type: 'kubernetes.io/tls',
          metadata: { name: secretName, namespace },
          stringData: { 'tls.crt': m.serving.certPem, 'tls.key': m.serving.keyPem, 'ca.crt': m.ca.certPem },
        } as never,
        { fieldManager: 'test', force: true },
      );
    const first = createServingMaterial(hosts, 3_600_000);
    await writeSecret(first);
    await webhooks?.stop();
    // A Secret's certificate has no cross-signed chain: the swap waits for the bundle to load.
    webhooks = await startTestWebhooks(hub, {
      certificate: { kind: 'secret', namespace, name: secretName, pollMs: 3_600_000 },
      propagationMs: 3_000,
    });
    expect(webhooks.servingCertificate).toBe(first.serving.certPem);
    const text = readFileSync(EXAMPLE, 'utf8').replace('payment-service-v2', uniqueName('from-secret'));
    await eventually(
      async () => (await kubectl(['apply', '-n', namespace, '-f', '-'], text)).code === 0,
      30_000,
    );

    const second = createServingMaterial(hosts, 3_600_000);
    await writeSecret(second);
    await webhooks.rotate();
    expect(webhooks.servingCertificate).toBe(second.serving.certPem);
    expect(webhooks.trustedCas).toEqual([first.ca.certPem, second.ca.certPem].map((p) => pemBlocks(p)[0]));
    const again = await kubectl(
      ['apply', '-n', namespace, '-f', '-'],
      text.replace('port: 8080', 'port: 8081'),
    );
    expect(again).toMatchObject({ code: 0 });
  });
});
