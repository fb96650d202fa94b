import { describe, expect, it } from '@jest/globals';
import {
  getCondition,
  isConditionTrue,
  kubeTime,
  markReady,
  markReconciling,
  markRetrying,
  markStalled,
  removeCondition,
  setCondition,
  type Condition,
  type ConditionedStatus,
} from './conditions.js';

const T0 = '2024-05-01T10:00:00Z';
const NOW = new Date('2024-05-01T12:30:45.678Z');
const NOW_TEXT = '2024-05-01T12:30:45Z';

const c = (
  type: string,
  status: Condition['status'],
  reason = 'R',
  message = 'm',
  extra: Partial<Condition> = {},
): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: T0,
  ...extra,
});

describe('kubeTime', () => {
  it('GIVEN a date with milliseconds THEN it is written as RFC 3339 in whole seconds', () => {
    expect(kubeTime(NOW)).toBe(NOW_TEXT);
  });
});

describe('setCondition', () => {
  it.each<[string, Condition[] | undefined, Omit<Condition, 'lastTransitionTime'>, Condition[]]>([
    [
      'no conditions yet: appended with now',
      undefined,
      { type: 'Ready', status: 'True', reason: 'Ok', message: 'fine' },
      [{ type: 'Ready', status: 'True', reason: 'Ok', message: 'fine', lastTransitionTime: NOW_TEXT }],
    ],
    [
      'same status, new reason and message: time kept',
      [c('Ready', 'False', 'Old', 'old')],
      { type: 'Ready', status: 'False', reason: 'New', message: 'new' },
      [c('Ready', 'False', 'New', 'new')],
    ],
    [
      'status changed: time is now',
      [c('Ready', 'False')],
      { type: 'Ready', status: 'True', reason: 'R', message: 'm' },
      [{ ...c('Ready', 'True'), lastTransitionTime: NOW_TEXT }],
    ],
    [
      'other types keep their place and value',
      [c('A', 'True'), c('Ready', 'False'), c('B', 'Unknown')],
      { type: 'Ready', status: 'True', reason: 'R', message: 'm' },
      [c('A', 'True'), { ...c('Ready', 'True'), lastTransitionTime: NOW_TEXT }, c('B', 'Unknown')],
    ],
    [
      'observedGeneration set on an unchanged status: time kept',
      [c('Ready', 'True')],
      { type: 'Ready', status: 'True', reason: 'R', message: 'm', observedGeneration: 3 },
      [c('Ready', 'True', 'R', 'm', { observedGeneration: 3 })],
    ],
    [
      'nothing changed: equal result',
      [c('Ready', 'True', 'R', 'm', { observedGeneration: 2 })],
      { type: 'Ready', status: 'True', reason: 'R', message: 'm', observedGeneration: 2 },
      [c('Ready', 'True', 'R', 'm', { observedGeneration: 2 })],
    ],
  ])('GIVEN %s', (_name, before, update, after) => {
    const frozen = before ? structuredClone(before) : undefined;
    expect(setCondition(before, update, NOW)).toEqual(after);
    // Pure: the input is untouched and a new array comes back.
    expect(before).toEqual(frozen);
    if (before) expect(setCondition(before, update, NOW)).not.toBe(before);
  });
});

describe('getCondition / isConditionTrue / removeCondition', () => {
  const list = [c('Ready', 'True'), c('Stalled', 'False')];
  it.each<[string, string, boolean, boolean]>([
    ['Ready', 'present and True', true, true],
    ['Stalled', 'present and False', true, false],
    ['Reconciling', 'absent', false, false],
  ])('GIVEN %s %s', (type, _what, present, isTrue) => {
    expect(getCondition(list, type) !== undefined).toBe(present);
    expect(isConditionTrue(list, type)).toBe(isTrue);
  });
  it('GIVEN no list THEN nothing is found', () => {
    expect(getCondition(undefined, 'Ready')).toBeUndefined();
    expect(isConditionTrue(undefined, 'Ready')).toBe(false);
  });
  it('GIVEN a list WHEN a type is removed THEN a new list without it comes back', () => {
    expect(removeCondition(list, 'Ready')).toEqual([c('Stalled', 'False')]);
    expect(list).toHaveLength(2);
  });
});

type Status = ConditionedStatus & { artifact?: string };

/** type → [status, reason] for a compact comparison. */
function summary(s: Status): Record<string, [string, string]> {
  return Object.fromEntries((s.conditions ?? []).map((x) => [x.type, [x.status, x.reason]]));
}

describe('kstatus marks', () => {
  const reconciling: Status = {
    artifact: 'main@sha1:abc',
    observedGeneration: 1,
    conditions: [c('Reconciling', 'True', 'Progressing'), c('Ready', 'Unknown', 'Progressing')],
  };
  const stalled: Status = {
    observedGeneration: 1,
    conditions: [c('Stalled', 'True', 'InvalidSpec'), c('Ready', 'False', 'InvalidSpec')],
  };
  const ready: Status = {
    observedGeneration: 1,
    conditions: [c('Ready', 'True', 'Succeeded'), c('Custom', 'True')],
  };

  it.each<[string, Status, (s: Status) => Status, Record<string, [string, string]>]>([
    ['empty → ready', {}, (s) => markReady(s, 2, 'Succeeded', 'ok', NOW), { Ready: ['True', 'Succeeded'] }],
    [
      'reconciling → ready: Reconciling removed',
      reconciling,
      (s) => markReady(s, 2, 'Succeeded', 'ok', NOW),
      { Ready: ['True', 'Succeeded'] },
    ],
    [
      'stalled → ready: Stalled removed',
      stalled,
      (s) => markReady(s, 2, 'Succeeded', 'ok', NOW),
      { Ready: ['True', 'Succeeded'] },
    ],
    [
      'ready → reconciling: Ready Unknown, others kept',
      ready,
      (s) => markReconciling(s, 2, 'Progressing', 'applying', NOW),
      { Ready: ['Unknown', 'Progressing'], Custom: ['True', 'R'], Reconciling: ['True', 'Progressing'] },
    ],
    [
      'stalled → reconciling: Stalled removed',
      stalled,
      (s) => markReconciling(s, 2, 'Progressing', 'applying', NOW),
      { Ready: ['Unknown', 'Progressing'], Reconciling: ['True', 'Progressing'] },
    ],
    [
      'reconciling → stalled: Ready False, Reconciling removed',
      reconciling,
      (s) => markStalled(s, 2, 'InvalidSpec', 'spec.steps is empty', NOW),
      { Ready: ['False', 'InvalidSpec'], Stalled: ['True', 'InvalidSpec'] },
    ],
    [
      'ready → stalled',
      ready,
      (s) => markStalled(s, 2, 'InvalidSpec', 'bad', NOW),
      { Ready: ['False', 'InvalidSpec'], Custom: ['True', 'R'], Stalled: ['True', 'InvalidSpec'] },
    ],
    [
      'ready → retrying: Ready False, Reconciling ProgressingWithRetry',
      ready,
      (s) => markRetrying(s, 2, 'ArtifactFailed', 'fetch failed', NOW),
      {
        Ready: ['False', 'ArtifactFailed'],
        Custom: ['True', 'R'],
        Reconciling: ['True', 'ProgressingWithRetry'],
      },
    ],
    [
      'stalled → retrying: Stalled removed',
      stalled,
      (s) => markRetrying(s, 2, 'ArtifactFailed', 'fetch failed', NOW),
      { Ready: ['False', 'ArtifactFailed'], Reconciling: ['True', 'ProgressingWithRetry'] },
    ],
  ])('GIVEN %s', (_name, before, mark, expected) => {
    const frozen = structuredClone(before);
    const after = mark(before);
    expect(summary(after)).toEqual(expected);
    expect(after.observedGeneration).toBe(2);
    for (const cond of after.conditions ?? []) {
      if (['Ready', 'Reconciling', 'Stalled'].includes(cond.type)) expect(cond.observedGeneration).toBe(2);
    }
    // Fields the marks do not own are carried over, and the input is untouched.
    expect(after.artifact).toBe(before.artifact);
    expect(before).toEqual(frozen);
  });

  it('GIVEN a ready status WHEN marked ready again with the same generation THEN the result is deep-equal (no status write needed)', () => {
    const once = markReady({}, 3, 'Succeeded', 'ok', NOW);
    const twice = markReady(once, 3, 'Succeeded', 'ok', new Date('2030-01-01T00:00:00Z'));
    expect(twice).toEqual(once);
  });

  it('GIVEN Ready False WHEN it becomes True THEN lastTransitionTime moves; a message change alone does not move it', () => {
    const stalledNow = markStalled<ConditionedStatus>(
      {},
      1,
      'InvalidSpec',
      'bad',
      new Date('2024-01-01T00:00:00Z'),
    );
    const stillStalled = markStalled(
      stalledNow,
      1,
      'InvalidSpec',
      'still bad',
      new Date('2024-01-02T00:00:00Z'),
    );
    expect(getCondition(stillStalled.conditions, 'Ready')?.lastTransitionTime).toBe('2024-01-01T00:00:00Z');
    const readyNow = markReady(stillStalled, 2, 'Succeeded', 'ok', NOW);
    expect(getCondition(readyNow.conditions, 'Ready')?.lastTransitionTime).toBe(NOW_TEXT);
  });
});
