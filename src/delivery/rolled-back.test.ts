import { describe, expect, it } from '@jest/globals';
import { nextDeliveryStatus } from './delivery-status.js';
import { rolledBackBy, type ReleaseRollbacks } from './rolled-back.js';

const release = (
  name: string,
  delivery: string,
  revisions: string[],
  namespace = 'team',
): ReleaseRollbacks => ({
  metadata: { name, namespace },
  spec: { deliveryRef: { name: delivery } },
  status: { rolledBackRevisions: revisions },
});

describe('rolledBackBy', () => {
  const releases = [release('web', 'apps', ['main@sha1:bad']), release('api', 'other', ['main@sha1:worse'])];
  it.each<[string, string, string, string, string | undefined]>([
    [
      'the revision a release following the Delivery rolled back',
      'team',
      'apps',
      'main@sha1:bad',
      'team/web',
    ],
    ['another revision', 'team', 'apps', 'main@sha1:good', undefined],
    ['a revision rolled back by a release of another Delivery', 'team', 'apps', 'main@sha1:worse', undefined],
    ['the same names in another namespace', 'prod', 'apps', 'main@sha1:bad', undefined],
  ])('GIVEN %s THEN %s', (_w, ns, delivery, revision, expected) => {
    expect(rolledBackBy(releases, ns, delivery, revision)).toBe(expected);
  });
});

describe('nextDeliveryStatus: RevisionRolledBack', () => {
  it('GIVEN a rolled-back revision THEN Stalled RevisionRolledBack, clusters and lastAppliedRevision kept', () => {
    const prev = {
      lastAppliedRevision: 'main@sha1:good',
      clusters: [{ name: 'm1', revision: 'main@sha1:good', phase: 'Healthy' as const }],
    };
    const s = nextDeliveryStatus(
      prev,
      2,
      {
        kind: 'RevisionRolledBack',
        revision: 'main@sha1:bad',
        message: 'rolled back by CanaryRelease team/web',
      },
      new Date('2025-01-01T00:00:00Z'),
    );
    expect(s.lastAppliedRevision).toBe('main@sha1:good');
    expect(s.clusters).toEqual(prev.clusters);
    expect(s.conditions?.find((c) => c.type === 'Stalled')).toMatchObject({
      status: 'True',
      reason: 'RevisionRolledBack',
    });
    expect(s.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(
      /main@sha1:bad: rolled back by CanaryRelease team\/web; what runs is kept/,
    );
  });
});
