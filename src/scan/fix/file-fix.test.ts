import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixManifestText, flagTemplateText, flagValuesText } from './file-fix.js';

const FIXTURES = join(process.cwd(), 'test/fixtures/fix');
const read = (...p: string[]) => readFileSync(join(FIXTURES, ...p), 'utf8');
const TARGET = '1.29';
const rewriteFixtures = readdirSync(join(FIXTURES, 'rewrite')).sort();
const flagFixtures = readdirSync(join(FIXTURES, 'flag'))
  .filter((f) => f.endsWith('.yaml'))
  .sort();

describe('fixManifestText over the rewrite fixtures', () => {
  it.each(rewriteFixtures)(
    'GIVEN %s THEN every object is FIXED, the text matches its snapshot, and a second run changes nothing',
    (name) => {
      const text = read('rewrite', name);
      const first = fixManifestText(text, TARGET, { json: name.endsWith('.json') });
      expect(first.problems).toEqual([]);
      expect(first.objects.length).toBeGreaterThan(0);
      expect(first.objects.map((o) => o.outcome.action)).toEqual(first.objects.map(() => 'fix'));
      expect(first.after).not.toBe(text);
      expect(first.after).toMatchSnapshot();
      const second = fixManifestText(first.after, TARGET, { json: name.endsWith('.json') });
      expect(second.objects).toEqual([]);
      expect(second.after).toBe(first.after);
    },
  );

  it('GIVEN a multi-document file THEN the untouched document is byte-identical, comments included', () => {
    const text = read('rewrite', 'ingress-extensions.yaml');
    const firstDoc = text.slice(0, text.indexOf('---'));
    const { after } = fixManifestText(text, TARGET);
    expect(after.startsWith(firstDoc)).toBe(true);
    expect(firstDoc).toContain('name: web   # the app');
    expect(after).toContain('apiVersion: networking.k8s.io/v1 # old');
  });

  it('GIVEN a CRD whose schema moves into versions[] THEN comments inside the schema move with it', () => {
    const { after } = fixManifestText(read('rewrite', 'crd-v1beta1.yaml'), TARGET);
    expect(after).toContain('# where the backup goes');
    expect(after.startsWith('# A v1beta1 CRD as hand-written')).toBe(true);
  });

  it('GIVEN objects fine at the target THEN the text is returned unchanged', () => {
    const text = 'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: x}\n';
    expect(fixManifestText(text, '1.20')).toEqual({ after: text, objects: [], problems: [] });
  });

  it('GIVEN a document that is not valid YAML THEN a problem with its line, and the other documents still judged', () => {
    const text = 'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: x}\n---\nkind: [unclosed\n';
    const r = fixManifestText(text, TARGET);
    // The parser notices the unclosed flow sequence where the text ends (line 6).
    expect(r.problems).toEqual([{ line: 6, message: expect.stringContaining('invalid YAML') }]);
    expect(r.objects.map((o) => o.kind)).toEqual(['CronJob']);
  });
});

describe('FLAG fixtures', () => {
  it.each(flagFixtures)(
    'GIVEN %s THEN at least one FLAG with a reason, and the file is left as it is',
    (name) => {
      const text = read('flag', name);
      const r = fixManifestText(text, TARGET);
      const flags = r.objects.filter((o) => o.outcome.action === 'flag');
      expect(flags.length).toBeGreaterThan(0);
      expect(r.after).toBe(text);
    },
  );

  it('GIVEN a flag on a field THEN its line is the field line', () => {
    const r = fixManifestText(read('flag', 'pdb-empty-selector.yaml'), TARGET);
    expect(r.objects[0]!.flagLines).toEqual([7]);
  });
});

describe('Helm charts: never rewritten, always said', () => {
  it('GIVEN templates THEN a literal removed apiVersion, a .Values one and a .Capabilities fallback are FLAGs', () => {
    const cron = flagTemplateText(read('flag', 'chart/templates/cronjob.yaml'), TARGET);
    expect(cron.objects.map((o) => [o.line, o.kind])).toEqual([
      [2, 'CronJob'],
      [10, 'PodDisruptionBudget'],
    ]);
    const ingress = flagTemplateText(read('flag', 'chart/templates/ingress.yaml'), TARGET);
    expect(ingress.objects).toHaveLength(1);
    const flag = ingress.objects[0]!.outcome;
    expect(flag.action === 'flag' && flag.flags[0]!.reason).toContain('values.yaml');
  });

  it('GIVEN a template for an old target THEN a served apiVersion is not flagged', () => {
    expect(
      flagTemplateText(
        'apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: {{ .Release.Name }}\n',
        '1.20',
      ).objects,
    ).toEqual([]);
  });

  it('GIVEN values.yaml THEN the removed apiVersion value is a FLAG at its line, the current one is not', () => {
    const r = flagValuesText(read('flag', 'chart/values.yaml'), TARGET);
    expect(r.objects.map((o) => [o.line, o.kind, o.apiVersion])).toEqual([
      [3, 'Ingress', 'extensions/v1beta1'],
    ]);
  });
});
