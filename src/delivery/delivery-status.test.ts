import type { DeliveryStatus } from '../api/delivery.js';
import {
  healthWaitStart,
  nextDeliveryStatus,
  pushHistory,
  truncate,
  type ClusterOutcome,
  type DeliveryOutcome,
} from './delivery-status.js';

const now = new Date('2026-11-30T12:00:00Z');
const later = new Date('2026-11-30T12:05:00Z');
const REV = 'main@sha1:bbbb';
const OLD = 'main@sha1:aaaa';

const cond = (s: DeliveryStatus, type: string) => s.conditions?.find((c) => c.type === type);
const healthy = (name: string, objects = 3): ClusterOutcome => ({
  name,
  phase: 'Healthy',
  revision: REV,
  objects,
  message: `${REV}: 0 created, 0 configured, ${objects} unchanged, 0 deleted`,
});
const applied = (clusters: ClusterOutcome[]): DeliveryOutcome => ({
  kind: 'Applied',
  revision: REV,
  clusters,
  removed: [],
});

const previous: DeliveryStatus = {
  observedGeneration: 1,
  lastAppliedRevision: OLD,
  history: [{ revision: OLD, appliedAt: '2026-11-29T00:00:00Z' }],
  clusters: [
    { name: 'member-1', phase: 'Healthy', revision: OLD, objects: 3 },
    { name: 'member-2', phase: 'Healthy', revision: OLD, objects: 3 },
  ],
};

describe('nextDeliveryStatus', () => {
  it('GIVEN every cluster healthy THEN Ready=True ReconciliationSucceeded, revision recorded, history grows', () => {
    const s = nextDeliveryStatus(previous, 2, applied([healthy('member-1'), healthy('member-2')]), now);
    expect(cond(s, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'ReconciliationSucceeded',
      observedGeneration: 2,
    });
    expect(cond(s, 'Reconciling')).toBeUndefined();
    expect(cond(s, 'Stalled')).toBeUndefined();
    expect(s.observedGeneration).toBe(2);
    expect(s.lastAppliedRevision).toBe(REV);
    expect(s.history?.map((h) => h.revision)).toEqual([REV, OLD]);
    expect(s.clusters?.map((c) => [c.name, c.phase, c.revision, c.objects])).toEqual([
      ['member-1', 'Healthy', REV, 3],
      ['member-2', 'Healthy', REV, 3],
    ]);
  });

  it('GIVEN a handled reconcile request THEN lastHandledReconcileAt records it, whatever the outcome', () => {
    const at = '2026-11-30T12:00:01.234Z';
    expect(
      nextDeliveryStatus(previous, 1, applied([healthy('member-1')]), now, at).lastHandledReconcileAt,
    ).toBe(at);
    expect(
      nextDeliveryStatus(previous, 1, { kind: 'ArtifactFailed', message: 'x' }, now, at)
        .lastHandledReconcileAt,
    ).toBe(at);
    expect(nextDeliveryStatus(previous, 1, applied([]), now).lastHandledReconcileAt).toBeUndefined();
  });

  it('GIVEN the same outcome twice THEN the second status is deep-equal (no status write)', () => {
    const once = nextDeliveryStatus(previous, 2, applied([healthy('member-1')]), now);
    const twice = nextDeliveryStatus(once, 2, applied([healthy('member-1')]), later);
    expect(twice).toEqual(once);
  });

  it('GIVEN a render failure THEN Ready=False BuildFailed and Stalled, clusters and revisions untouched', () => {
    const s = nextDeliveryStatus(
      previous,
      2,
      { kind: 'BuildFailed', revision: REV, message: 'deploy/a.yaml:3:1: invalid YAML: x' },
      now,
    );
    expect(cond(s, 'Ready')).toMatchObject({
      status: 'False',
      reason: 'BuildFailed',
      message: `revision ${REV}: deploy/a.yaml:3:1: invalid YAML: x; nothing was applied or pruned`,
    });
    expect(cond(s, 'Stalled')?.status).toBe('True');
    expect(s.clusters).toEqual(previous.clusters);
    expect(s.lastAppliedRevision).toBe(OLD);
    expect(s.history).toEqual(previous.history);
  });

  it.each(['ArtifactFailed', 'PlacementNotFound'] as const)(
    'GIVEN %s THEN Ready=False with that reason and a retry, clusters untouched',
    (kind) => {
      const s = nextDeliveryStatus(previous, 1, { kind, message: 'why' }, now);
      expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: kind, message: 'why' });
      expect(cond(s, 'Reconciling')).toMatchObject({ status: 'True', reason: 'ProgressingWithRetry' });
      expect(s.clusters).toEqual(previous.clusters);
    },
  );

  it('GIVEN one cluster unreachable THEN the others advance, it keeps its revision and objects, lastAppliedRevision stays', () => {
    const s = nextDeliveryStatus(
      previous,
      1,
      applied([
        healthy('member-1'),
        {
          name: 'member-2',
          phase: 'Unreachable',
          failure: 'ApplyFailed',
          message: 'unreachable, inventory kept: ECONNREFUSED',
        },
      ]),
      now,
    );
    expect(s.clusters).toEqual([
      expect.objectContaining({ name: 'member-1', phase: 'Healthy', revision: REV }),
      {
        name: 'member-2',
        phase: 'Unreachable',
        revision: OLD,
        objects: 3,
        message: 'unreachable, inventory kept: ECONNREFUSED',
      },
    ]);
    expect(s.lastAppliedRevision).toBe(OLD);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'ApplyFailed' });
    expect(cond(s, 'Ready')?.message).toContain('member-2: unreachable');
  });

  it('GIVEN failures of several kinds THEN the reason is the most severe (ApplyFailed > PruneFailed > HealthCheckFailed)', () => {
    const s = nextDeliveryStatus(
      undefined,
      1,
      applied([
        { ...healthy('a'), phase: 'Degraded', failure: 'HealthCheckFailed', message: 'timed out' },
        { ...healthy('b'), phase: 'Degraded', failure: 'PruneFailed', message: 'prune failed' },
      ]),
      now,
    );
    expect(cond(s, 'Ready')?.reason).toBe('PruneFailed');
    const h = nextDeliveryStatus(
      undefined,
      1,
      applied([{ ...healthy('a'), phase: 'Degraded', failure: 'HealthCheckFailed', message: 'timed out' }]),
      now,
    );
    expect(cond(h, 'Ready')?.reason).toBe('HealthCheckFailed');
    expect(cond(h, 'Stalled')?.status).toBe('True');
  });

  it('GIVEN a cluster still rolling out THEN Reconciling=True Progressing and Ready=Unknown', () => {
    const s = nextDeliveryStatus(
      previous,
      1,
      applied([
        healthy('member-1'),
        { ...healthy('member-2'), phase: 'Applying', message: 'waiting for health' },
      ]),
      now,
    );
    expect(cond(s, 'Reconciling')).toMatchObject({ status: 'True', reason: 'Progressing' });
    expect(cond(s, 'Ready')?.status).toBe('Unknown');
    expect(s.lastAppliedRevision).toBe(REV);
  });

  it('GIVEN a cluster removed from placement and pruned THEN it leaves status and the Ready message says so', () => {
    const s = nextDeliveryStatus(
      previous,
      1,
      {
        kind: 'Applied',
        revision: REV,
        clusters: [healthy('member-1')],
        removed: [
          {
            name: 'member-2',
            done: true,
            message: 'removed from placement: 3 objects pruned, inventory deleted',
          },
        ],
      },
      now,
    );
    expect(s.clusters?.map((c) => c.name)).toEqual(['member-1']);
    expect(cond(s, 'Ready')?.message).toContain(
      'removed from member-2 (removed from placement: 3 objects pruned, inventory deleted)',
    );
  });

  it('GIVEN a removal that could not finish THEN the cluster stays listed with the reason and Ready=False PruneFailed', () => {
    const s = nextDeliveryStatus(
      previous,
      1,
      {
        kind: 'Applied',
        revision: REV,
        clusters: [healthy('member-1')],
        removed: [
          {
            name: 'member-2',
            done: false,
            message: 'removed from placement; prune pending, inventory kept: down',
          },
        ],
      },
      now,
    );
    expect(s.clusters?.find((c) => c.name === 'member-2')).toMatchObject({
      phase: 'Unreachable',
      message: 'removed from placement; prune pending, inventory kept: down',
    });
    expect(cond(s, 'Ready')?.reason).toBe('PruneFailed');
  });

  it('GIVEN a pending cluster (no client yet) THEN Reconciling', () => {
    const s = nextDeliveryStatus(
      undefined,
      1,
      applied([{ name: 'x', phase: 'Pending', message: 'no client' }]),
      now,
    );
    expect(cond(s, 'Reconciling')?.status).toBe('True');
    expect(s.clusters).toEqual([{ name: 'x', phase: 'Pending', message: 'no client' }]);
  });

  it('GIVEN huge messages THEN status stays bounded', () => {
    const long = 'x'.repeat(100_000);
    const s = nextDeliveryStatus(
      undefined,
      1,
      applied(
        Array.from({ length: 50 }, (_, i) => ({
          ...healthy(`c-${i}`),
          phase: 'Degraded' as const,
          failure: 'ApplyFailed' as const,
          message: long,
        })),
      ),
      now,
    );
    expect(JSON.stringify(s).length).toBeLessThan(40_000);
  });
});

describe('pushHistory', () => {
  it('GIVEN a new revision THEN it goes first; a known one moves first; at most 10 are kept', () => {
    let h = pushHistory(undefined, 'r0', now);
    for (let i = 1; i < 12; i += 1) h = pushHistory(h, `r${i}`, now);
    expect(h.map((x) => x.revision)).toEqual(['r11', 'r10', 'r9', 'r8', 'r7', 'r6', 'r5', 'r4', 'r3', 'r2']);
    h = pushHistory(h, 'r5', later);
    expect(h.map((x) => x.revision).slice(0, 3)).toEqual(['r5', 'r11', 'r10']);
    expect(new Set(h.map((x) => x.revision)).size).toBe(h.length);
  });

  it('GIVEN the same head revision THEN the entry (and its time) is unchanged', () => {
    const h = pushHistory(undefined, 'r1', now);
    expect(pushHistory(h, 'r1', later)).toEqual(h);
  });
});

describe('healthWaitStart', () => {
  it('GIVEN Reconciling=True THEN its transition time; otherwise now', () => {
    const s: DeliveryStatus = {
      conditions: [
        {
          type: 'Reconciling',
          status: 'True',
          reason: 'Progressing',
          message: '',
          lastTransitionTime: '2026-11-30T11:58:00Z',
        },
      ],
    };
    expect(healthWaitStart(s, now)).toBe(Date.parse('2026-11-30T11:58:00Z'));
    expect(healthWaitStart(undefined, now)).toBe(now.getTime());
  });
});

describe('truncate', () => {
  it('GIVEN text longer than the limit THEN it is cut and marked', () => {
    expect(truncate('abcdef', 5)).toBe('ab...');
    expect(truncate('abc', 5)).toBe('abc');
  });
});
