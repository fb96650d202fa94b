/**
 * HorizontalPodAutoscaler `autoscaling/v2beta1` and `v2beta2 → autoscaling/v2` (removed in 1.25
 * and 1.26). v2beta2 has v2's shape; v2beta1's metric targets become v2's `target` blocks:
 *
 * | v2beta1                                  | v2                                                  |
 * |------------------------------------------|-----------------------------------------------------|
 * | resource.targetAverageUtilization        | resource.target {type: Utilization, averageUtilization} |
 * | resource.targetAverageValue              | resource.target {type: AverageValue, averageValue}  |
 * | pods.metricName / selector               | pods.metric {name, selector}                        |
 * | pods.targetAverageValue                  | pods.target {type: AverageValue, averageValue}      |
 * | object.target (the object)               | object.describedObject                              |
 * | object.metricName / selector             | object.metric {name, selector}                      |
 * | object.targetValue / averageValue        | object.target {type: Value, value} / {type: AverageValue, averageValue} |
 * | external.metricName / metricSelector     | external.metric {name, selector}                    |
 * | external.targetValue / targetAverageValue| external.target {type: Value, value} / {type: AverageValue, averageValue} |
 *
 * containerResource (v2beta2 only) is already in v2's shape. A metric that sets both a value and
 * an average value (or neither) is a FLAG: v2 takes one target.
 */
import { isObject, type Flag, type JsonObject, type Manifest, type Note, type Rewrite } from '../types.js';

type Target = { type: string; [k: string]: unknown };

function pickTarget(
  candidates: Array<[string, unknown, Target]>,
  path: (string | number)[],
  flags: Flag[],
): Target | undefined {
  const set = candidates.filter(([, v]) => v !== undefined);
  if (set.length !== 1) {
    flags.push({
      path,
      reason: `expected exactly one of ${candidates.map(([k]) => k).join(', ')}; found ${set.length}`,
    });
    return undefined;
  }
  return set[0]![2];
}

const metricId = (name: unknown, selector: unknown): JsonObject =>
  selector === undefined ? { name } : { name, selector };

function convertMetric(m: unknown, i: number, flags: Flag[]): unknown {
  if (!isObject(m)) return m;
  const at = ['spec', 'metrics', i];
  const type = m.type;
  if (type === 'Resource' && isObject(m.resource)) {
    const { name, targetAverageUtilization: u, targetAverageValue: v, ...rest } = m.resource;
    if ('target' in rest) return m;
    const target = pickTarget(
      [
        ['targetAverageUtilization', u, { type: 'Utilization', averageUtilization: u }],
        ['targetAverageValue', v, { type: 'AverageValue', averageValue: v }],
      ],
      [...at, 'resource'],
      flags,
    );
    return { ...m, resource: { name, ...rest, target } };
  }
  if (type === 'Pods' && isObject(m.pods)) {
    const { metricName, selector, targetAverageValue, ...rest } = m.pods;
    if ('metric' in rest) return m;
    const target = pickTarget(
      [
        [
          'targetAverageValue',
          targetAverageValue,
          { type: 'AverageValue', averageValue: targetAverageValue },
        ],
      ],
      [...at, 'pods'],
      flags,
    );
    return { ...m, pods: { metric: metricId(metricName, selector), ...rest, target } };
  }
  if (type === 'Object' && isObject(m.object)) {
    const { target: described, metricName, selector, targetValue, averageValue, ...rest } = m.object;
    if ('describedObject' in rest) return m;
    const target = pickTarget(
      [
        ['targetValue', targetValue, { type: 'Value', value: targetValue }],
        ['averageValue', averageValue, { type: 'AverageValue', averageValue }],
      ],
      [...at, 'object'],
      flags,
    );
    return {
      ...m,
      object: { describedObject: described, metric: metricId(metricName, selector), ...rest, target },
    };
  }
  if (type === 'External' && isObject(m.external)) {
    const { metricName, metricSelector, targetValue, targetAverageValue, ...rest } = m.external;
    if ('metric' in rest) return m;
    const target = pickTarget(
      [
        ['targetValue', targetValue, { type: 'Value', value: targetValue }],
        [
          'targetAverageValue',
          targetAverageValue,
          { type: 'AverageValue', averageValue: targetAverageValue },
        ],
      ],
      [...at, 'external'],
      flags,
    );
    return { ...m, external: { metric: metricId(metricName, metricSelector), ...rest, target } };
  }
  return m;
}

function rewriteV2beta1(obj: Manifest): ReturnType<Rewrite['rewrite']> {
  const flags: Flag[] = [];
  const notes: Note[] = [];
  const out = structuredClone(obj);
  out.apiVersion = 'autoscaling/v2';
  if (isObject(out.spec) && Array.isArray(out.spec.metrics)) {
    out.spec.metrics = out.spec.metrics.map((m, i) => {
      const converted = convertMetric(m, i, flags);
      if (converted !== m)
        notes.push({ path: ['spec', 'metrics', i], text: 'metric target → v2 target block' });
      return converted;
    });
  }
  if (flags.length > 0) return { ok: false, flags };
  return { ok: true, object: out, notes };
}

export const hpaV2beta1Rewrite: Rewrite = { to: 'autoscaling/v2', rewrite: rewriteV2beta1 };
export const hpaV2beta2Rewrite: Rewrite = {
  to: 'autoscaling/v2',
  rewrite: (obj: Manifest) => ({
    ok: true,
    object: { ...structuredClone(obj), apiVersion: 'autoscaling/v2' },
    notes: [],
  }),
};
