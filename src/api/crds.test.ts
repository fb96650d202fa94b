import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { DURATION_PATTERN } from './common.js';
import { allCrds, API_VERSION, GROUP, kindInfo, SLUICE_KINDS, VERSION, type SluiceKind } from './crds.js';
import { CRD_DIR, crdFileName, GENERATED_HEADER, renderCrdYaml } from './generate-crds.js';
import type { CustomResourceDefinition, JsonSchema } from './schema.js';

/**
 * The rules the apiserver applies to a structural schema (KEP-1002, "Specifying a structural
 * schema"), plus Sluice's own: every field described (kubectl explain), every list bounded.
 * Returns one line per violation, naming the schema path.
 */
function structuralErrors(node: JsonSchema, path: string, isField: boolean): string[] {
  const errors: string[] = [];
  const err = (msg: string) => errors.push(`${path}: ${msg}`);
  const intOrString = node['x-kubernetes-int-or-string'] === true;

  if (isField && !node.description) err('no description');
  if (intOrString) {
    if (node.type !== undefined) err('x-kubernetes-int-or-string must not set type');
    if (JSON.stringify(node.anyOf) !== JSON.stringify([{ type: 'integer' }, { type: 'string' }])) {
      err('x-kubernetes-int-or-string needs anyOf [{type: integer}, {type: string}]');
    }
  } else {
    if (!node.type) err('no type');
    if (node.anyOf) err('anyOf is only used for x-kubernetes-int-or-string');
  }
  if (node.properties && node.additionalProperties) err('both properties and additionalProperties');
  if (node.type !== 'object' && (node.properties || node.additionalProperties || node.required)) {
    err('properties/additionalProperties/required on a non-object');
  }
  for (const key of node.required ?? [])
    if (!node.properties?.[key]) err(`required "${key}" is not a property`);
  if (node.type === 'array') {
    if (!node.items) err('array without items');
    if (node.maxItems === undefined) err('array without maxItems');
  } else if (node.items) err('items on a non-array');

  const listType = node['x-kubernetes-list-type'];
  if (listType === 'map') {
    for (const key of node['x-kubernetes-list-map-keys'] ?? []) {
      const keyNode = node.items?.properties?.[key];
      if (!keyNode) err(`list-map key "${key}" is not an item property`);
      else if (!node.items?.required?.includes(key) && keyNode.default === undefined) {
        err(`list-map key "${key}" must be required or defaulted`);
      }
    }
  }
  if (listType === 'set' && node.items?.type !== 'string' && node.items?.type !== 'integer')
    err('set of non-scalars');

  const scalarOk = (v: unknown, type: JsonSchema['type']): boolean =>
    type === 'integer'
      ? Number.isInteger(v)
      : type === 'object'
        ? typeof v === 'object' && v !== null && !Array.isArray(v)
        : typeof v === type;
  for (const v of node.enum ?? [])
    if (!scalarOk(v, node.type)) err(`enum value ${JSON.stringify(v)} is not a ${node.type}`);
  if (node.default !== undefined) {
    if (!scalarOk(node.default, node.type))
      err(`default ${JSON.stringify(node.default)} is not a ${node.type}`);
    if (node.enum && !node.enum.includes(node.default as string))
      err(`default ${JSON.stringify(node.default)} not in enum`);
    if (node.pattern && !new RegExp(node.pattern).test(String(node.default)))
      err(`default does not match pattern`);
  }
  if (node.pattern) {
    try {
      new RegExp(node.pattern);
    } catch {
      err(`pattern ${node.pattern} does not compile`);
    }
  }
  for (const r of node['x-kubernetes-validations'] ?? []) {
    if (!r.message) err(`rule "${r.rule}" has no message`);
    if (r.fieldPath !== undefined && typeof columnTarget(node, r.fieldPath) === 'string')
      err(`rule fieldPath ${r.fieldPath} is not a property`);
  }

  for (const [name, child] of Object.entries(node.properties ?? {})) {
    // The apiserver validates metadata itself and allows nothing but `type: object` for it.
    const isRootMetadata = name === 'metadata' && !path.includes('.');
    errors.push(...structuralErrors(child, `${path}.${name}`, !isRootMetadata));
  }
  if (node.items) errors.push(...structuralErrors(node.items, `${path}[]`, false));
  if (node.additionalProperties)
    errors.push(...structuralErrors(node.additionalProperties, `${path}{}`, false));
  return errors;
}

const rootSchema = (crd: CustomResourceDefinition): JsonSchema =>
  crd.spec.versions[0]!.schema.openAPIV3Schema;

/** The schema node a JSONPath (printer column, rule fieldPath) points at (`[...]` steps into list items), or a reason why not. */
function columnTarget(root: JsonSchema, jsonPath: string): JsonSchema | string {
  let node: JsonSchema | undefined = root;
  for (const segment of jsonPath
    .replace(/\[[^\]]*\]/g, '.[]')
    .split('.')
    .slice(1)) {
    node = segment === '[]' ? node?.items : node?.properties?.[segment];
    if (!node) return `${jsonPath}: no schema at "${segment}"`;
  }
  return node;
}

describe('CRD manifests in charts/sluice/crds', () => {
  it('GIVEN the TypeScript definitions WHEN rendered THEN they equal the checked-in YAML (else run `make crds`)', () => {
    const expected = new Map(allCrds().map((crd) => [crdFileName(crd), renderCrdYaml(crd)]));
    const onDisk = readdirSync(CRD_DIR).filter((f) => f.endsWith('.yaml'));
    const drift = [
      ...[...expected].filter(
        ([file, yaml]) => !onDisk.includes(file) || readFileSync(join(CRD_DIR, file), 'utf8') !== yaml,
      ),
      ...onDisk.filter((file) => !expected.has(file)).map((file) => [file]),
    ].map(([file]) => `charts/sluice/crds/${file} is out of date with src/api: run \`make crds\``);
    expect(drift).toEqual([]);
  });

  it('GIVEN a rendered CRD WHEN parsed back THEN it is the same object, under the do-not-edit header', () => {
    for (const crd of allCrds()) {
      const yaml = renderCrdYaml(crd);
      expect(yaml.startsWith(GENERATED_HEADER)).toBe(true);
      expect(parse(yaml)).toEqual(crd);
    }
  });

  it('GIVEN the same definitions WHEN rendered twice THEN the bytes are identical', () => {
    expect(allCrds().map(renderCrdYaml)).toEqual(allCrds().map(renderCrdYaml));
  });
});

describe('allCrds', () => {
  const crds = allCrds();

  it('returns one apiextensions.k8s.io/v1 CRD per kind, served and stored as sluice.dev/v1 with the status subresource', () => {
    expect(crds.map((c) => c.spec.names.kind)).toEqual([
      'GitSource',
      'Cluster',
      'PlacementRule',
      'Delivery',
      'CanaryRelease',
      'MetricTemplate',
    ]);
    for (const crd of crds) {
      expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
      expect(crd.metadata.name).toBe(`${crd.spec.names.plural}.${GROUP}`);
      expect(crd.spec.group).toBe('sluice.dev');
      expect(crd.spec.names.categories).toEqual(['sluice']);
      expect(crd.spec.names.listKind).toBe(`${crd.spec.names.kind}List`);
      // CanaryRelease also serves v1alpha1 (converted by the webhook); v1 is always first and stored.
      expect(crd.spec.versions.map((v) => v.name)).toEqual(
        crd.spec.names.kind === 'CanaryRelease' ? [VERSION, 'v1alpha1'] : [VERSION],
      );
      expect(crd.spec.versions.filter((v) => v.storage)).toHaveLength(1);
      expect(crd.spec.conversion?.strategy ?? 'None').toBe(
        crd.spec.names.kind === 'CanaryRelease' ? 'Webhook' : 'None',
      );
      expect(crd.spec.versions[0]).toMatchObject({
        name: VERSION,
        served: true,
        storage: true,
        subresources: { status: {} },
      });
    }
  });

  it('gives every kind distinct short names', () => {
    const shortNames = crds.flatMap((c) => c.spec.names.shortNames);
    expect(new Set(shortNames).size).toBe(shortNames.length);
    expect(shortNames).not.toContain('cluster');
    expect(shortNames).not.toContain('canary');
  });

  it('returns fresh objects: editing one does not change the next call', () => {
    crds[0]!.spec.names.shortNames.push('mutated');
    expect(allCrds()[0]!.spec.names.shortNames).not.toContain('mutated');
  });

  it.each(SLUICE_KINDS.map((k) => [k.kind]))(
    '%s has a structural, fully described, bounded schema',
    (kind) => {
      const crd = crds.find((c) => c.spec.names.kind === kind)!;
      const root = rootSchema(crd);
      expect(root.properties?.metadata).toEqual({ type: 'object' });
      expect(root.required).toEqual(['spec']);
      expect(structuralErrors(root, kind, true)).toEqual([]);
    },
  );

  it('GIVEN a schema with the mistakes the apiserver rejects WHEN checked THEN each is reported', () => {
    const bad: JsonSchema = {
      type: 'object',
      description: 'x',
      properties: {
        untyped: { description: 'no type' },
        both: { type: 'object', description: 'd', properties: {}, additionalProperties: { type: 'string' } },
        unbounded: { type: 'array', description: 'd', items: { type: 'string' } },
        undescribed: { type: 'string' },
        badDefault: { type: 'string', description: 'd', enum: ['a'], default: 'b' },
      },
      required: ['missing'],
    };
    const errors = structuralErrors(bad, 'bad', true);
    expect(errors).toEqual(
      expect.arrayContaining([
        'bad: required "missing" is not a property',
        'bad.untyped: no type',
        'bad.both: both properties and additionalProperties',
        'bad.unbounded: array without maxItems',
        'bad.undescribed: no description',
        'bad.badDefault: default "b" not in enum',
      ]),
    );
  });
});

describe('printer columns', () => {
  const expected: Record<SluiceKind, string[]> = {
    GitSource: ['URL', 'Revision', 'Ready', 'Message', 'Age'],
    Cluster: ['Available', 'Version', 'Message', 'Age'],
    PlacementRule: ['Clusters', 'Ready', 'Message', 'Age'],
    Delivery: ['Revision', 'Ready', 'Clusters', 'Message', 'Age'],
    CanaryRelease: ['Phase', 'Weight', 'Step', 'Message', 'Age'],
    MetricTemplate: ['Provider', 'Address', 'Age'],
  };

  it.each(Object.entries(expected))(
    '%s shows %j, each pointing at a schema field of its type',
    (kind, names) => {
      const crd = allCrds().find((c) => c.spec.names.kind === kind)!;
      const columns = crd.spec.versions[0]!.additionalPrinterColumns;
      expect(columns.map((c) => c.name)).toEqual(names);
      for (const col of columns) {
        if (col.jsonPath === '.metadata.creationTimestamp') {
          expect(col.type).toBe('date');
          continue;
        }
        const target = columnTarget(rootSchema(crd), col.jsonPath);
        expect(typeof target === 'string' ? target : target.type).toBe(col.type);
      }
    },
  );

  it('reads Ready from the conditions list the way kubectl wait does', () => {
    const gitSource = allCrds().find((c) => c.spec.names.kind === 'GitSource')!;
    expect(
      gitSource.spec.versions[0]!.additionalPrinterColumns.find((c) => c.name === 'Ready')?.jsonPath,
    ).toBe('.status.conditions[?(@.type=="Ready")].status');
  });
});

describe('kindInfo', () => {
  it.each([
    ['GitSource', 'gitsources', 'Namespaced'],
    ['Cluster', 'clusters', 'Cluster'],
    ['PlacementRule', 'placementrules', 'Namespaced'],
    ['Delivery', 'deliveries', 'Namespaced'],
    ['CanaryRelease', 'canaryreleases', 'Namespaced'],
    ['MetricTemplate', 'metrictemplates', 'Namespaced'],
  ] as const)('%s → plural %s, scope %s', (kind, plural, scope) => {
    expect(kindInfo(kind)).toMatchObject({
      apiVersion: API_VERSION,
      kind,
      plural,
      scope,
      namespaced: scope === 'Namespaced',
      crdName: `${plural}.sluice.dev`,
    });
  });

  it('throws for a kind Sluice does not define, listing the ones it does', () => {
    expect(() => kindInfo('Canary' as SluiceKind)).toThrow(
      /unknown Sluice kind "Canary"; known: GitSource, Cluster/,
    );
  });
});

describe('DURATION_PATTERN', () => {
  const re = new RegExp(DURATION_PATTERN);
  it.each(['30s', '5m', '1h30m', '1.5h', '500ms', '0s'])('accepts %s', (d) => expect(re.test(d)).toBe(true));
  it.each(['', '5', '5 minutes', '1d', '-1s', '1us', 'm'])('rejects %j', (d) =>
    expect(re.test(d)).toBe(false),
  );
});
