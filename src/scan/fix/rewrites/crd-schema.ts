/**
 * Structural repairs of a CRD's OpenAPI v3 schema for `apiextensions.k8s.io/v1`, which accepts
 * only structural schemas (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/
 * custom-resource-definitions/#specifying-a-structural-schema). Only repairs that cannot change
 * which objects validate are made; the rest are FLAGs naming the schema path:
 *
 * - `type: object` where a node has `properties` or `additionalProperties` and no type (a node
 *   with properties only constrains objects anyway), `type: array` where it has `items`;
 * - a type from an `enum` whose values all have one JSON type;
 * - `x-kubernetes-int-or-string: true` on the `anyOf`/`oneOf` [integer, string] pattern;
 * - `x-kubernetes-*` extensions found inside `allOf`/`anyOf`/`oneOf`/`not` (forbidden there)
 *   moved to the enclosing node, and `description` dropped there (it never validated);
 * - `uniqueItems: true` on a list of scalars becomes `x-kubernetes-list-type: set` (same meaning).
 */
import { isObject, type FieldPath, type Flag, type JsonObject, type Note } from '../types.js';

export interface SchemaRepair {
  readonly schema: JsonObject;
  readonly notes: Note[];
  readonly flags: Flag[];
}

const JUNCTORS = ['allOf', 'anyOf', 'oneOf'] as const;
const FORBIDDEN = ['$ref', 'definitions', 'dependencies', 'id', 'patternProperties', 'additionalItems'];
const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);

/** The repaired copy of `schema` (an `openAPIV3Schema`), with what was done and what could not be. */
export function repairSchema(schema: unknown, path: FieldPath): SchemaRepair {
  const notes: Note[] = [];
  const flags: Flag[] = [];
  if (!isObject(schema)) {
    flags.push({ path, reason: 'openAPIV3Schema is not an object' });
    return { schema: {}, notes, flags };
  }
  const out = repairNode(structuredClone(schema), path, { notes, flags }, true);
  const metadata = isObject(out.properties) ? out.properties.metadata : undefined;
  if (isObject(metadata)) checkMetadata(metadata, [...path, 'properties', 'metadata'], flags);
  return { schema: out, notes, flags };
}

interface Sink {
  notes: Note[];
  flags: Flag[];
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

const isIntOrStringPattern = (branches: unknown): boolean =>
  Array.isArray(branches) &&
  branches.length === 2 &&
  branches.every((b) => isObject(b) && Object.keys(b).length === 1) &&
  new Set(branches.map((b) => (b as JsonObject).type)).size === 2 &&
  branches.some((b) => (b as JsonObject).type === 'integer') &&
  branches.some((b) => (b as JsonObject).type === 'string');

function repairNode(node: JsonObject, path: FieldPath, sink: Sink, root = false): JsonObject {
  for (const key of FORBIDDEN) {
    if (key in node)
      sink.flags.push({ path: [...path, key], reason: `${key} is not allowed in a v1 schema` });
  }
  if (node['x-kubernetes-int-or-string'] === true && 'type' in node) {
    delete node.type;
    sink.notes.push({ path, text: 'type removed: x-kubernetes-int-or-string must not have a type' });
  }

  if (
    !('type' in node) &&
    !('x-kubernetes-int-or-string' in node) &&
    (isIntOrStringPattern(node.anyOf) || isIntOrStringPattern(node.oneOf))
  ) {
    node['x-kubernetes-int-or-string'] = true;
    sink.notes.push({ path, text: 'x-kubernetes-int-or-string: true added (anyOf integer|string)' });
  }
  // Junctors next: extensions moved out of them may give this node what it needs.
  for (const j of JUNCTORS) {
    if (Array.isArray(node[j])) {
      (node[j] as unknown[]).forEach((b, i) => cleanJunction(b, node, [...path, j, i], sink));
    }
  }
  if (isObject(node.not)) cleanJunction(node.not, node, [...path, 'not'], sink);
  dropTrivialJunctors(node, path, sink);

  if (isObject(node.properties)) {
    if ('additionalProperties' in node) {
      sink.flags.push({
        path,
        reason: 'properties and additionalProperties are mutually exclusive in a v1 schema: choose one',
      });
    }
    for (const [name, sub] of Object.entries(node.properties)) {
      if (isObject(sub)) node.properties[name] = repairNode(sub, [...path, 'properties', name], sink);
    }
  }
  if (node.additionalProperties === false) {
    sink.flags.push({
      path: [...path, 'additionalProperties'],
      reason:
        'additionalProperties: false is not allowed in v1 (v1 prunes unknown fields instead of rejecting them)',
    });
  } else if (isObject(node.additionalProperties)) {
    node.additionalProperties = repairNode(
      node.additionalProperties,
      [...path, 'additionalProperties'],
      sink,
    );
  }
  if (Array.isArray(node.items)) {
    sink.flags.push({
      path: [...path, 'items'],
      reason: 'items must be one schema in v1, not a list (tuple)',
    });
  } else if (isObject(node.items)) {
    node.items = repairNode(node.items, [...path, 'items'], sink);
  }

  if (node.uniqueItems === true) {
    const itemType = isObject(node.items) ? node.items.type : undefined;
    if (typeof itemType === 'string' && SCALAR_TYPES.has(itemType)) {
      delete node.uniqueItems;
      node['x-kubernetes-list-type'] = 'set';
      sink.notes.push({ path, text: 'uniqueItems: true → x-kubernetes-list-type: set' });
    } else {
      sink.flags.push({
        path: [...path, 'uniqueItems'],
        reason: 'uniqueItems: true is not allowed in v1; x-kubernetes-list-type: set only fits scalar items',
      });
    }
  }

  if (!('type' in node)) inferType(node, path, sink, root);
  else if (root && node.type !== 'object') {
    sink.flags.push({ path: [...path, 'type'], reason: `the root of a CRD schema must be type: object` });
  }
  return node;
}

/**
 * After extensions left them, junctor branches may be empty (`{}` matches anything): an `anyOf`
 * with an empty branch always passes and an empty `allOf` branch adds nothing, so both go.
 */
function dropTrivialJunctors(node: JsonObject, path: FieldPath, sink: Sink): void {
  const empty = (b: unknown) => isObject(b) && Object.keys(b).length === 0;
  if (Array.isArray(node.anyOf) && node.anyOf.some(empty)) {
    delete node.anyOf;
    sink.notes.push({
      path: [...path, 'anyOf'],
      text: 'anyOf removed (a branch left empty matches anything)',
    });
  }
  if (Array.isArray(node.allOf) && node.allOf.some(empty)) {
    const rest = node.allOf.filter((b) => !empty(b));
    if (rest.length > 0) node.allOf = rest;
    else delete node.allOf;
    sink.notes.push({ path: [...path, 'allOf'], text: 'empty allOf branches removed' });
  }
}

function inferType(node: JsonObject, path: FieldPath, sink: Sink, root: boolean): void {
  const add = (type: string, why: string) => {
    // type first, where every generator and person writes it.
    const rest = { ...node };
    for (const k of Object.keys(node)) delete node[k];
    Object.assign(node, { type }, rest);
    sink.notes.push({ path, text: `type: ${type} added (${why})` });
  };
  if (root) return add('object', 'a CRD schema root is an object');
  if ('properties' in node || 'additionalProperties' in node) return add('object', 'it has properties');
  if ('items' in node) return add('array', 'it has items');
  if (node['x-kubernetes-int-or-string'] === true || node['x-kubernetes-preserve-unknown-fields'] === true)
    return;
  if (Array.isArray(node.enum) && node.enum.length > 0) {
    const types = new Set(node.enum.map(jsonType));
    const only = [...types][0];
    if (types.size === 1 && only && (SCALAR_TYPES.has(only) || only === 'object')) {
      return add(only, 'every enum value is one');
    }
  }
  sink.flags.push({
    path,
    reason:
      'no type and none can be inferred: v1 needs a type (or x-kubernetes-int-or-string / x-kubernetes-preserve-unknown-fields)',
  });
}

/**
 * A branch of a junctor may only constrain values: no type, default, nullable,
 * additionalProperties or extensions, and only properties the enclosing node also declares.
 */
function cleanJunction(branch: unknown, outer: JsonObject, path: FieldPath, sink: Sink): void {
  if (!isObject(branch)) return;
  for (const key of Object.keys(branch)) {
    if (key.startsWith('x-kubernetes-')) {
      if (!(key in outer)) {
        outer[key] = branch[key];
        sink.notes.push({
          path: [...path, key],
          text: `${key} moved out of the junctor to the enclosing schema`,
        });
      } else if (outer[key] === branch[key]) {
        sink.notes.push({
          path: [...path, key],
          text: `${key} removed (already set on the enclosing schema)`,
        });
      } else {
        sink.flags.push({
          path: [...path, key],
          reason: `${key} inside a junctor conflicts with the enclosing schema's value`,
        });
        continue;
      }
      delete branch[key];
    } else if (key === 'description') {
      delete branch[key];
      sink.notes.push({ path: [...path, key], text: 'description removed (not allowed inside a junctor)' });
    }
  }
  const intOrString = isObject(outer) && outer['x-kubernetes-int-or-string'] === true;
  for (const key of ['type', 'default', 'nullable', 'additionalProperties']) {
    if (key in branch && !(key === 'type' && intOrString)) {
      sink.flags.push({
        path: [...path, key],
        reason: `${key} is not allowed inside allOf/anyOf/oneOf/not in a v1 schema`,
      });
    }
  }
  if (isObject(branch.properties)) {
    const declared = isObject(outer.properties) ? outer.properties : {};
    for (const [name, sub] of Object.entries(branch.properties)) {
      if (!(name in declared)) {
        sink.flags.push({
          path: [...path, 'properties', name],
          reason: `property ${name} inside a junctor is not declared in the enclosing schema's properties`,
        });
      } else if (isObject(sub) && isObject(declared[name])) {
        cleanJunction(sub, declared[name] as JsonObject, [...path, 'properties', name], sink);
      }
    }
  }
  if (isObject(branch.items) && isObject(outer.items)) {
    cleanJunction(branch.items, outer.items, [...path, 'items'], sink);
  }
  for (const j of JUNCTORS) {
    if (Array.isArray(branch[j])) {
      (branch[j] as unknown[]).forEach((b, i) => cleanJunction(b, outer, [...path, j, i], sink));
    }
  }
}

/** v1 allows only `type: object` and restrictions of `name`/`generateName` under `metadata`. */
function checkMetadata(metadata: JsonObject, path: FieldPath, flags: Flag[]): void {
  const props = isObject(metadata.properties) ? Object.keys(metadata.properties) : [];
  const extra = props.filter((p) => p !== 'name' && p !== 'generateName');
  const otherKeys = Object.keys(metadata).filter((k) => k !== 'type' && k !== 'properties');
  if (extra.length > 0 || otherKeys.length > 0) {
    flags.push({
      path,
      reason: `the metadata schema may only restrict name and generateName in v1 (found ${[...extra, ...otherKeys].join(', ')})`,
    });
  }
}
