/**
 * The checks on CanaryRelease and Delivery that an OpenAPI schema and CEL cannot express:
 * references to other objects, PromQL syntax, rules across list items. Pure: the caller
 * (admission webhook, rollout controller) looks the references up and passes them in, so
 * the same function answers at `kubectl apply` time and at reconcile time.
 *
 * Every error is a `FieldError` naming the field path as the apiserver does
 * (`spec.analysis.metrics[1].query: Invalid value: …`).
 */
import { parser as promqlParser } from '@prometheus-io/lezer-promql';
import { renderTemplate, type TemplateVariables } from '../analysis/template.js';
import { FieldError, invalid, notSupported, required } from '../placement/field-error.js';
import type { FeatureGates } from '../features.js';
import { parseDuration } from './duration.js';
import { TRAFFIC_PROVIDERS } from './canary-release.js';
import { thresholdDirection, v1MetricName, THRESHOLD_RULE_TEXT } from './canary-release-v1alpha1.js';

export { FieldError };

/** The metric backends Sluice has (MetricProviderType). */
const METRIC_PROVIDERS = ['prometheus'] as const;

/** What the checks need to know beyond the object itself. */
export interface ValidationLookups {
  /**
   * Names of the MetricTemplates in the object's namespace. Unset: references are not checked
   * (e.g. the lister is not synced yet); an empty set means there are none.
   */
  metricTemplates?: ReadonlySet<string>;
  /** Gates in force; unset means every gate at its default is not consulted. */
  features?: FeatureGates;
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function asObject(v: unknown): Json {
  return isObject(v) ? v : {};
}

/** Sample values for template variables: a query is parsed as it will run. */
const SAMPLE_VARIABLES: TemplateVariables = {
  namespace: 'ns',
  target: 'app',
  primary: 'app-primary',
  canary: 'app',
  primaryService: 'app-primary',
  canaryService: 'app-canary',
  interval: '60s',
  cluster: 'hub',
};

/**
 * Why `query` is not valid PromQL once its `{{ variables }}` are filled, or `undefined` when
 * it parses. Uses the Prometheus project's own grammar (`@prometheus-io/lezer-promql`, what the
 * Prometheus UI uses); it checks syntax, not that series or functions exist.
 */
export function promqlError(query: string): string | undefined {
  let rendered: string;
  try {
    rendered = renderTemplate(query, SAMPLE_VARIABLES, 'template');
  } catch (err) {
    return (err as Error).message.replace(/^template: /, '');
  }
  if (rendered.trim() === '') return 'empty query';
  const tree = promqlParser.parse(rendered);
  let at: number | undefined;
  tree.iterate({
    enter: (node) => {
      if (at === undefined && node.type.isError) at = node.from;
      return at === undefined;
    },
  });
  if (at === undefined) return undefined;
  const near = rendered.slice(at, at + 20);
  return `PromQL syntax error at character ${at + 1}${near ? ` near "${near}"` : ' (unexpected end)'}`;
}

function checkQuery(errors: FieldError[], path: string, query: unknown): void {
  if (typeof query !== 'string') return;
  const why = promqlError(query);
  if (why) errors.push(invalid(path, query, why));
}

function checkWeights(errors: FieldError[], path: string, weights: unknown[]): void {
  if (weights.length > 0 && weights.every((w) => typeof w === 'number' && w === 0))
    errors.push(invalid(path, weights, 'at least one metric must have a weight greater than 0'));
}

/** The checks of a v1 CanaryRelease beyond its schema. */
export function validateCanaryRelease(obj: unknown, lookups: ValidationLookups = {}): FieldError[] {
  const errors: FieldError[] = [];
  const spec = asObject(asObject(obj).spec);

  const steps = asObject(spec.steps);
  const weights: unknown = steps.weights;
  if (Array.isArray(weights)) {
    weights.forEach((w: unknown, i) => {
      const p = `spec.steps.weights[${i}]`;
      if (typeof w !== 'number' || !Number.isInteger(w) || w < 0 || w > 100)
        errors.push(invalid(p, w, 'must be an integer from 0 to 100'));
      else if (i > 0 && typeof weights[i - 1] === 'number' && w <= (weights[i - 1] as number))
        errors.push(invalid(p, w, `must be greater than the step before (${String(weights[i - 1])})`));
    });
  }
  if (typeof steps.maxWeight === 'number' && steps.maxWeight > 100)
    errors.push(invalid('spec.steps.maxWeight', steps.maxWeight, 'must be at most 100'));
  if (
    typeof steps.stepWeight === 'number' &&
    typeof steps.maxWeight === 'number' &&
    steps.stepWeight > steps.maxWeight
  )
    errors.push(
      invalid('spec.steps.stepWeight', steps.stepWeight, `must not exceed maxWeight (${steps.maxWeight})`),
    );

  const routing = asObject(spec.trafficRouting);
  if (routing.provider !== undefined && !TRAFFIC_PROVIDERS.includes(routing.provider as never))
    errors.push(notSupported('spec.trafficRouting.provider', routing.provider, TRAFFIC_PROVIDERS));

  const analysis = asObject(spec.analysis);
  const provider = asObject(analysis.provider);
  if (provider.type !== undefined && !METRIC_PROVIDERS.includes(provider.type as never))
    errors.push(notSupported('spec.analysis.provider.type', provider.type, METRIC_PROVIDERS));
  if (analysis.judge === 'mannWhitney' && lookups.features && !lookups.features.enabled('StatisticalJudge'))
    errors.push(
      invalid(
        'spec.analysis.judge',
        'mannWhitney',
        'the StatisticalJudge feature gate is off on this controller',
      ),
    );

  const metrics = Array.isArray(analysis.metrics) ? (analysis.metrics as unknown[]) : [];
  metrics.forEach((raw, i) => {
    const m = asObject(raw);
    const p = `spec.analysis.metrics[${i}]`;
    checkQuery(errors, `${p}.query`, m.query);
    const ref = asObject(m.templateRef);
    if (typeof ref.name === 'string' && lookups.metricTemplates && !lookups.metricTemplates.has(ref.name))
      errors.push(
        invalid(`${p}.templateRef.name`, ref.name, 'no MetricTemplate of that name in this namespace'),
      );
  });
  checkWeights(
    errors,
    'spec.analysis.metrics',
    metrics.map((m) => asObject(m).weight ?? 1),
  );

  const pr = asObject(asObject(spec.gitWriteBack).pullRequest);
  if (pr.provider !== undefined && !['github', 'gitlab'].includes(pr.provider as string))
    errors.push(notSupported('spec.gitWriteBack.pullRequest.provider', pr.provider, ['github', 'gitlab']));
  return errors;
}

/**
 * The checks of a v1alpha1 CanaryRelease beyond its schema, in v1alpha1's field paths: the
 * threshold rule decides every metric, names stay distinct in v1, queries parse, the split adds up.
 */
export function validateCanaryReleaseV1alpha1(obj: unknown): FieldError[] {
  const errors: FieldError[] = [];
  const spec = asObject(asObject(obj).spec);
  const split = asObject(spec.trafficSplit);
  if (
    typeof split.baseline === 'number' &&
    typeof split.canary === 'number' &&
    split.baseline + split.canary !== 100
  )
    errors.push(invalid('spec.trafficSplit', split, 'baseline + canary must be 100'));
  const metrics = Array.isArray(spec.metrics) ? (spec.metrics as unknown[]) : [];
  const seen = new Map<string, number>();
  metrics.forEach((raw, i) => {
    const m = asObject(raw);
    const p = `spec.metrics[${i}]`;
    if (typeof m.name === 'string') {
      if (thresholdDirection(m.name) === undefined)
        errors.push(
          invalid(
            `${p}.threshold`,
            m.threshold,
            `metric name "${m.name}" does not say whether the threshold is a floor or a ceiling. ${THRESHOLD_RULE_TEXT}`,
          ),
        );
      const v1 = v1MetricName(m.name);
      const dup = seen.get(v1);
      if (dup !== undefined)
        errors.push(
          invalid(`${p}.name`, m.name, `is the same v1 metric name "${v1}" as spec.metrics[${dup}]`),
        );
      seen.set(v1, i);
    }
    checkQuery(errors, `${p}.query`, m.query);
  });
  checkWeights(
    errors,
    'spec.metrics',
    metrics.map((m) => asObject(m).weight ?? 1),
  );
  return errors;
}

/** What the Delivery checks need beyond the object. */
export interface DeliveryLookups {
  features?: FeatureGates;
}

/**
 * The checks of a Delivery beyond its schema: a path that stays inside the source once
 * normalised (the schema only sees the text), a timeout no longer than the interval (a
 * health wait that outlives the next apply would never report), a target namespace that is
 * not a system namespace Sluice must not rewrite into.
 */
export function validateDelivery(obj: unknown, _lookups: DeliveryLookups = {}): FieldError[] {
  const errors: FieldError[] = [];
  const spec = asObject(asObject(obj).spec);
  if (typeof spec.path === 'string') {
    if (spec.path.includes('\\')) errors.push(invalid('spec.path', spec.path, 'use / as the separator'));
    let depth = 0;
    for (const seg of spec.path.split('/')) {
      if (seg === '..') depth--;
      else if (seg !== '' && seg !== '.') depth++;
      if (depth < 0) {
        errors.push(invalid('spec.path', spec.path, 'leaves the source root'));
        break;
      }
    }
  }
  if (spec.sourceRef !== undefined && typeof asObject(spec.sourceRef).name !== 'string')
    errors.push(required('spec.sourceRef.name'));
  if (
    typeof spec.targetNamespace === 'string' &&
    ['kube-system', 'kube-public', 'kube-node-lease'].includes(spec.targetNamespace)
  )
    errors.push(
      invalid(
        'spec.targetNamespace',
        spec.targetNamespace,
        'Sluice does not apply into Kubernetes system namespaces',
      ),
    );
  const parse = (d: unknown) => (typeof d === 'string' ? parseDuration(d) : undefined);
  const timeout = parse(spec.timeout);
  const every = parse(spec.interval ?? '5m');
  if (timeout !== undefined && every !== undefined && timeout > every)
    errors.push(
      invalid(
        'spec.timeout',
        spec.timeout,
        `must not exceed interval (${String(spec.interval ?? '5m')}): the next apply would start before the health wait ends`,
      ),
    );
  return errors;
}
