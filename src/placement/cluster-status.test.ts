import type { V1Node } from '@kubernetes/client-node';
import { sumAllocatable, type ClusterFacts } from './cluster-probe.js';
import { nextClusterStatus, type ClusterProbeOutcome } from './cluster-status.js';

const t0 = new Date('2026-11-30T10:00:00Z');
const t1 = new Date('2026-11-30T10:05:00Z');
const facts: ClusterFacts = {
  version: 'v1.36.3',
  groupVersions: ['apps/v1', 'v1'],
  allocatable: { cpu: '16', memory: '64Gi', pods: '500' },
  readyNodes: 1,
};
const ok: ClusterProbeOutcome = { ok: true, facts };
const down: ClusterProbeOutcome = { ok: false, reason: 'Unreachable', message: 'connection refused' };
const noSecret: ClusterProbeOutcome = {
  ok: false,
  reason: 'SecretNotFound',
  message: 'Secret a/b not found',
};
const cond = (s: { conditions?: Array<{ type: string }> }, type: string) =>
  s.conditions?.find((c) => c.type === type);

describe('nextClusterStatus', () => {
  it('GIVEN a first successful probe THEN Available and Ready are True and one Normal event is due', () => {
    const { status, transition } = nextClusterStatus(undefined, 3, ok, t0);
    expect(status).toMatchObject({
      observedGeneration: 3,
      version: 'v1.36.3',
      apiGroups: { count: 2 },
      allocatable: facts.allocatable,
    });
    expect(cond(status, 'Available')).toMatchObject({
      status: 'True',
      reason: 'ClusterAvailable',
      lastTransitionTime: '2026-11-30T10:00:00Z',
    });
    expect(cond(status, 'Ready')).toMatchObject({ status: 'True' });
    expect(transition).toEqual({
      type: 'Normal',
      reason: 'ClusterAvailable',
      message: 'Kubernetes v1.36.3, 2 API group/versions, 1 ready node(s)',
    });
  });

  it('GIVEN an Available cluster WHEN probed fine again THEN no event and lastTransitionTime kept', () => {
    const first = nextClusterStatus(undefined, 1, ok, t0).status;
    const { status, transition } = nextClusterStatus(first, 1, ok, t1);
    expect(transition).toBeUndefined();
    expect(cond(status, 'Available')).toMatchObject({ lastTransitionTime: '2026-11-30T10:00:00Z' });
    expect(status).toEqual(first);
  });

  it('GIVEN an Available cluster WHEN unreachable THEN Available=False, retrying (not Stalled), facts kept, one Warning', () => {
    const first = nextClusterStatus(undefined, 1, ok, t0).status;
    const { status, transition } = nextClusterStatus(first, 1, down, t1);
    expect(cond(status, 'Available')).toMatchObject({
      status: 'False',
      reason: 'Unreachable',
      lastTransitionTime: '2026-11-30T10:05:00Z',
    });
    expect(cond(status, 'Ready')).toMatchObject({ status: 'False', reason: 'Unreachable' });
    expect(cond(status, 'Reconciling')).toMatchObject({ status: 'True', reason: 'ProgressingWithRetry' });
    expect(cond(status, 'Stalled')).toBeUndefined();
    expect(status.version).toBe('v1.36.3');
    expect(transition).toEqual({ type: 'Warning', reason: 'Unreachable', message: 'connection refused' });
    expect(nextClusterStatus(status, 1, down, t1).transition).toBeUndefined();
  });

  it.each([
    ['SecretNotFound', true],
    ['SecretKeyMissing', true],
    ['KubeconfigInvalid', true],
    ['Unauthorized', false],
    ['Unreachable', false],
    ['ProbeFailed', false],
  ] as const)('GIVEN failure %s THEN Stalled=%s', (reason, stalled) => {
    const { status } = nextClusterStatus(undefined, 1, { ok: false, reason, message: 'm' }, t0);
    expect(cond(status, 'Stalled') !== undefined).toBe(stalled);
    expect(cond(status, 'Available')).toMatchObject({ status: 'False', reason });
  });

  it('GIVEN a stalled cluster WHEN the reason changes THEN a new Warning is due', () => {
    const s = nextClusterStatus(undefined, 1, noSecret, t0).status;
    expect(nextClusterStatus(s, 1, down, t1).transition?.reason).toBe('Unreachable');
  });
});

describe('sumAllocatable', () => {
  const node = (ready: string, alloc: Record<string, string>, unschedulable = false): V1Node => ({
    spec: { unschedulable },
    status: { allocatable: alloc, conditions: [{ type: 'Ready', status: ready }] },
  });
  it('GIVEN ready, not-ready and cordoned nodes THEN only ready schedulable ones count', () => {
    expect(
      sumAllocatable([
        node('True', { cpu: '1500m', memory: '4Gi', pods: '110' }),
        node('True', { cpu: '2', memory: '4Gi', pods: '110' }),
        node('False', { cpu: '8', memory: '8Gi', pods: '110' }),
        node('True', { cpu: '8', memory: '8Gi', pods: '110' }, true),
      ]),
    ).toEqual({ readyNodes: 2, allocatable: { cpu: '3500m', memory: '8Gi', pods: '220' } });
  });
  it('GIVEN no nodes THEN zeros', () => {
    expect(sumAllocatable([])).toEqual({ readyNodes: 0, allocatable: { cpu: '0', memory: '0', pods: '0' } });
  });
});
