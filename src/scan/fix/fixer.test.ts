import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixExitCode, FixExit, formatFixReport, looksLikeTemplate, runFix } from './fixer.js';

const FIXTURES = join(process.cwd(), 'test/fixtures/fix');
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sluice-fix-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const cronjob =
  'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: c\nspec:\n  schedule: "@daily"\n';

describe('looksLikeTemplate', () => {
  it.each([
    ['apiVersion: {{ .Values.v }}\nkind: Ingress\n', true],
    ['apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}-x\n', true],
    ['apiVersion: v1\nkind: ConfigMap\ndata:\n  alert: "{{ $labels.instance }} is down"\n', false],
    ['apiVersion: v1\nkind: ConfigMap\n', false],
  ])('GIVEN %j THEN %s', (text, expected) => expect(looksLikeTemplate(text)).toBe(expected));
});

describe('runFix', () => {
  it('GIVEN a manifest with Go template text inside a string THEN it is still fixed, the string kept', async () => {
    const text = `${cronjob}  jobTemplate:\n    metadata:\n      annotations:\n        summary: "{{ $labels.job }} failed"\n`;
    await writeFile(join(dir, 'c.yaml'), text);
    const report = await runFix([dir], '1.29', true);
    expect(fixExitCode(report)).toBe(FixExit.Fixed);
    expect(await readFile(join(dir, 'c.yaml'), 'utf8')).toBe(text.replace('batch/v1beta1', 'batch/v1'));
  });

  it('GIVEN a chart THEN templates and values are FLAGs (exit 3) and nothing in the chart is written', async () => {
    await cp(join(FIXTURES, 'flag', 'chart'), join(dir, 'chart'), { recursive: true });
    const report = await runFix([dir], '1.29', true);
    expect(fixExitCode(report)).toBe(FixExit.Flagged);
    expect(report.written).toEqual([]);
    const lines = formatFixReport(report)
      .split('\n')
      .filter((l) => l.startsWith('FLAG'));
    expect(lines).toHaveLength(4);
    expect(lines.join('\n')).toMatch(/values\.yaml:3 .*the value lives in values\.yaml/);
  });

  it('GIVEN a dry run THEN the diff is printed, exit 1, and nothing is written', async () => {
    await writeFile(join(dir, 'c.yaml'), cronjob);
    const report = await runFix([dir], '1.29', false);
    expect(fixExitCode(report)).toBe(FixExit.Fixed);
    const text = formatFixReport(report);
    expect(text).toMatch(/^FIXED .*c\.yaml:1 CronJob c batch\/v1beta1 → batch\/v1 \(removed in 1\.25\)$/m);
    expect(text).toContain('-apiVersion: batch/v1beta1\n+apiVersion: batch/v1');
    expect(text).toContain('not written (use --write)');
    expect(await readFile(join(dir, 'c.yaml'), 'utf8')).toBe(cronjob);
  });

  it('GIVEN --write over the rewrite fixtures THEN files are written and a second run finds nothing (exit 0)', async () => {
    await cp(join(FIXTURES, 'rewrite'), join(dir, 'rewrite'), { recursive: true });
    const first = await runFix([dir], '1.29', true);
    expect(fixExitCode(first)).toBe(FixExit.Fixed);
    expect(first.written.length).toBeGreaterThan(10);
    const second = await runFix([dir], '1.29', false);
    expect(second.files.flatMap((f) => f.objects)).toEqual([]);
    expect(fixExitCode(second)).toBe(FixExit.Clean);
  });

  it('GIVEN a FLAG next to a fix THEN exit 3 and the fixable file is still fixed', async () => {
    await writeFile(join(dir, 'c.yaml'), cronjob);
    await cp(join(FIXTURES, 'flag', 'pdb-empty-selector.yaml'), join(dir, 'pdb.yaml'));
    const report = await runFix([dir], '1.29', true);
    expect(fixExitCode(report)).toBe(FixExit.Flagged);
    expect(formatFixReport(report)).toMatch(
      /^FLAG {2}.*pdb\.yaml:7 PodDisruptionBudget guards-nothing .*spec\.selector: an empty selector/m,
    );
    expect(await readFile(join(dir, 'c.yaml'), 'utf8')).toContain('batch/v1\n');
  });

  it('GIVEN --write and an OLM bundle among the changes THEN refused, exit 2, and NOTHING is written anywhere', async () => {
    await writeFile(join(dir, 'c.yaml'), cronjob);
    await cp(join(FIXTURES, 'flag', 'olm-bundle'), join(dir, 'bundle'), { recursive: true });
    const before = await readFile(join(dir, 'bundle/manifests/crd.yaml'), 'utf8');
    const report = await runFix([dir], '1.29', true);
    expect(fixExitCode(report)).toBe(FixExit.Error);
    expect(report.refused).toContain('is an OLM bundle');
    expect(formatFixReport(report)).toContain('+apiVersion: apiextensions.k8s.io/v1');
    expect(await readFile(join(dir, 'bundle/manifests/crd.yaml'), 'utf8')).toBe(before);
    expect(await readFile(join(dir, 'c.yaml'), 'utf8')).toBe(cronjob);
  });

  it('GIVEN --bundle-out THEN the bundle is copied there fixed and the published one is untouched', async () => {
    await cp(join(FIXTURES, 'flag', 'olm-bundle'), join(dir, 'bundle'), { recursive: true });
    const before = await readFile(join(dir, 'bundle/manifests/crd.yaml'), 'utf8');
    const report = await runFix([join(dir, 'bundle')], '1.29', true, { bundleOut: join(dir, 'bundle-2') });
    expect(report.refused).toBeUndefined();
    expect(await readFile(join(dir, 'bundle/manifests/crd.yaml'), 'utf8')).toBe(before);
    expect(await readFile(join(dir, 'bundle-2/manifests/crd.yaml'), 'utf8')).toContain(
      'apiextensions.k8s.io/v1\n',
    );
    expect(await readFile(join(dir, 'bundle-2/metadata/annotations.yaml'), 'utf8')).toContain('registry+v1');
  });

  it('GIVEN --write and a file with invalid YAML THEN exit 2 with file:line, and nothing is written', async () => {
    await writeFile(join(dir, 'c.yaml'), cronjob);
    await writeFile(join(dir, 'bad.yaml'), 'a: [\n');
    const report = await runFix([dir], '1.29', true);
    expect(fixExitCode(report)).toBe(FixExit.Error);
    expect(formatFixReport(report)).toMatch(/^ERROR .*bad\.yaml:\d+: invalid YAML/m);
    expect(await readFile(join(dir, 'c.yaml'), 'utf8')).toBe(cronjob);
  });

  it('GIVEN a path that does not exist THEN an error naming it', async () => {
    await expect(runFix([join(dir, 'nope')], '1.29', false)).rejects.toThrow(
      /nope: no such file or directory/,
    );
  });
});
