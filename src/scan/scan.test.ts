import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { exitCodeOf, formatFindingLocation } from './findings.js';
import { API_REMOVALS, removalApiVersion } from './removals.js';
import { originOf, scanPaths } from './scan.js';

const F = new URL('../../test/fixtures/scan/', import.meta.url).pathname.replace(/\/$/, '');

const where = (r: Awaited<ReturnType<typeof scanPaths>>) =>
  r.findings.map(
    (f) => `${formatFindingLocation(f.location).replace(`${F}/`, '')} ${f.status} ${f.apiVersion} ${f.kind}`,
  );

describe('scanPaths over the fixture corpus', () => {
  it("GIVEN one fixture file per removal row WHEN scanned at each row's removal release THEN every row is found removed, with its replacement", async () => {
    const files = await readdir(`${F}/rows`);
    expect(files).toHaveLength(API_REMOVALS.length);
    for (const row of API_REMOVALS) {
      const target = row.removedIn ?? '1.36';
      const r = await scanPaths([`${F}/rows`], { targetVersion: target });
      const hit = r.findings.find((f) => f.apiVersion === removalApiVersion(row) && f.kind === row.kind);
      expect({ row: `${removalApiVersion(row)} ${row.kind}`, status: hit?.status }).toEqual({
        row: `${removalApiVersion(row)} ${row.kind}`,
        status: row.removedIn ? 'removed' : 'deprecated',
      });
    }
  });

  it('GIVEN plain manifests (multi-doc, List, JSON, a CSV full of old strings, a values file) WHEN scanned at 1.29 THEN exactly the top-level old objects, file:line', async () => {
    const r = await scanPaths([`${F}/manifests`], { targetVersion: '1.29' });
    expect(where(r)).toEqual([
      'manifests/list.yaml:14 (items[1]) removed extensions/v1beta1 Ingress',
      'manifests/multi.yaml:8 removed batch/v1beta1 CronJob',
      'manifests/nested/hpa.json:2 removed autoscaling/v2beta2 HorizontalPodAutoscaler',
    ]);
    expect(r.notices).toEqual([]);
    expect(exitCodeOf(r)).toBe(4);
    expect(r.findings[0]?.fix).toBe(`sluice fix ${F}/manifests/list.yaml --target-version 1.29`);
  });

  it('GIVEN the same manifests at 1.22 THEN the CronJob is only deprecated and the HPA not yet (exit 4 for the Ingress)', async () => {
    const r = await scanPaths([`${F}/manifests`], { targetVersion: '1.22' });
    expect(where(r)).toEqual([
      'manifests/list.yaml:14 (items[1]) removed extensions/v1beta1 Ingress',
      'manifests/multi.yaml:8 deprecated batch/v1beta1 CronJob',
    ]);
  });

  it('GIVEN Helm charts and no helm binary WHEN scanned THEN every branch is pattern-scanned and each finding says why', async () => {
    const r = await scanPaths([`${F}/helm`], { targetVersion: '1.29' });
    expect(where(r)).toEqual([
      'helm/broken/templates/cronjob.yaml:2 removed batch/v1beta1 CronJob',
      'helm/broken/templates/role.yaml:1 removed rbac.authorization.k8s.io/v1beta1 Role',
      'helm/capabilities/templates/cronjob.yaml:3 removed batch/v1beta1 CronJob',
      'helm/capabilities/templates/ingress.yaml:3 removed networking.k8s.io/v1beta1 Ingress',
      'helm/capabilities/templates/ingress.yaml:5 removed extensions/v1beta1 Ingress',
      'helm/capabilities/templates/pdb.yaml:4 removed policy/v1beta1 PodDisruptionBudget',
    ]);
    for (const f of r.findings) expect(f.detail).toMatch(/^helm not found .*; pattern scan/);
    expect(r.notices.map((n) => n.message)).toEqual([
      expect.stringMatching(/^chart broken: helm not found.*pattern scan of its templates$/),
      expect.stringMatching(/^chart capabilities: helm not found/),
    ]);
  });

  it('GIVEN a capped and an uncapped OLM bundle WHEN scanned at 1.29 THEN the capped one is reported capped (not broken), the uncapped one broken', async () => {
    const r = await scanPaths([`${F}/olm`], { targetVersion: '1.29' });
    expect(where(r)).toEqual([
      'olm/uncapped/manifests/crd.yaml:1 removed apiextensions.k8s.io/v1beta1 CustomResourceDefinition',
    ]);
    const capped = r.notices.find((n) => n.level === 'capped');
    expect(capped?.path).toBe(`${F}/olm/capped`);
    expect(capped?.message).toContain('capped at OpenShift 4.8 (Kubernetes 1.21)');
    expect(capped?.message).toContain('the target 1.29 is OpenShift 4.16');
    expect(exitCodeOf(r)).toBe(4);
  });

  it('GIVEN the capped bundle alone at 1.21 (OpenShift 4.8, within its cap) THEN its CRD is judged (removed in 1.22: deprecated)', async () => {
    const r = await scanPaths([`${F}/olm/capped`], { targetVersion: '1.21' });
    expect(where(r)).toEqual([
      'olm/capped/manifests/crd.yaml:1 deprecated apiextensions.k8s.io/v1beta1 CustomResourceDefinition',
    ]);
  });

  it('GIVEN a kustomization and a fake runner WHEN scanned THEN findings point at the source file; a failing runner falls back to the files and says so', async () => {
    const rendered = [
      'apiVersion: v1',
      'kind: Service',
      'metadata: { name: prod-web }',
      '---',
      'apiVersion: networking.k8s.io/v1beta1',
      'kind: Ingress',
      'metadata: { name: prod-web }',
    ].join('\n');
    const ok = await scanPaths([`${F}/kustomize`], {
      targetVersion: '1.29',
      kustomize: async () => rendered,
    });
    expect(where(ok)).toEqual(['kustomize/base/ingress.yaml:1 removed networking.k8s.io/v1beta1 Ingress']);
    expect(ok.findings[0]?.source).toBe('kustomize');

    const failing = await scanPaths([`${F}/kustomize`], {
      targetVersion: '1.29',
      kustomize: async () => {
        throw new Error('accumulating resources: boom');
      },
    });
    expect(where(failing)).toEqual([
      'kustomize/base/ingress.yaml:1 removed networking.k8s.io/v1beta1 Ingress',
    ]);
    expect(failing.notices[0]).toMatchObject({
      level: 'error',
      message: expect.stringContaining('kustomize build failed: accumulating resources: boom'),
    });
    expect(exitCodeOf(failing)).toBe(2);
  });

  it('GIVEN a directory with one file of invalid YAML WHEN scanned THEN an error naming file:line, and the other files are still judged', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-scan-bad-'));
    try {
      await writeFile(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: ConfigMap\n---\nmetadata: [unclosed\n');
      await writeFile(
        join(dir, 'good.yaml'),
        'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: { name: c }\n',
      );
      const r = await scanPaths([dir], { targetVersion: '1.29' });
      expect(r.findings.map((f) => formatFindingLocation(f.location))).toEqual([`${dir}/good.yaml:1`]);
      expect(r.notices).toEqual([
        // The parser reports the unclosed flow sequence where the input ends.
        { path: `${dir}/bad.yaml:5`, level: 'error', message: expect.stringMatching(/^invalid YAML/) },
      ]);
      expect(exitCodeOf(r)).toBe(2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('GIVEN a symlink cycle WHEN scanned THEN each directory is walked once', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'sluice-scan-loop-'));
    try {
      await mkdir(join(dir, 'a'));
      await writeFile(join(dir, 'a', 'cj.yaml'), 'apiVersion: batch/v1beta1\nkind: CronJob\n');
      await symlink('..', join(dir, 'a', 'up'));
      const r = await scanPaths([dir], { targetVersion: '1.29' });
      expect(r.findings).toHaveLength(1);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('GIVEN a path that does not exist WHEN scanned THEN an error notice, not a silent clean result', async () => {
    const r = await scanPaths([`${F}/nope`], { targetVersion: '1.29' });
    expect(r.notices[0]).toMatchObject({ path: `${F}/nope`, level: 'error' });
    expect(exitCodeOf(r)).toBe(2);
  });

  it('GIVEN a bad target version THEN a clear error', async () => {
    await expect(scanPaths([F], { targetVersion: 'latest' })).rejects.toThrow(
      /invalid Kubernetes version "latest"/,
    );
  });
});

describe('originOf', () => {
  const src = (kind: string, name: string, apiVersion = 'v1', file = 'f.yaml', line = 1) =>
    ({ kind, name, apiVersion, file, line, docIndex: 0, value: {} }) as const;
  it('GIVEN a namePrefix WHEN mapped back THEN the source whose name the rendered name contains', () => {
    expect(
      originOf(src('Service', 'prod-web'), [
        src('Service', 'api', 'v1', 'a.yaml'),
        src('Service', 'web', 'v1', 'b.yaml', 4),
      ]),
    ).toEqual({
      file: 'b.yaml',
      line: 4,
    });
  });
  it('GIVEN two candidates and no name match THEN undefined (no guess)', () => {
    expect(originOf(src('Service', 'x'), [src('Service', 'a'), src('Service', 'b')])).toBeUndefined();
  });
});
