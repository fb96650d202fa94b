import { formatDuration } from '../api/duration.js';
import {
  aggregateHealth,
  healthVerdict,
  objectHealth,
  type AggregateHealth,
  type Health,
  type HealthVerdict,
  type LiveObject,
  type ObjectHealth,
} from './health.js';

const live = (
  apiVersion: string,
  kind: string,
  spec: unknown,
  status: unknown,
  generation = 1,
): LiveObject => ({
  apiVersion,
  kind,
  metadata: { name: 'x', generation },
  spec,
  status,
});
const cond = (type: string, status: string, reason = '', message = ''): object => ({
  type,
  status,
  reason,
  message,
});
const deploy = (status: object, spec: object = { replicas: 3 }): LiveObject =>
  live('apps/v1', 'Deployment', spec, { observedGeneration: 1, ...status });

describe('objectHealth', () => {
  it.each<[string, LiveObject | null | undefined, Health]>([
    ['a missing object', undefined, { status: 'Unknown', message: 'object not found' }],
    [
      'an object being deleted',
      { ...deploy({}), metadata: { deletionTimestamp: '2024-01-01T00:00:00Z' } },
      { status: 'InProgress', message: 'object is being deleted' },
    ],
    // Deployment
    [
      'a Deployment whose controller has not seen the new generation',
      live('apps/v1', 'Deployment', { replicas: 1 }, { observedGeneration: 1, updatedReplicas: 1 }, 2),
      { status: 'InProgress', message: 'waiting for the controller to observe generation 2 (observed 1)' },
    ],
    [
      'a just-created Deployment with no status',
      live('apps/v1', 'Deployment', {}, undefined),
      { status: 'InProgress', message: 'updated replicas: 0/1' },
    ],
    [
      'a Deployment half-way through a rollout',
      deploy({ replicas: 4, updatedReplicas: 2, availableReplicas: 3, readyReplicas: 3 }),
      { status: 'InProgress', message: 'updated replicas: 2/3' },
    ],
    [
      'a Deployment with old replicas still terminating',
      deploy({ replicas: 4, updatedReplicas: 3, availableReplicas: 3, readyReplicas: 3 }),
      { status: 'InProgress', message: 'pending termination: 1 old replicas' },
    ],
    [
      'a Deployment with updated but unavailable replicas',
      deploy({ replicas: 3, updatedReplicas: 3, availableReplicas: 1, readyReplicas: 1 }),
      { status: 'InProgress', message: 'available replicas: 1/3' },
    ],
    [
      'a Deployment past its progress deadline',
      deploy({
        replicas: 3,
        updatedReplicas: 1,
        conditions: [
          cond(
            'Progressing',
            'False',
            'ProgressDeadlineExceeded',
            'ReplicaSet "web-5d9" has timed out progressing.',
          ),
        ],
      }),
      {
        status: 'Failed',
        message: 'progress deadline exceeded: ReplicaSet "web-5d9" has timed out progressing.',
      },
    ],
    [
      'a fully rolled out Deployment',
      deploy({ replicas: 3, updatedReplicas: 3, availableReplicas: 3, readyReplicas: 3 }),
      { status: 'Current', message: 'deployment is available: 3 replicas' },
    ],
    [
      'a Deployment scaled to zero',
      deploy({}, { replicas: 0 }),
      { status: 'Current', message: 'deployment is available: 0 replicas' },
    ],
    [
      'a Deployment whose replicas field is garbage',
      deploy({ replicas: '3', updatedReplicas: '3' }, { replicas: 3 }),
      { status: 'InProgress', message: 'updated replicas: 0/3' },
    ],
    // StatefulSet
    [
      'a StatefulSet waiting for its new revision',
      live(
        'apps/v1',
        'StatefulSet',
        { replicas: 2 },
        {
          replicas: 2,
          readyReplicas: 2,
          updatedReplicas: 2,
          currentRevision: 'db-1',
          updateRevision: 'db-2',
        },
      ),
      { status: 'InProgress', message: 'waiting for revision db-2 (current db-1)' },
    ],
    [
      'a StatefulSet with a pod not ready',
      live('apps/v1', 'StatefulSet', { replicas: 3 }, { replicas: 3, readyReplicas: 2, updatedReplicas: 3 }),
      { status: 'InProgress', message: 'ready replicas: 2/3' },
    ],
    [
      'a rolled out StatefulSet',
      live(
        'apps/v1',
        'StatefulSet',
        { replicas: 2 },
        {
          replicas: 2,
          readyReplicas: 2,
          updatedReplicas: 2,
          currentRevision: 'db-2',
          updateRevision: 'db-2',
        },
      ),
      { status: 'Current', message: 'statefulset is ready: 2 replicas' },
    ],
    [
      'a StatefulSet with a partition whose updated share is done',
      live(
        'apps/v1',
        'StatefulSet',
        { replicas: 4, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } } },
        { replicas: 4, readyReplicas: 4, updatedReplicas: 1 },
      ),
      { status: 'Current', message: 'partitioned rollout complete: 1 updated' },
    ],
    [
      'an OnDelete StatefulSet',
      live('apps/v1', 'StatefulSet', { updateStrategy: { type: 'OnDelete' } }, {}),
      { status: 'Current', message: 'statefulset uses the OnDelete update strategy' },
    ],
    // DaemonSet
    [
      'a DaemonSet with no status yet',
      live('apps/v1', 'DaemonSet', {}, {}),
      { status: 'InProgress', message: 'waiting for status.desiredNumberScheduled' },
    ],
    [
      'a DaemonSet rolling out',
      live(
        'apps/v1',
        'DaemonSet',
        {},
        { desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 2, numberReady: 2 },
      ),
      { status: 'InProgress', message: 'available pods: 2/3' },
    ],
    [
      'a ready DaemonSet',
      live(
        'apps/v1',
        'DaemonSet',
        {},
        { desiredNumberScheduled: 3, updatedNumberScheduled: 3, numberAvailable: 3, numberReady: 3 },
      ),
      { status: 'Current', message: 'daemonset is ready: 3 pods' },
    ],
    // Job
    [
      'a running Job',
      live('batch/v1', 'Job', {}, { active: 1, failed: 1 }),
      { status: 'InProgress', message: 'job running: 1 active, 0 succeeded, 1 failed' },
    ],
    [
      'a completed Job',
      live('batch/v1', 'Job', {}, { succeeded: 1, conditions: [cond('Complete', 'True')] }),
      { status: 'Current', message: 'job completed: 1 succeeded' },
    ],
    [
      'a failed Job',
      live(
        'batch/v1',
        'Job',
        {},
        {
          conditions: [
            cond('Failed', 'True', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
          ],
        },
      ),
      {
        status: 'Failed',
        message: 'job failed: BackoffLimitExceeded: Job has reached the specified backoff limit',
      },
    ],
    [
      'a suspended Job',
      live('batch/v1', 'Job', { suspend: true }, {}),
      { status: 'Current', message: 'job is suspended' },
    ],
    // CRD
    [
      'an established CRD',
      live(
        'apiextensions.k8s.io/v1',
        'CustomResourceDefinition',
        {},
        { conditions: [cond('NamesAccepted', 'True'), cond('Established', 'True')] },
      ),
      { status: 'Current', message: 'CRD is established' },
    ],
    [
      'a CRD not yet established',
      live('apiextensions.k8s.io/v1', 'CustomResourceDefinition', {}, {}),
      { status: 'InProgress', message: 'waiting for the CRD to be established' },
    ],
    [
      'a CRD whose names clash',
      live(
        'apiextensions.k8s.io/v1',
        'CustomResourceDefinition',
        {},
        {
          conditions: [cond('NamesAccepted', 'False', 'MultipleNamesNotAllowed', '"w" is already in use')],
        },
      ),
      { status: 'Failed', message: 'names not accepted: MultipleNamesNotAllowed: "w" is already in use' },
    ],
    // Namespace, PVC, Pod
    [
      'an active Namespace',
      live('v1', 'Namespace', {}, { phase: 'Active' }),
      { status: 'Current', message: 'namespace is active' },
    ],
    [
      'a terminating Namespace',
      live('v1', 'Namespace', {}, { phase: 'Terminating' }),
      { status: 'InProgress', message: 'namespace is terminating' },
    ],
    [
      'a bound PVC',
      live('v1', 'PersistentVolumeClaim', {}, { phase: 'Bound' }),
      { status: 'Current', message: 'claim is bound' },
    ],
    [
      'a pending PVC',
      live('v1', 'PersistentVolumeClaim', {}, {}),
      { status: 'InProgress', message: 'claim is Pending' },
    ],
    [
      'a lost PVC',
      live('v1', 'PersistentVolumeClaim', {}, { phase: 'Lost' }),
      { status: 'Failed', message: 'claim lost its volume' },
    ],
    [
      'a succeeded Pod',
      live('v1', 'Pod', {}, { phase: 'Succeeded' }),
      { status: 'Current', message: 'pod succeeded' },
    ],
    [
      'a starting Pod',
      live('v1', 'Pod', {}, { phase: 'Pending', conditions: [cond('Ready', 'False', 'ContainersNotReady')] }),
      { status: 'InProgress', message: 'pod is Pending: ContainersNotReady' },
    ],
    // Objects without status
    [
      'a Service',
      live('v1', 'Service', { type: 'LoadBalancer' }, {}),
      { status: 'Current', message: 'no readiness to wait for' },
    ],
    [
      'a ConfigMap',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} },
      { status: 'Current', message: 'no readiness to wait for' },
    ],
    [
      'a Secret',
      { apiVersion: 'v1', kind: 'Secret' },
      { status: 'Current', message: 'no readiness to wait for' },
    ],
    // Anything with conditions
    [
      'a custom resource that is Ready',
      live('example.com/v1', 'Widget', {}, { conditions: [cond('Ready', 'True', 'Succeeded', 'all good')] }),
      { status: 'Current', message: 'Ready: Succeeded: all good' },
    ],
    [
      'a custom resource that is not Ready yet',
      live('example.com/v1', 'Widget', {}, { conditions: [cond('Ready', 'False', 'Progressing')] }),
      { status: 'InProgress', message: 'Ready=False: Progressing' },
    ],
    [
      'a custom resource whose Ready describes an older generation',
      live(
        'example.com/v1',
        'Widget',
        {},
        { conditions: [{ ...cond('Ready', 'True'), observedGeneration: 1 }] },
        2,
      ),
      { status: 'InProgress', message: 'Ready describes generation 1, not 2' },
    ],
    [
      'a custom resource that is Stalled',
      live(
        'example.com/v1',
        'Widget',
        {},
        {
          conditions: [
            cond('Ready', 'False', 'BuildFailed'),
            cond('Stalled', 'True', 'BuildFailed', 'kustomize build failed'),
          ],
        },
      ),
      { status: 'Failed', message: 'Stalled: BuildFailed: kustomize build failed' },
    ],
    [
      'a custom resource that is Reconciling',
      live(
        'example.com/v1',
        'Widget',
        {},
        { conditions: [cond('Reconciling', 'True', 'Progressing', 'applying')] },
      ),
      { status: 'InProgress', message: 'Reconciling: Progressing: applying' },
    ],
  ])('GIVEN %s WHEN assessed THEN %j', (_what, obj, expected) => {
    expect(objectHealth(obj)).toEqual(expected);
  });
});

describe('aggregateHealth', () => {
  const h = (id: string, status: Health['status'], message = status.toLowerCase()): ObjectHealth => ({
    id,
    health: { status, message },
  });

  it.each<[string, ObjectHealth[], Pick<AggregateHealth, 'status' | 'message'>]>([
    ['an empty set', [], { status: 'Current', message: 'all 0 objects are current' }],
    [
      'all current',
      [h('a', 'Current'), h('b', 'Current')],
      { status: 'Current', message: 'all 2 objects are current' },
    ],
    [
      'one in progress',
      [h('a', 'Current'), h('b', 'InProgress', 'updated replicas: 1/3')],
      { status: 'InProgress', message: '1/2 objects not current: b: InProgress: updated replicas: 1/3' },
    ],
    [
      'unknown beats in progress',
      [h('a', 'InProgress'), h('b', 'Unknown', 'object not found')],
      {
        status: 'Unknown',
        message: '2/2 objects not current: b: Unknown: object not found; a: InProgress: inprogress',
      },
    ],
    [
      'failed beats everything and is listed first',
      [h('a', 'Unknown'), h('b', 'Failed', 'job failed'), h('c', 'InProgress')],
      {
        status: 'Failed',
        message:
          '3/3 objects not current: b: Failed: job failed; a: Unknown: unknown; c: InProgress: inprogress',
      },
    ],
    [
      'many not current',
      Array.from({ length: 7 }, (_, i) => h(`o${i}`, 'InProgress')),
      {
        status: 'InProgress',
        message:
          '7/7 objects not current: o0: InProgress: inprogress; o1: InProgress: inprogress; o2: InProgress: inprogress; o3: InProgress: inprogress; o4: InProgress: inprogress; and 2 more',
      },
    ],
  ])('GIVEN %s WHEN aggregated THEN %j', (_what, items, expected) => {
    expect(aggregateHealth(items)).toMatchObject(expected);
  });

  it('GIVEN a mixed set WHEN aggregated THEN the counts add up', () => {
    expect(aggregateHealth([h('a', 'Current'), h('b', 'Current'), h('c', 'Failed')]).counts).toEqual({
      Current: 2,
      InProgress: 0,
      Failed: 1,
      Unknown: 0,
    });
  });
});

describe('healthVerdict', () => {
  const agg = (status: AggregateHealth['status']): AggregateHealth => ({
    status,
    message: `set is ${status}`,
    counts: { Current: 0, InProgress: 0, Failed: 0, Unknown: 0 },
  });
  const t0 = Date.UTC(2024, 0, 1);

  it.each<[string, AggregateHealth, number, HealthVerdict]>([
    ['current', agg('Current'), 1_000, { kind: 'Healthy', message: 'set is Current' }],
    ['failed before the deadline', agg('Failed'), 1_000, { kind: 'Failed', message: 'set is Failed' }],
    [
      'in progress early',
      agg('InProgress'),
      1_000,
      { kind: 'Waiting', message: 'set is InProgress', requeueAfterMs: 5_000 },
    ],
    [
      'in progress near the deadline',
      agg('InProgress'),
      298_000,
      { kind: 'Waiting', message: 'set is InProgress', requeueAfterMs: 2_000 },
    ],
    [
      'unknown early',
      agg('Unknown'),
      0,
      { kind: 'Waiting', message: 'set is Unknown', requeueAfterMs: 5_000 },
    ],
    [
      'in progress at the deadline',
      agg('InProgress'),
      300_000,
      { kind: 'TimedOut', message: 'health check timed out after 5m0s: set is InProgress' },
    ],
    [
      'unknown past the deadline',
      agg('Unknown'),
      400_000,
      { kind: 'TimedOut', message: 'health check timed out after 5m0s: set is Unknown' },
    ],
  ])(
    'GIVEN a set that is %s WHEN %d ms have passed of a 5m wait THEN the verdict is %j',
    (_what, a, elapsed, expected) => {
      expect(healthVerdict(a, { startedAt: t0, now: t0 + elapsed, timeoutMs: 300_000 })).toEqual(expected);
    },
  );
});

describe('formatDuration', () => {
  it.each<[number, string]>([
    [0, '0ms'],
    [250, '250ms'],
    [12_345, '12s'],
    [90_000, '1m30s'],
    [3_723_000, '1h2m3s'],
  ])('GIVEN %d ms WHEN formatted THEN %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
