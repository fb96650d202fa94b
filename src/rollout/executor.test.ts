import { describe, expect, it } from '@jest/globals';
import { replicaRouted, replicaSettled, rolloutOwnsReplicas } from './executor.js';

const dep = (replicas: number, annotations: Record<string, string> = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'x', annotations },
  spec: { replicas },
});

describe('replicaRouted', () => {
  it.each<[string, number, number, Record<string, string>, number, { primary: number; canary: number }]>([
    [
      '5% of 2 pods routed as 1 + 1',
      1,
      1,
      { 'sluice.dev/replica-total': '2' },
      5,
      { primary: 95, canary: 5 },
    ],
    ['0% with the target at 0', 0, 2, {}, 0, { primary: 100, canary: 0 }],
    ['counts that do not match the weight', 2, 0, {}, 0, { primary: 0, canary: 100 }],
  ])('GIVEN %s THEN the split is %j', (_w, target, primary, ann, weight, expected) => {
    expect(replicaRouted({ target: dep(target), primary: dep(primary, ann) }, weight)).toEqual(expected);
  });
});

describe('rolloutOwnsReplicas', () => {
  it('GIVEN managedFields THEN only an Apply by sluice-rollout of spec.replicas counts', () => {
    const with_ = (manager: string, operation: string) => ({
      ...dep(2),
      metadata: { managedFields: [{ manager, operation, fieldsV1: { 'f:spec': { 'f:replicas': {} } } }] },
    });
    expect(rolloutOwnsReplicas(with_('sluice-rollout', 'Apply'))).toBe(true);
    expect(rolloutOwnsReplicas(with_('sluice-rollout-workload', 'Apply'))).toBe(false);
    expect(rolloutOwnsReplicas(with_('sluice-rollout', 'Update'))).toBe(false);
    expect(rolloutOwnsReplicas(dep(2))).toBe(false);
  });
});

describe('replicaSettled', () => {
  it.each<[string, number, number, Record<string, string>, number, boolean]>([
    ['at rest, every replica on the primary', 0, 2, {}, 0, true],
    [
      'killed between the two writes back to 0% (total still recorded)',
      0,
      1,
      { 'sluice.dev/replica-total': '2' },
      0,
      false,
    ],
    ['at 25% of 2 pods with the total recorded', 1, 1, { 'sluice.dev/replica-total': '2' }, 25, true],
  ])('GIVEN %s THEN %s', (_w, target, primary, ann, weight, settled) => {
    expect(replicaSettled({ target: dep(target), primary: dep(primary, ann) }, weight)).toBe(settled);
  });
});
