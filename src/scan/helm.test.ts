import { chmod, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findHelm, patternScanChart, pinCapabilities, servedAt, splitRendered } from './helm.js';

const FIXTURES = new URL('../../test/fixtures/scan/helm/', import.meta.url).pathname;

describe('servedAt / pinCapabilities', () => {
  it.each([
    ['policy/v1/PodDisruptionBudget', '1.20', false],
    ['policy/v1/PodDisruptionBudget', '1.21', true],
    ['policy/v1beta1/PodDisruptionBudget', '1.29', false],
    ['policy/v1beta1', '1.24', true],
    ['policy/v1beta1', '1.25', false],
    ['networking.k8s.io/v1/Ingress', '1.18', false],
    ['monitoring.coreos.com/v1', '1.29', undefined],
    ['v1', '1.29', undefined],
  ])('GIVEN Has %j at %s THEN %s', (spec, target, expected) => {
    expect(servedAt(spec, target)).toBe(expected);
  });

  it('GIVEN a template with Has calls WHEN pinned for 1.20 THEN known ones become literals, unknown ones stay, lines stay', () => {
    const text = [
      '{{- if .Capabilities.APIVersions.Has "policy/v1/PodDisruptionBudget" }}',
      '{{- if and ($.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") .Values.x }}',
    ].join('\n');
    const out = pinCapabilities(text, '1.20');
    expect(out.count).toBe(1);
    expect(out.text).toBe(
      [
        '{{- if (false) }}',
        '{{- if and ($.Capabilities.APIVersions.Has "monitoring.coreos.com/v1") .Values.x }}',
      ].join('\n'),
    );
  });
});

describe('patternScanChart', () => {
  it('GIVEN the capabilities chart WHEN pattern-scanned THEN both branches of each condition, with their kind and line', async () => {
    const found = await patternScanChart(join(FIXTURES, 'capabilities'));
    expect(found.map((f) => [f.template, f.line, f.apiVersion, f.kind, f.via])).toEqual([
      ['templates/cronjob.yaml', 3, 'batch/v1beta1', 'CronJob', 'branch'],
      ['templates/ingress.yaml', 3, 'networking.k8s.io/v1beta1', 'Ingress', 'branch'],
      ['templates/ingress.yaml', 5, 'extensions/v1beta1', 'Ingress', 'branch'],
      ['templates/pdb.yaml', 2, 'policy/v1', 'PodDisruptionBudget', 'branch'],
      ['templates/pdb.yaml', 4, 'policy/v1beta1', 'PodDisruptionBudget', 'branch'],
    ]);
  });

  it('GIVEN a templated apiVersion from a helper WHEN pattern-scanned THEN every apiVersion literal of the helper', async () => {
    const found = await patternScanChart(join(FIXTURES, 'broken'));
    expect(found.map((f) => [f.template, f.line, f.apiVersion, f.kind, f.via])).toEqual([
      ['templates/cronjob.yaml', 2, 'batch/v1beta1', 'CronJob', undefined],
      ['templates/role.yaml', 1, 'rbac.authorization.k8s.io/v1', 'Role', 'helper "broken.rbacApiVersion"'],
      [
        'templates/role.yaml',
        1,
        'rbac.authorization.k8s.io/v1beta1',
        'Role',
        'helper "broken.rbacApiVersion"',
      ],
    ]);
  });
});

describe('splitRendered', () => {
  it('GIVEN helm template output WHEN split THEN each object carries its template path', () => {
    const out = [
      '---',
      '# Source: mychart/templates/a.yaml',
      'apiVersion: v1',
      'kind: ConfigMap',
      'metadata: { name: a }',
      '---',
      '# Source: mychart/charts/sub/templates/b.yaml',
      'apiVersion: batch/v1beta1',
      'kind: CronJob',
    ].join('\n');
    expect(splitRendered(out).map((o) => [o.template, o.kind])).toEqual([
      ['templates/a.yaml', 'ConfigMap'],
      ['charts/sub/templates/b.yaml', 'CronJob'],
    ]);
  });
});

describe('findHelm', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'sluice-findhelm-'));
    await writeFile(join(dir, 'helm'), '#!/bin/sh\n');
    await chmod(join(dir, 'helm'), 0o755);
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('GIVEN SLUICE_HELM WHEN looked up THEN it wins; a missing one is not replaced by PATH', async () => {
    expect(await findHelm({ SLUICE_HELM: join(dir, 'helm'), PATH: '' }, '/nonexistent')).toBe(
      join(dir, 'helm'),
    );
    expect(await findHelm({ SLUICE_HELM: join(dir, 'nope'), PATH: dir }, '/nonexistent')).toBeUndefined();
  });
  it('GIVEN no SLUICE_HELM WHEN looked up THEN bin/helm of the package, else PATH, else nothing', async () => {
    await mkdir(join(dir, 'pkg', 'bin'), { recursive: true });
    await writeFile(join(dir, 'pkg', 'bin', 'helm'), '#!/bin/sh\n');
    await chmod(join(dir, 'pkg', 'bin', 'helm'), 0o755);
    expect(await findHelm({ PATH: dir }, join(dir, 'pkg'))).toBe(join(dir, 'pkg', 'bin', 'helm'));
    expect(await findHelm({ PATH: `/nonexistent:${dir}` }, '/nonexistent')).toBe(join(dir, 'helm'));
    expect(await findHelm({ PATH: '' }, '/nonexistent')).toBeUndefined();
  });
});
