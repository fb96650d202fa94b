import { describe, expect, it } from '@jest/globals';
import type { ReleaseNames } from '../rollout/names.js';
import {
  TOTAL_ANNOTATION,
  desiredReplicas,
  replicaCounts,
  replicaProblems,
  replicaSplit,
  type Deployment,
  type ReplicaState,
} from './replicas.js';

const names: ReleaseNames = {
  namespace: 'shop',
  target: 'web',
  primary: 'web-primary',
  apexService: 'web',
  primaryService: 'web-primary',
  canaryService: 'web-canary',
};

const dep = (name: string, replicas: number, total?: number): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name,
    namespace: 'shop',
    ...(total ? { annotations: { [TOTAL_ANNOTATION]: String(total) } } : {}),
  },
  spec: { replicas, template: {} },
});

/** Applies `bodies` to `state` as the API server would (replicas and the annotation only). */
function apply(state: ReplicaState, bodies: Deployment[]): ReplicaState {
  let { target, primary } = state;
  for (const b of bodies) {
    const total = b.metadata?.annotations?.[TOTAL_ANNOTATION];
    const next = dep(b.metadata!.name!, b.spec!.replicas!, total ? Number(total) : undefined);
    if (b.metadata!.name === 'web') target = next;
    else primary = next;
  }
  return { target, primary };
}

describe('replicaCounts', () => {
  it.each([
    [10, 0, 0, 10],
    [10, 10, 1, 9],
    [10, 50, 5, 5],
    [10, 95, 9, 1],
    [10, 100, 10, 0],
    [4, 5, 1, 3],
    [1, 10, 1, 1],
    [2, 99, 1, 1],
  ])('GIVEN %p replicas at canary %p%% THEN canary %p, primary %p', (total, canary, c, p) => {
    expect(replicaCounts({ primary: 100 - canary, canary }, total)).toEqual({ canary: c, primary: p });
  });
});

describe('desiredReplicas', () => {
  it('GIVEN a workload at rest (target 0, primary 10) WHEN 10/90 THEN the primary records the total first, then the canary grows', () => {
    expect(
      desiredReplicas({ primary: 90, canary: 10 }, names, {
        target: dep('web', 0),
        primary: dep('web-primary', 10),
      }),
    ).toMatchSnapshot();
  });

  it('GIVEN a release in progress WHEN 50/50 THEN the canary grows before the primary shrinks', () => {
    const bodies = desiredReplicas({ primary: 50, canary: 50 }, names, {
      target: dep('web', 1),
      primary: dep('web-primary', 9, 10),
    });
    expect(bodies.map((b) => [b.metadata?.name, b.spec?.replicas])).toEqual([
      ['web', 5],
      ['web-primary', 5],
    ]);
  });

  it('GIVEN a SIGKILL after any single write THEN the next set reaches the same sizes and the total never drifts', () => {
    const rest: ReplicaState = { target: dep('web', 0), primary: dep('web-primary', 10) };
    let state = rest;
    for (const split of [
      { primary: 90, canary: 10 },
      { primary: 50, canary: 50 },
      { primary: 100, canary: 0 },
    ]) {
      const bodies = desiredReplicas(split, names, state);
      // Killed after the first write only, then the step is tried again from what is live.
      const partial = apply(state, bodies.slice(0, 1));
      const again = apply(partial, desiredReplicas(split, names, partial));
      const whole = apply(state, bodies);
      expect(again).toEqual(whole);
      expect(desiredReplicas(split, names, whole)).toEqual([]);
      state = whole;
    }
    expect(state).toEqual(rest);
  });

  it('GIVEN the sizes already set THEN get reads the split back and there is nothing to write', () => {
    const state = { target: dep('web', 1), primary: dep('web-primary', 9, 10) };
    expect(replicaSplit(state)).toEqual({ primary: 90, canary: 10 });
    expect(desiredReplicas({ primary: 90, canary: 10 }, names, state)).toEqual([]);
  });
});

describe('replicaProblems', () => {
  it('GIVEN one replica and an autoscaler on the target THEN both are reported with their field', () => {
    const target = dep('web', 0);
    target.metadata!.managedFields = [
      {
        manager: 'horizontal-pod-autoscaler',
        operation: 'Update',
        subresource: 'scale',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      },
    ];
    expect(replicaProblems({ target, primary: dep('web-primary', 1) }, names)).toEqual([
      'Deployment shop/web-primary spec.replicas: 1 replica cannot be split; the replica ratio needs at least 2',
      'Deployment shop/web spec.replicas: owned by horizontal-pod-autoscaler through the scale subresource (an autoscaler); a replica ratio would fight it',
    ]);
  });
});
