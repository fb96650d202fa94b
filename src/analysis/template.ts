import type { ReleaseNames } from '../rollout/names.js';
import { MetricConfigError } from './errors.js';

/**
 * Query templates: `{{ name }}` placeholders in a PromQL query (inline, MetricTemplate or
 * built-in), filled per release, cluster and run. An unknown variable is an error naming it:
 * rendering it as empty would turn `pod=~"{{ canry }}-.*"` into a query over every pod and
 * judge the wrong workload.
 */

/** The variables a query may use. */
export interface TemplateVariables {
  readonly namespace: string;
  /** The Deployment under test (from Git). */
  readonly target: string;
  /** The stable Deployment Sluice maintains. */
  readonly primary: string;
  /** Same as `target`: the name Flagger and Kayenta users know. */
  readonly canary: string;
  readonly primaryService: string;
  readonly canaryService: string;
  /** A PromQL duration (`60s`): the window the query aggregates over. */
  readonly interval: string;
  /** The member cluster the query is about. */
  readonly cluster: string;
}

/** The variable names, in the order the docs list them. */
export const TEMPLATE_VARIABLES: readonly (keyof TemplateVariables)[] = [
  'namespace',
  'target',
  'primary',
  'canary',
  'primaryService',
  'canaryService',
  'interval',
  'cluster',
];

/** Milliseconds → a PromQL duration: whole seconds as `90s`, otherwise `1500ms`. */
export function promDuration(ms: number): string {
  const rounded = Math.max(1, Math.round(ms));
  return rounded % 1000 === 0 ? `${rounded / 1000}s` : `${rounded}ms`;
}

/** Which side a query is rendered for: the canary, or (for the statistical judge) the primary. */
export type Scope = 'canary' | 'primary';

/**
 * The variables for one release on one cluster. For `scope: 'primary'` (the statistical
 * judge's baseline) `target`, `canary` and `canaryService` name the primary instead, so one
 * query written for the workload under test measures the baseline with the same expression
 * (Kayenta's control/experiment scopes).
 */
export function templateVariables(
  names: ReleaseNames,
  cluster: string,
  intervalMs: number,
  scope: Scope = 'canary',
): TemplateVariables {
  const target = scope === 'canary' ? names.target : names.primary;
  return {
    namespace: names.namespace,
    target,
    primary: names.primary,
    canary: target,
    primaryService: names.primaryService,
    canaryService: scope === 'canary' ? names.canaryService : names.primaryService,
    interval: promDuration(intervalMs),
    cluster,
  };
}

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/**
 * Fills every `{{ name }}`. Throws MetricConfigError naming the first unknown variable (with
 * the known ones) or a `{{` that is never closed, with `where` (e.g. `metric error-rate`)
 * leading the message.
 */
export function renderTemplate(template: string, vars: TemplateVariables, where = 'query'): string {
  const known = vars as unknown as Record<string, string>;
  const rendered = template.replace(PLACEHOLDER, (_m, name: string) => {
    if (!Object.prototype.hasOwnProperty.call(known, name) || !TEMPLATE_VARIABLES.includes(name as never))
      throw new MetricConfigError(
        `${where}: unknown template variable {{ ${name} }}; known: ${TEMPLATE_VARIABLES.join(', ')}`,
      );
    return known[name]!;
  });
  const open = rendered.indexOf('{{');
  if (open >= 0)
    throw new MetricConfigError(
      `${where}: unclosed {{ at character ${template.indexOf('{{') + 1}; write variables as {{ name }}`,
    );
  return rendered;
}
