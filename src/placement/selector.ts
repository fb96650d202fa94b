/**
 * `metav1.LabelSelector`: validation with the API server's own rules and messages, and
 * matching with its semantics.
 */
import type { LabelSelector } from '../api/common.js';
import { FieldError, invalid, required } from './field-error.js';

const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const NAME_PART_MSG =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/** Why `key` is not a valid label key (a qualified name: `[prefix/]name`); empty when valid. */
export function labelKeyProblems(key: string): string[] {
  const slash = key.indexOf('/');
  const name = slash < 0 ? key : key.slice(slash + 1);
  const prefix = slash < 0 ? undefined : key.slice(0, slash);
  const problems: string[] = [];
  if (name === '') problems.push('name part must be non-empty');
  else if (name.length > 63) problems.push('name part must be no more than 63 characters');
  else if (!NAME_PART.test(name)) problems.push(NAME_PART_MSG);
  if (prefix !== undefined) {
    if (prefix === '') problems.push('prefix part must be non-empty');
    else if (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix)) {
      problems.push('prefix part must be a lowercase RFC 1123 subdomain of at most 253 characters');
    }
  }
  return problems;
}

/** True when `value` is a valid label value (empty, or ≤ 63 characters of the allowed set). */
export function isLabelValue(value: string): boolean {
  return value === '' || (value.length <= 63 && NAME_PART.test(value));
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Every problem with `selector` (as untrusted input), at paths under `path`, in the API
 * server's words: an unknown operator, `values` missing for In/NotIn or present for
 * Exists/DoesNotExist, invalid label keys and values. `null`/`undefined` is valid.
 */
export function validateLabelSelector(selector: unknown, path: string): FieldError[] {
  if (selector === undefined || selector === null) return [];
  if (!isObject(selector)) return [invalid(path, selector, 'must be an object')];
  const errors: FieldError[] = [];
  const { matchLabels, matchExpressions } = selector;

  if (matchLabels !== undefined && matchLabels !== null) {
    const at = `${path}.matchLabels`;
    if (!isObject(matchLabels)) {
      errors.push(invalid(at, matchLabels, 'must be a map of label keys to values'));
    } else {
      for (const [k, v] of Object.entries(matchLabels)) {
        for (const p of labelKeyProblems(k)) errors.push(invalid(at, k, p));
        if (typeof v !== 'string' || !isLabelValue(v)) errors.push(invalid(at, v, VALUE_MSG));
      }
    }
  }

  if (matchExpressions !== undefined && matchExpressions !== null) {
    const at = `${path}.matchExpressions`;
    if (!Array.isArray(matchExpressions)) {
      errors.push(invalid(at, matchExpressions, 'must be a list'));
      return errors;
    }
    matchExpressions.forEach((req: unknown, i) => {
      const here = `${at}[${i}]`;
      if (!isObject(req)) {
        errors.push(invalid(here, req, 'must be an object'));
        return;
      }
      const { key, operator, values } = req;
      if (typeof key !== 'string' || key === '') errors.push(required(`${here}.key`));
      else for (const p of labelKeyProblems(key)) errors.push(invalid(`${here}.key`, key, p));

      const count = Array.isArray(values) ? values.length : values === undefined || values === null ? 0 : -1;
      if (count < 0) {
        errors.push(invalid(`${here}.values`, values, 'must be a list of strings'));
      } else if (operator === 'In' || operator === 'NotIn') {
        if (count === 0)
          errors.push(required(`${here}.values`, "must be specified when `operator` is 'In' or 'NotIn'"));
      } else if (operator === 'Exists' || operator === 'DoesNotExist') {
        if (count > 0) {
          errors.push(
            new FieldError(
              `${here}.values`,
              "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            ),
          );
        }
      } else if (operator === undefined || operator === null || operator === '') {
        errors.push(required(`${here}.operator`));
      } else {
        errors.push(invalid(`${here}.operator`, operator, 'not a valid selector operator'));
      }
      if (Array.isArray(values)) {
        values.forEach((v: unknown, j) => {
          if (typeof v !== 'string' || !isLabelValue(v))
            errors.push(invalid(`${here}.values[${j}]`, v, VALUE_MSG));
        });
      }
    });
  }
  return errors;
}

/**
 * Whether `labels` satisfy `selector`, with `metav1.LabelSelector` semantics: every term must
 * hold; `NotIn` and `DoesNotExist` hold for an absent label. `null`/`undefined` and `{}` select
 * everything (OCM's PlacementRule reads an absent clusterSelector that way). Only call with a
 * selector that passed {@link validateLabelSelector}.
 */
export function matchesLabelSelector(
  selector: LabelSelector | null | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  if (!selector) return true;
  const has = (k: string): boolean => Object.prototype.hasOwnProperty.call(labels, k);
  for (const [k, v] of Object.entries(selector.matchLabels ?? {})) {
    if (!has(k) || labels[k] !== v) return false;
  }
  for (const req of selector.matchExpressions ?? []) {
    const present = has(req.key);
    const value = labels[req.key];
    const values = req.values ?? [];
    switch (req.operator) {
      case 'In':
        if (!present || !values.includes(value as string)) return false;
        break;
      case 'NotIn':
        if (present && values.includes(value as string)) return false;
        break;
      case 'Exists':
        if (!present) return false;
        break;
      case 'DoesNotExist':
        if (present) return false;
        break;
      default:
        // Unreachable after validation; refuse rather than match everything.
        return false;
    }
  }
  return true;
}
