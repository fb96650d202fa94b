import { repairSchema } from './crd-schema.js';

const at = ['s'];
const paths = (xs: ReadonlyArray<{ path: readonly (string | number)[] }>) => xs.map((x) => x.path.join('.'));

describe('repairSchema (structural repairs that cannot change meaning)', () => {
  it.each([
    ['a root without type', {}, { type: 'object' }],
    [
      'properties without type',
      { type: 'object', properties: { a: { properties: {} } } },
      { type: 'object', properties: { a: { type: 'object', properties: {} } } },
    ],
    [
      'items without type',
      { type: 'object', properties: { a: { items: { type: 'string' } } } },
      { type: 'object', properties: { a: { type: 'array', items: { type: 'string' } } } },
    ],
    [
      'a string enum',
      { type: 'object', properties: { a: { enum: ['x', 'y'] } } },
      { type: 'object', properties: { a: { type: 'string', enum: ['x', 'y'] } } },
    ],
    [
      'anyOf integer|string',
      { type: 'object', properties: { a: { anyOf: [{ type: 'integer' }, { type: 'string' }] } } },
      {
        type: 'object',
        properties: {
          a: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
        },
      },
    ],
    [
      'uniqueItems on scalars',
      { type: 'object', properties: { a: { type: 'array', uniqueItems: true, items: { type: 'string' } } } },
      {
        type: 'object',
        properties: { a: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' } },
      },
    ],
    [
      'an extension inside a junctor',
      {
        type: 'object',
        properties: {
          a: { type: 'object', allOf: [{ 'x-kubernetes-preserve-unknown-fields': true, description: 'd' }] },
        },
      },
      { type: 'object', properties: { a: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
    ],
    [
      'int-or-string with a type',
      { type: 'object', properties: { a: { type: 'string', 'x-kubernetes-int-or-string': true } } },
      { type: 'object', properties: { a: { 'x-kubernetes-int-or-string': true } } },
    ],
  ])('GIVEN %s THEN repaired', (_, input, expected) => {
    const r = repairSchema(input, at);
    expect(r.flags).toEqual([]);
    expect(r.schema).toEqual(expected);
    expect(r.notes.length).toBeGreaterThan(0);
  });

  it.each([
    [
      'no type and nothing to infer from',
      { type: 'object', properties: { a: { description: 'x' } } },
      ['s.properties.a'],
    ],
    [
      'a type inside oneOf',
      { type: 'object', properties: { a: { type: 'object', oneOf: [{ type: 'string' }] } } },
      ['s.properties.a.oneOf.0.type'],
    ],
    [
      'additionalProperties: false',
      { type: 'object', additionalProperties: false },
      ['s.additionalProperties'],
    ],
    [
      'properties and additionalProperties',
      { type: 'object', properties: {}, additionalProperties: { type: 'string' } },
      ['s'],
    ],
    [
      'a tuple items list',
      { type: 'object', properties: { a: { type: 'array', items: [{ type: 'string' }] } } },
      ['s.properties.a.items'],
    ],
    ['$ref', { type: 'object', properties: { a: { $ref: '#/x', type: 'object' } } }, ['s.properties.a.$ref']],
    [
      'uniqueItems on objects',
      { type: 'object', properties: { a: { type: 'array', uniqueItems: true, items: { type: 'object' } } } },
      ['s.properties.a.uniqueItems'],
    ],
    [
      'metadata beyond name',
      {
        type: 'object',
        properties: { metadata: { type: 'object', properties: { labels: { type: 'object' } } } },
      },
      ['s.properties.metadata'],
    ],
    ['a root that is not an object', { type: 'string' }, ['s.type']],
    [
      'a junctor property not declared outside',
      {
        type: 'object',
        properties: { a: { type: 'object', properties: {}, anyOf: [{ properties: { b: {} } }] } },
      },
      ['s.properties.a.anyOf.0.properties.b'],
    ],
  ])('GIVEN %s THEN FLAG at the schema path', (_, input, flagged) => {
    expect(paths(repairSchema(input, at).flags)).toEqual(flagged);
  });
});
