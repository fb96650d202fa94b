import type { KubernetesObject } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { UsageError } from './usage.js';

/** What `-o` may ask for. */
export type OutputFormat = 'table' | 'json' | 'yaml';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['table', 'json', 'yaml'];

/** `-o` checked: anything else is a usage error naming the choices (exit 2). */
export function parseOutputFormat(value: string, usage: string): OutputFormat {
  if ((OUTPUT_FORMATS as readonly string[]).includes(value)) return value as OutputFormat;
  throw new UsageError(`-o must be one of ${OUTPUT_FORMATS.join(', ')}, got "${value}"`, usage);
}

/** The object as `kubectl get -o yaml` shows it: without `metadata.managedFields`. */
function forDisplay(obj: KubernetesObject): KubernetesObject {
  if (!obj.metadata?.managedFields) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

/**
 * Objects as JSON or YAML, as kubectl prints them: one object as itself when one was asked
 * for by name, otherwise a `v1` `List` of them. Ends with a newline. Pure.
 */
export function formatObjects(
  objects: readonly KubernetesObject[],
  format: Exclude<OutputFormat, 'table'>,
  single: boolean,
): string {
  const items = objects.map(forDisplay);
  const doc =
    single && items.length === 1
      ? items[0]
      : { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
  return format === 'json' ? `${JSON.stringify(doc, null, 4)}\n` : stringify(doc);
}
