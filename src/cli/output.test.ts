import { parse } from 'yaml';
import { formatObjects, parseOutputFormat } from './output.js';
import { UsageError } from './usage.js';

const obj = (name: string) => ({
  apiVersion: 'sluice.dev/v1',
  kind: 'Cluster',
  metadata: { name, labels: { env: 'prod' }, managedFields: [{ manager: 'kubectl' }] },
  status: { version: 'v1.36.3' },
});

describe('parseOutputFormat', () => {
  it.each(['table', 'json', 'yaml'])('GIVEN %s THEN accepted', (f) => {
    expect(parseOutputFormat(f, 'usage')).toBe(f);
  });

  it('GIVEN anything else THEN a usage error listing the formats', () => {
    expect(() => parseOutputFormat('wide', 'usage')).toThrow(UsageError);
    expect(() => parseOutputFormat('wide', 'usage')).toThrow(
      '-o must be one of table, json, yaml, got "wide"',
    );
  });
});

describe('formatObjects', () => {
  it('GIVEN one object asked for by name THEN the object itself, without managedFields', () => {
    const out = JSON.parse(formatObjects([obj('a')], 'json', true)) as Record<string, unknown>;
    expect(out).toEqual({
      apiVersion: 'sluice.dev/v1',
      kind: 'Cluster',
      metadata: { name: 'a', labels: { env: 'prod' } },
      status: { version: 'v1.36.3' },
    });
  });

  it('GIVEN a listing THEN a v1 List, in YAML too', () => {
    const out = parse(formatObjects([obj('a'), obj('b')], 'yaml', false)) as {
      kind: string;
      items: unknown[];
    };
    expect(out.kind).toBe('List');
    expect(out.items).toHaveLength(2);
    expect(JSON.stringify(out)).not.toContain('managedFields');
  });

  it('GIVEN an empty listing THEN an empty List', () => {
    expect(JSON.parse(formatObjects([], 'json', false))).toEqual({
      apiVersion: 'v1',
      kind: 'List',
      metadata: { resourceVersion: '' },
      items: [],
    });
  });

  it('GIVEN input THEN it is not mutated', () => {
    const o = obj('a');
    formatObjects([o], 'yaml', true);
    expect(o.metadata.managedFields).toHaveLength(1);
  });
});
