import { execFile } from 'node:child_process';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { KubernetesObject } from '@kubernetes/client-node';
import { runCli } from '../../src/cli/run.js';
import { scanCluster } from '../../src/scan/cluster.js';
import { fetchServedApis } from '../../src/scan/discovery.js';
import { exitCodeOf, formatFindingLocation } from '../../src/scan/findings.js';
import { findHelm, helmTemplate } from '../../src/scan/helm.js';
import { scanPaths } from '../../src/scan/scan.js';
import { captureOutput } from '../support/capture-output.js';
import { kubeconfigPath, testClient, uniqueName } from '../support/clusters.js';
import { createNamespace, deleteObject } from '../support/sluice-objects.js';

const F = new URL('../fixtures/scan/', import.meta.url).pathname.replace(/\/$/, '');

async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureOutput();
  try {
    const code = await runCli(args);
    return { code, out: c.out(), err: c.err() };
  } finally {
    c.restore();
  }
}

describe('sluice scan with the real helm binary (built from its Go module by make helm)', () => {
  let helm: string | undefined;
  beforeAll(async () => {
    helm = await findHelm();
  });

  it('GIVEN bin/helm THEN it is found and is Helm v3.21.4', async () => {
    expect(helm).toBeDefined();
    const version = await new Promise<string>((resolve, reject) =>
      execFile(helm!, ['version', '--short'], (err, out) =>
        err ? reject(err) : resolve(String(out).trim()),
      ),
    );
    expect(version).toMatch(/^v3\.21\.4/);
  });

  it('GIVEN a chart choosing PodDisruptionBudget by .Capabilities.APIVersions.Has WHEN rendered for 1.20 and 1.29 THEN policy/v1beta1 and policy/v1, each served there', async () => {
    const at = async (v: string) =>
      (await helmTemplate(helm!, `${F}/helm/capabilities`, v)).objects
        .filter((o) => o.kind === 'PodDisruptionBudget')
        .map((o) => o.apiVersion);
    expect(await at('1.20')).toEqual(['policy/v1beta1']);
    expect(await at('1.29')).toEqual(['policy/v1']);
  });

  it('GIVEN the chart WHEN scanned for 1.20 and 1.29 THEN judged per target: its semverCompare-chosen Ingress beta deprecated at 1.20 (exit 3), removed at 1.29 (exit 4); the PDB never; a values-gated template still read', async () => {
    const r20 = await scanPaths([`${F}/helm/capabilities`], { targetVersion: '1.20', helm });
    const r29 = await scanPaths([`${F}/helm/capabilities`], { targetVersion: '1.29', helm });
    const show = (r: typeof r20) =>
      r.findings.map(
        (f) =>
          `${formatFindingLocation(f.location).replace(`${F}/`, '')} ${f.status} ${f.apiVersion} ${f.kind}`,
      );
    expect(show(r20)).toEqual([
      'helm/capabilities/templates/ingress.yaml:3 deprecated networking.k8s.io/v1beta1 Ingress',
    ]);
    expect(show(r29)).toEqual([
      'helm/capabilities/templates/ingress.yaml:3 removed networking.k8s.io/v1beta1 Ingress',
      // Gated off by the default values: rendered nothing, pattern-scanned all the same.
      'helm/capabilities/templates/cronjob.yaml:3 removed batch/v1beta1 CronJob',
    ]);
    expect(r29.findings[1]?.detail).toBe(
      "templates/cronjob.yaml rendered nothing with the chart's default values (gated by a value?); pattern scan",
    );
    expect(r29.findings[0]?.source).toBe('helm');
    expect(r29.findings[0]?.detail).toBe(
      'rendered by helm template --kube-version 1.29 (1 .Capabilities.APIVersions.Has answered for 1.29)',
    );
    expect([exitCodeOf(r20), exitCodeOf(r29)]).toEqual([3, 4]);
  });

  it('GIVEN a chart that does not render WHEN scanned THEN its templates are pattern-scanned and every finding says rendering failed and why', async () => {
    const r = await scanPaths([`${F}/helm/broken`], { targetVersion: '1.29', helm });
    expect(r.findings.map((f) => `${f.apiVersion} ${f.kind} ${f.source}`)).toEqual([
      'batch/v1beta1 CronJob helm-pattern',
      'rbac.authorization.k8s.io/v1beta1 Role helm-pattern',
    ]);
    for (const f of r.findings) {
      expect(f.detail).toMatch(
        /^rendering failed: parse error at \(broken\/templates\/cronjob\.yaml:8\): unclosed action.*; pattern scan/,
      );
    }
    expect(r.notices[0]?.message).toMatch(
      /^chart broken: rendering failed: .*; pattern scan of its templates$/,
    );
  });

  it('GIVEN the CLI on the whole corpus THEN exit 4 and the helm findings in SARIF', async () => {
    const r = await cli(['scan', `${F}/helm`, `${F}/manifests`, '--target-version', '1.29', '-o', 'sarif']);
    expect(r.code).toBe(4);
    const results = JSON.parse(r.out).runs[0].results as { properties: { source: string } }[];
    expect(results.filter((x) => x.properties.source === 'helm')).toHaveLength(1);
    expect(results.filter((x) => x.properties.source === 'helm-pattern')).toHaveLength(3);
  });
});

describe('sluice scan of a live cluster (kube-local 1.36)', () => {
  const cluster = 'member-2';
  const client = testClient(cluster);
  const ns = uniqueName('scan');

  beforeAll(async () => {
    await createNamespace(client, ns);
    // Written as kubectl apply would have written it from an old manifest: the object is stored
    // and served as networking.k8s.io/v1, the annotation keeps what the manifest said.
    await client.raw.request({
      method: 'POST',
      path: `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`,
      body: {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: {
          name: 'legacy',
          annotations: {
            'kubectl.kubernetes.io/last-applied-configuration': JSON.stringify({
              apiVersion: 'networking.k8s.io/v1beta1',
              kind: 'Ingress',
              metadata: { name: 'legacy', namespace: ns },
            }),
          },
        },
        spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
      },
    });
    await client.raw.request({
      method: 'POST',
      path: `/apis/networking.k8s.io/v1/namespaces/${ns}/ingresses`,
      body: {
        apiVersion: 'networking.k8s.io/v1',
        kind: 'Ingress',
        metadata: { name: 'current' },
        spec: { defaultBackend: { service: { name: 'web', port: { number: 80 } } } },
      },
    });
  });

  beforeAll(async () => {
    // A Helm 3 release as `helm install` stores it (data.release = base64(gzip(JSON))), whose
    // manifest still holds a PodDisruptionBudget written as policy/v1beta1.
    const release = {
      name: 'legacy-app',
      namespace: ns,
      version: 2,
      info: { status: 'deployed' },
      manifest:
        '---\n# Source: legacy-app/templates/pdb.yaml\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: legacy-app\nspec:\n  minAvailable: 1\n',
    };
    const helmValue = gzipSync(Buffer.from(JSON.stringify(release))).toString('base64');
    await client.raw.request({
      method: 'POST',
      path: `/api/v1/namespaces/${ns}/secrets`,
      body: {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'helm.sh/release.v1',
        metadata: {
          name: 'sh.helm.release.v1.legacy-app.v2',
          labels: { owner: 'helm', name: 'legacy-app', status: 'deployed', version: '2' },
        },
        data: { release: Buffer.from(helmValue).toString('base64') },
      },
    });
  });

  afterAll(async () => {
    await deleteObject(client, {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: ns },
    } as KubernetesObject);
  });

  it('GIVEN discovery THEN the cluster is 1.36 and serves networking.k8s.io/v1 Ingress but not extensions/v1beta1', async () => {
    const apis = await fetchServedApis(client);
    expect(apis.gitVersion).toMatch(/^v1\.36\./);
    expect(apis.groupVersions.get('networking.k8s.io/v1')?.some((r) => r.kind === 'Ingress')).toBe(true);
    expect(apis.groupVersions.has('extensions/v1beta1')).toBe(false);
  });

  it('GIVEN an Ingress last applied from a v1beta1 manifest and one from a v1 manifest WHEN the cluster is scanned THEN only the first is reported, by namespace/name; and a deployed Helm release whose stored manifest has policy/v1beta1', async () => {
    const r = await scanCluster(client, cluster, '1.29');
    const mine = r.findings.filter((f) => 'cluster' in f.location && f.location.namespace === ns);
    expect(
      mine.map((f) => [formatFindingLocation(f.location), f.status, f.apiVersion, f.replacement?.apiVersion]),
    ).toEqual([
      [`cluster member-2/${ns}/legacy`, 'removed', 'networking.k8s.io/v1beta1', 'networking.k8s.io/v1'],
      [
        `cluster member-2/${ns}/helm release legacy-app (revision 2)`,
        'removed',
        'policy/v1beta1',
        'policy/v1',
      ],
    ]);
    expect(r.scanned).toBeGreaterThanOrEqual(2);
  });

  it('GIVEN the CLI with --kubeconfig THEN exit 4 and the finding in JSON', async () => {
    const r = await cli([
      'scan',
      '--kubeconfig',
      kubeconfigPath(cluster),
      '--target-version',
      '1.29',
      '-o',
      'json',
    ]);
    expect(r.code).toBe(4);
    const names = (JSON.parse(r.out).findings as { location: { namespace?: string; name?: string } }[])
      .filter((f) => f.location.namespace === ns)
      .map((f) => f.location.name);
    expect(names).toEqual(['legacy', 'helm release legacy-app (revision 2)']);
  });
});
