/**
 * CustomResourceDefinition `apiextensions.k8s.io/v1beta1 → v1` (v1beta1 removed in 1.22).
 *
 * What moves: `version` → `versions[]` (served, storage); the top-level `validation`,
 * `subresources` and `additionalPrinterColumns` into every version that does not have its own
 * (v1 has them per version only); `JSONPath` → `jsonPath`; `scope` written out (v1beta1 defaulted
 * it to Namespaced, v1 requires it); `conversion.webhookClientConfig` and
 * `conversionReviewVersions` → `conversion.webhook.{clientConfig, conversionReviewVersions}`
 * (the latter defaulted to `["v1beta1"]` in v1beta1 and is required in v1); schemas repaired to
 * be structural where that cannot change meaning (crd-schema.ts).
 *
 * FLAGs: `preserveUnknownFields` true — or absent, because v1beta1 defaults it to true while v1
 * requires false and then prunes every field the schema does not list; whether to list the
 * fields or add `x-kubernetes-preserve-unknown-fields: true` where objects are free-form is the
 * author's decision. A version without a schema, and schema problems crd-schema.ts cannot repair.
 */
import {
  isObject,
  type Flag,
  type JsonObject,
  type Manifest,
  type Move,
  type Note,
  type Rewrite,
} from '../types.js';
import { repairSchema } from './crd-schema.js';

const PER_VERSION = ['validation', 'subresources', 'additionalPrinterColumns'] as const;

function convertColumns(columns: unknown, path: (string | number)[], notes: Note[]): unknown {
  if (!Array.isArray(columns)) return columns;
  return columns.map((c, i) => {
    if (!isObject(c) || !('JSONPath' in c)) return c;
    const out: JsonObject = {};
    for (const [k, v] of Object.entries(c)) out[k === 'JSONPath' ? 'jsonPath' : k] = v;
    notes.push({ path: [...path, i, 'jsonPath'], text: 'JSONPath → jsonPath' });
    return out;
  });
}

function convertConversion(conversion: unknown, flags: Flag[], notes: Note[]): unknown {
  if (!isObject(conversion)) return conversion;
  const strategy = conversion.strategy ?? 'None';
  if (strategy === 'None') return { strategy: 'None' };
  if (strategy !== 'Webhook') {
    flags.push({
      path: ['spec', 'conversion', 'strategy'],
      reason: `unknown conversion strategy ${String(strategy)}`,
    });
    return conversion;
  }
  if (!isObject(conversion.webhookClientConfig)) {
    flags.push({
      path: ['spec', 'conversion'],
      reason: 'strategy Webhook without webhookClientConfig',
    });
    return conversion;
  }
  const reviewVersions = conversion.conversionReviewVersions ?? ['v1beta1'];
  if (conversion.conversionReviewVersions === undefined) {
    notes.push({
      path: ['spec', 'conversion', 'webhook', 'conversionReviewVersions'],
      text: 'conversionReviewVersions: ["v1beta1"] written out (the v1beta1 default; v1 requires it)',
    });
  }
  return {
    strategy: 'Webhook',
    webhook: { clientConfig: conversion.webhookClientConfig, conversionReviewVersions: reviewVersions },
  };
}

function rewriteCrd(obj: Manifest): ReturnType<Rewrite['rewrite']> {
  const flags: Flag[] = [];
  const notes: Note[] = [];
  const moves: Move[] = [];
  const spec = isObject(obj.spec) ? structuredClone(obj.spec) : undefined;
  if (!spec) return { ok: false, flags: [{ path: ['spec'], reason: 'a CRD without spec' }] };

  if (spec.preserveUnknownFields !== false) {
    flags.push({
      path: ['spec', 'preserveUnknownFields'],
      reason:
        spec.preserveUnknownFields === true
          ? 'preserveUnknownFields: true is not allowed in v1, and false prunes every field the schema does not list: list the fields, or set x-kubernetes-preserve-unknown-fields: true where objects are free-form, then set it to false'
          : 'preserveUnknownFields is absent, and v1beta1 defaults it to true (unknown fields kept); v1 requires false and prunes every field the schema does not list: list the fields or set x-kubernetes-preserve-unknown-fields: true where needed, then write preserveUnknownFields: false',
    });
  }

  let versions: JsonObject[];
  if (Array.isArray(spec.versions) && spec.versions.length > 0) {
    versions = spec.versions.filter(isObject);
    if (typeof spec.version === 'string' && versions[0]?.name !== spec.version) {
      flags.push({ path: ['spec', 'version'], reason: 'version does not name the first entry of versions' });
    }
  } else if (typeof spec.version === 'string') {
    versions = [{ name: spec.version, served: true, storage: true }];
    notes.push({
      path: ['spec', 'versions'],
      text: `version ${spec.version} → versions[0] (served, storage)`,
    });
  } else {
    return {
      ok: false,
      flags: [{ path: ['spec', 'versions'], reason: 'neither version nor versions is set' }],
    };
  }

  versions = versions.map((v, i) => {
    const out: JsonObject = { ...v };
    for (const key of ['served', 'storage'] as const) {
      if (typeof out[key] !== 'boolean') {
        flags.push({ path: ['spec', 'versions', i, key], reason: `${key} must be set (true or false)` });
      }
    }
    const vPath = ['spec', 'versions', i];
    const move = (from: string, to: string) => {
      moves.push({ from: ['spec', from], to: [...vPath, to] });
    };
    if (spec.validation !== undefined && out.schema === undefined) {
      out.schema = spec.validation;
      move('validation', 'schema');
    }
    if (spec.subresources !== undefined && out.subresources === undefined) {
      out.subresources = spec.subresources;
      move('subresources', 'subresources');
    }
    if (spec.additionalPrinterColumns !== undefined && out.additionalPrinterColumns === undefined) {
      out.additionalPrinterColumns = spec.additionalPrinterColumns;
      move('additionalPrinterColumns', 'additionalPrinterColumns');
    }
    out.additionalPrinterColumns = convertColumns(
      out.additionalPrinterColumns,
      ['spec', 'versions', i, 'additionalPrinterColumns'],
      notes,
    );
    if (out.additionalPrinterColumns === undefined) delete out.additionalPrinterColumns;

    const schemaPath = ['spec', 'versions', i, 'schema', 'openAPIV3Schema'];
    if (!isObject(out.schema) || !isObject(out.schema.openAPIV3Schema)) {
      flags.push({
        path: ['spec', 'versions', i, 'schema'],
        reason: `version ${String(out.name)} has no schema; v1 requires a structural schema for every version`,
      });
    } else {
      const repaired = repairSchema(out.schema.openAPIV3Schema, schemaPath);
      flags.push(...repaired.flags);
      notes.push(...repaired.notes);
      out.schema = { ...out.schema, openAPIV3Schema: repaired.schema };
    }
    return out;
  });
  for (const key of PER_VERSION) {
    if (spec[key] !== undefined)
      notes.push({ path: ['spec', key], text: `spec.${key} moved into every version` });
  }

  if (flags.length > 0) return { ok: false, flags };

  // Rebuild spec in its own key order: versions where version/versions/validation stood,
  // scope after names, conversion in place.
  const out: JsonObject = {};
  const put = (k: string, v: unknown) => {
    if (!(k in out)) out[k] = v;
  };
  for (const [k, v] of Object.entries(spec)) {
    if (k === 'version' || k === 'versions' || (PER_VERSION as readonly string[]).includes(k)) {
      put('versions', versions);
    } else if (k === 'preserveUnknownFields') {
      // false is v1's only value and its default.
    } else if (k === 'conversion') {
      put('conversion', convertConversion(v, flags, notes));
    } else {
      put(k, v);
      if (k === 'names' && spec.scope === undefined) put('scope', 'Namespaced');
    }
  }
  if (!('scope' in out)) out.scope = 'Namespaced';
  if (spec.scope === undefined) {
    notes.push({
      path: ['spec', 'scope'],
      text: 'scope: Namespaced written out (the v1beta1 default; v1 requires it)',
    });
  }
  if (flags.length > 0) return { ok: false, flags };
  return {
    ok: true,
    object: { ...structuredClone(obj), apiVersion: 'apiextensions.k8s.io/v1', spec: out },
    notes,
    moves,
  };
}

export const crdRewrite: Rewrite = { to: 'apiextensions.k8s.io/v1', rewrite: rewriteCrd };
