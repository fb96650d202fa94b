import type { PlacementRuleStatus } from '../api/placement-rule.js';
import { decide, type ClusterFacts } from './decide.js';
import { nextPlacementStatus } from './placement-status.js';

const NOW = new Date('2024-05-01T12:00:00Z');
const LATER = new Date('2024-05-01T12:00:40Z');
const up = [{ type: 'Available', status: 'True' }];
const down = [{ type: 'Available', status: 'False' }];
const fleet = (m3: ClusterFacts['conditions'] = up, m3env = 'prod'): ClusterFacts[] => [
  { name: 'member-1', labels: { env: 'prod' }, conditions: up },
  { name: 'member-2', labels: { env: 'prod' }, conditions: up },
  { name: 'member-3', labels: { env: m3env }, conditions: m3 },
];
const prod = { clusterSelector: { matchLabels: { env: 'prod' } } };

function step(
  previous: PlacementRuleStatus | undefined,
  spec: object,
  clusters: ClusterFacts[],
  now = NOW,
  generation = 1,
) {
  const result = decide(
    { spec, clusters, previousDecisions: previous?.decisions ?? [], debounceMs: 30_000 },
    now,
  );
  return nextPlacementStatus(previous, generation, result, clusters.length, now);
}
const ready = (s: PlacementRuleStatus) => s.conditions?.find((c) => c.type === 'Ready');

describe('nextPlacementStatus', () => {
  it('GIVEN a first decision WHEN written THEN decisions with reasons, Ready=True Decided "N of M clusters selected", and an "added" Event', () => {
    const out = step(undefined, prod, fleet(up, 'dev'));
    expect(out.status.decisions).toEqual([
      { clusterName: 'member-1', reason: 'matches clusterSelector' },
      { clusterName: 'member-2', reason: 'matches clusterSelector' },
    ]);
    expect(ready(out.status)).toEqual({
      type: 'Ready',
      status: 'True',
      reason: 'Decided',
      message: '2 of 3 clusters selected',
      observedGeneration: 1,
      lastTransitionTime: '2024-05-01T12:00:00Z',
    });
    expect(out.status.observedGeneration).toBe(1);
    expect(out.event).toEqual({
      type: 'Normal',
      reason: 'DecisionsChanged',
      message: 'added member-1, member-2',
    });
    expect(out.requeueAfterMs).toBeUndefined();
  });

  it('GIVEN the same inputs again THEN it settles: the same status (deep-equal: no write) and no Event', () => {
    const first = step(undefined, prod, fleet());
    // The second pass marks the decisions sticky ("kept from previous decisions"), then nothing moves.
    const second = step(first.status, prod, fleet(), LATER);
    expect(second.event).toBeUndefined();
    const third = step(second.status, prod, fleet(), LATER);
    expect(third.status).toEqual(second.status);
    expect(third.event).toBeUndefined();
  });

  it('GIVEN a cluster that loses its label THEN it is removed at once, and the Event says why', () => {
    const first = step(undefined, prod, fleet());
    const out = step(first.status, prod, fleet(up, 'dev'));
    expect(out.status.decisions?.map((d) => d.clusterName)).toEqual(['member-1', 'member-2']);
    expect(out.event?.message).toBe('removed member-3 (dropped: no longer selected by the rule)');
    expect(ready(out.status)?.message).toBe('2 of 3 clusters selected');
  });

  it('GIVEN one added and one removed THEN one Event names both', () => {
    const first = step(undefined, { clusters: [{ name: 'member-1' }, { name: 'member-3' }] }, fleet());
    const out = step(first.status, { clusters: [{ name: 'member-1' }, { name: 'member-2' }] }, fleet());
    expect(out.event?.message).toBe(
      'added member-2; removed member-3 (dropped: no longer selected by the rule)',
    );
  });

  it('GIVEN a decided cluster that starts failing clusterConditions THEN it is kept with failingSince, the message says so, and a requeue at debounce end', () => {
    const spec = { ...prod, clusterConditions: [{ type: 'Available', status: 'True' }] };
    const first = step(undefined, spec, fleet());
    const kept = step(first.status, spec, fleet(down), NOW);
    const m3 = kept.status.decisions?.find((d) => d.clusterName === 'member-3');
    expect(m3).toEqual({
      clusterName: 'member-3',
      reason: 'kept: Available=False since 2024-05-01T12:00:00Z, within the 30s debounce',
      failingSince: '2024-05-01T12:00:00Z',
    });
    expect(ready(kept.status)?.message).toBe(
      '3 of 3 clusters selected; kept during the flap debounce: member-3 (failing since 2024-05-01T12:00:00Z)',
    );
    expect(kept.requeueAfterMs).toBe(30_000);
    expect(kept.event).toBeUndefined();

    const evicted = step(kept.status, spec, fleet(down), LATER);
    expect(evicted.status.decisions?.map((d) => d.clusterName)).toEqual(['member-1', 'member-2']);
    expect(evicted.event?.message).toBe('removed member-3 (evicted: Available=False for 40s ≥ 30s debounce)');
    expect(ready(evicted.status)?.message).toBe('2 of 3 clusters selected');
  });

  it('GIVEN clusterReplicas and unknown names THEN the Ready message says what the rule could not do', () => {
    const out = step(
      undefined,
      { clusters: [{ name: 'member-2' }, { name: 'member-3' }, { name: 'gone' }], clusterReplicas: 1 },
      fleet(),
    );
    expect(ready(out.status)?.message).toBe(
      '1 of 3 clusters selected; spec.clusters names cluster gone, which does not exist; not chosen (clusterReplicas 1 reached): member-3',
    );
  });

  it('GIVEN an invalid selector THEN Stalled and Ready=False InvalidSpec with the field path, previous decisions kept, and a Warning once', () => {
    const first = step(undefined, prod, fleet());
    const bad = {
      clusterSelector: { matchExpressions: [{ key: 'env', operator: 'Equals', values: ['x'] }] },
    };
    const out = step(first.status, bad, fleet(), LATER, 2);
    const message =
      'invalid spec: spec.clusterSelector.matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator';
    expect(out.status.decisions).toEqual(first.status.decisions);
    expect(out.status.conditions?.map((c) => [c.type, c.status, c.reason, c.message])).toEqual([
      ['Ready', 'False', 'InvalidSpec', message],
      ['Stalled', 'True', 'InvalidSpec', message],
    ]);
    expect(out.status.observedGeneration).toBe(2);
    expect(out.event).toEqual({ type: 'Warning', reason: 'InvalidSpec', message });
    expect(step(out.status, bad, fleet(), LATER, 2).event).toBeUndefined();

    const fixed = step(out.status, prod, fleet(), LATER, 3);
    expect(fixed.status.conditions?.map((c) => [c.type, c.status])).toEqual([['Ready', 'True']]);
  });

  it('GIVEN one cluster THEN the message is singular', () => {
    const out = step(undefined, {}, [{ name: 'only', conditions: up }]);
    expect(ready(out.status)?.message).toBe('1 of 1 cluster selected');
  });
});
