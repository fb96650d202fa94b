import { afterEach, describe, expect, it } from '@jest/globals';
import { V1MicroTime } from '@kubernetes/client-node';
import { LeaderElector, type LeaderElectionOptions } from '../../src/kube/leader-election.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';

const hub = testClient('hub');
const NAMESPACE = 'default';
// Short periods keep the test quick; the relations are client-go's (retry < renew deadline < lease).
const TIMING = { leaseDurationSeconds: 3, renewDeadlineSeconds: 2, retryPeriodSeconds: 0.25 };

describe('LeaderElector on a real Lease', () => {
  const electors: LeaderElector[] = [];
  const leases: string[] = [];

  afterEach(async () => {
    await Promise.all(electors.splice(0).map((e) => e.stop({ release: false })));
    await Promise.all(
      leases
        .splice(0)
        .map((name) =>
          hub.coordination.deleteNamespacedLease({ name, namespace: NAMESPACE }).catch(() => undefined),
        ),
    );
  });

  function candidates(extra: Partial<LeaderElectionOptions> = {}) {
    const name = uniqueName('lease');
    leases.push(name);
    const events: string[] = [];
    const make = (identity: string) => {
      const e = new LeaderElector({
        client: testClient('hub'),
        namespace: NAMESPACE,
        name,
        identity,
        ...TIMING,
        onStartedLeading: () => events.push(`${identity} started`),
        onStoppedLeading: () => events.push(`${identity} stopped`),
        ...extra,
      });
      electors.push(e);
      return e;
    };
    return { name, events, a: make('a'), b: make('b') };
  }

  async function holder(name: string): Promise<string | undefined> {
    const lease = await hub.coordination.readNamespacedLease({ name, namespace: NAMESPACE });
    return lease.spec?.holderIdentity;
  }

  /** Watches isLeader of both for `ms`, failing if both ever lead at once. */
  async function neverBoth(a: LeaderElector, b: LeaderElector, ms: number): Promise<void> {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      expect(a.isLeader && b.isLeader).toBe(false);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('GIVEN two candidates on one Lease THEN exactly one leads, and keeps leading while it renews', async () => {
    const { name, events, a, b } = candidates();
    a.start();
    b.start();
    const leader = await eventually(async () => (a.isLeader ? a : b.isLeader ? b : undefined), 30_000);
    const standby = leader === a ? b : a;
    // Longer than the lease duration: the leader's renewals must keep the standby out.
    await neverBoth(a, b, 4000);
    expect(leader.isLeader).toBe(true);
    expect(standby.isLeader).toBe(false);
    expect(await holder(name)).toBe(leader.identity);
    expect(standby.leader).toBe(leader.identity);
    expect(events).toEqual([`${leader.identity} started`]);
  });

  it('GIVEN a leader WHEN it stops THEN it releases the Lease and the standby takes over', async () => {
    const { name, events, a, b } = candidates();
    a.start();
    await eventually(async () => a.isLeader, 30_000);
    b.start();
    await eventually(async () => b.leader === 'a', 30_000);

    await a.stop();
    expect(a.isLeader).toBe(false);
    // Released, not left to expire: the holder is cleared (or already the standby).
    expect(['', 'b']).toContain(await holder(name));

    await eventually(async () => b.isLeader, 30_000);
    expect(await holder(name)).toBe('b');
    const lease = await hub.coordination.readNamespacedLease({ name, namespace: NAMESPACE });
    expect(lease.spec?.leaseTransitions).toBe(1);
    expect(events).toEqual(['a started', 'b started']);
  });

  it('GIVEN a leader that crashes (no release) THEN the standby waits for the lease to expire, then leads', async () => {
    const { name, a, b } = candidates();
    a.start();
    await eventually(async () => a.isLeader, 30_000);
    b.start();
    await eventually(async () => b.leader === 'a', 30_000);

    await a.stop({ release: false });
    // The lease was renewed moments ago: it is still a's, and b must not take it yet.
    expect(await holder(name)).toBe('a');
    expect(b.isLeader).toBe(false);

    await eventually(async () => b.isLeader, 30_000);
    expect(await holder(name)).toBe('b');
  });

  it('GIVEN a leader WHEN another holder takes the Lease THEN it stops leading and calls onStoppedLeading once', async () => {
    const { name, events, a } = candidates();
    a.start();
    await eventually(async () => a.isLeader, 30_000);

    const lease = await hub.coordination.readNamespacedLease({ name, namespace: NAMESPACE });
    const now = new V1MicroTime(Date.now());
    await hub.coordination.replaceNamespacedLease({
      name,
      namespace: NAMESPACE,
      body: {
        ...lease,
        spec: {
          ...lease.spec,
          holderIdentity: 'intruder',
          renewTime: now,
          acquireTime: now,
          leaseDurationSeconds: 60,
        },
      },
    });

    await eventually(async () => !a.isLeader, 30_000);
    expect(events).toEqual(['a started', 'a stopped']);
    expect(await holder(name)).toBe('intruder');
  });

  it('GIVEN a Lease in a namespace that does not exist THEN the candidate never leads and never throws', async () => {
    const e = new LeaderElector({
      client: hub,
      namespace: uniqueName('missing'),
      name: 'x',
      identity: 'lonely',
      ...TIMING,
    });
    electors.push(e);
    e.start();
    await new Promise((r) => setTimeout(r, 1000));
    expect(e.isLeader).toBe(false);
  });

  it('GIVEN bad timings THEN construction fails with the rule broken', () => {
    const base = { client: hub, namespace: NAMESPACE, name: 'x', identity: 'i' };
    expect(() => new LeaderElector({ ...base, leaseDurationSeconds: 2, renewDeadlineSeconds: 2 })).toThrow(
      /renewDeadlineSeconds/,
    );
    expect(() => new LeaderElector({ ...base, leaseDurationSeconds: 1.5 })).toThrow(/whole number/);
    expect(() => new LeaderElector({ ...base, retryPeriodSeconds: 10 })).toThrow(/retryPeriodSeconds/);
  });
});
