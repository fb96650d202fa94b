/**
 * Deployment, DaemonSet, ReplicaSet, StatefulSet (and ControllerRevision) from
 * `extensions/v1beta1`, `apps/v1beta1` and `apps/v1beta2 → apps/v1` (removed in 1.16).
 *
 * `spec.selector`: the old versions defaulted a missing selector to the pod template's labels;
 * apps/v1 requires it and makes it immutable. It is written out from the template labels — unless
 * one of them looks volatile (a version, hash, date, build or `pod-template-hash`): a selector on
 * such a label would stop matching the pods after the next release, so that is a FLAG.
 *
 * Defaults that decide how pods are replaced differ and are written out so the rollout behaves
 * as before: extensions/v1beta1 Deployment `rollingUpdate {maxUnavailable: 1, maxSurge: 1}`
 * (apps/v1: 25%), extensions/v1beta1 DaemonSet and apps/v1beta1 StatefulSet `updateStrategy:
 * OnDelete` (apps/v1: RollingUpdate). History limits and the progress deadline also differ but do
 * not change what runs; they are noted, not written. `spec.rollbackTo` (imperative) and
 * `spec.templateGeneration`, which apps/v1 dropped, are removed with a note.
 */
import { isObject, type Flag, type JsonObject, type Manifest, type Note, type Rewrite } from '../types.js';

const VOLATILE_KEY =
  /(^|[./_-])(pod-template-hash|controller-revision-hash|version|hash|date|revision|timestamp|build|commit|sha|chart)([._-]|$)/i;
const VOLATILE_VALUE = [
  /\d+\.\d+(\.\d+)?/, // a version: 1.2, v2.3.4
  /^[0-9a-f]{7,40}$/i, // a commit or content hash
  /(19|20)\d{2}-?[01]\d-?[0-3]\d/, // a date
  /^\d{8,}$/, // a timestamp or build number
];

/** Why `key: value` would make an unstable selector, or undefined when it looks stable. */
export function volatileLabel(key: string, value: string): string | undefined {
  if (VOLATILE_KEY.test(key)) return `the key ${key} names something that changes between releases`;
  if (VOLATILE_VALUE.some((re) => re.test(value)))
    return `the value ${value} looks like a version, hash or date`;
  return undefined;
}

function rewriteWorkload(obj: Manifest): ReturnType<Rewrite['rewrite']> {
  const flags: Flag[] = [];
  const notes: Note[] = [];
  const out = structuredClone(obj);
  const from = obj.apiVersion;
  out.apiVersion = 'apps/v1';
  if (obj.kind === 'ControllerRevision') return { ok: true, object: out, notes };
  if (!isObject(out.spec)) {
    return { ok: false, flags: [{ path: ['spec'], reason: `a ${obj.kind} without spec` }] };
  }
  let spec: JsonObject = out.spec;

  if (spec.selector === undefined || spec.selector === null) {
    const template = isObject(spec.template) ? spec.template : {};
    const labels =
      isObject(template.metadata) && isObject(template.metadata.labels) ? template.metadata.labels : {};
    const entries = Object.entries(labels);
    if (entries.length === 0) {
      flags.push({
        path: ['spec', 'selector'],
        reason: 'no selector and no template labels to derive one from: apps/v1 requires a selector',
      });
    }
    for (const [k, v] of entries) {
      const why = volatileLabel(k, String(v));
      if (why) {
        flags.push({
          path: ['spec', 'template', 'metadata', 'labels', k],
          reason: `apps/v1 needs an explicit, immutable selector and ${why}: write spec.selector.matchLabels by hand with the labels that identify the pods`,
        });
      }
    }
    // Insert the selector before the template, where apps/v1 manifests carry it.
    const withSelector: JsonObject = {};
    for (const [k, v] of Object.entries(spec)) {
      if (k === 'template') withSelector.selector = { matchLabels: { ...labels } };
      withSelector[k] = v;
    }
    if (!('selector' in withSelector)) withSelector.selector = { matchLabels: { ...labels } };
    spec = withSelector;
    notes.push({
      path: ['spec', 'selector'],
      text: 'selector.matchLabels written from the pod template labels (the old default)',
    });
  }

  if ('templateGeneration' in spec) {
    delete spec.templateGeneration;
    notes.push({
      path: ['spec', 'templateGeneration'],
      text: 'templateGeneration removed (apps/v1 has no such field; the DaemonSet controller tracks revisions itself)',
    });
  }
  if ('rollbackTo' in spec) {
    delete spec.rollbackTo;
    notes.push({
      path: ['spec', 'rollbackTo'],
      text: 'rollbackTo removed (apps/v1 has no such field; use kubectl rollout undo)',
    });
  }

  const oldDefault = (key: string, value: unknown, why: string) => {
    notes.push({ path: ['spec', key], text: `${key}: ${JSON.stringify(value)} written out (${why})` });
  };
  if (obj.kind === 'Deployment' && from === 'extensions/v1beta1') {
    const strategy: JsonObject = isObject(spec.strategy) ? { ...spec.strategy } : {};
    if (strategy.type === undefined || strategy.type === 'RollingUpdate') {
      const ru: JsonObject = isObject(strategy.rollingUpdate) ? { ...strategy.rollingUpdate } : {};
      let changed = false;
      for (const key of ['maxUnavailable', 'maxSurge']) {
        if (ru[key] === undefined) {
          ru[key] = 1;
          changed = true;
        }
      }
      if (changed) {
        spec.strategy = { ...strategy, type: 'RollingUpdate', rollingUpdate: ru };
        oldDefault(
          'strategy',
          spec.strategy,
          'extensions/v1beta1 replaced one pod at a time; apps/v1 defaults to 25%',
        );
      }
    }
    for (const key of ['revisionHistoryLimit', 'progressDeadlineSeconds']) {
      if (spec[key] === undefined) {
        notes.push({
          path: ['spec', key],
          text: `${key} was unlimited in extensions/v1beta1; apps/v1 defaults it (${key === 'revisionHistoryLimit' ? 10 : 600})`,
        });
      }
    }
  }
  if (
    spec.updateStrategy === undefined &&
    ((obj.kind === 'DaemonSet' && from === 'extensions/v1beta1') ||
      (obj.kind === 'StatefulSet' && from === 'apps/v1beta1'))
  ) {
    spec.updateStrategy = { type: 'OnDelete' };
    oldDefault(
      'updateStrategy',
      spec.updateStrategy,
      `the ${from} default; apps/v1 defaults to RollingUpdate`,
    );
  }
  if (flags.length > 0) return { ok: false, flags };
  out.spec = spec;
  return { ok: true, object: out, notes };
}

export const workloadRewrite: Rewrite = { to: 'apps/v1', rewrite: rewriteWorkload };
