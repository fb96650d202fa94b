import {
  comparable,
  hasDrifted,
  isDeclarativeOwner,
  planOwnership,
  type ManagedFieldsEntry,
} from './drift.js';
import type { Manifest } from './objects.js';

const live = (over: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'c',
    namespace: 'n',
    uid: 'u-1',
    resourceVersion: '41',
    generation: 3,
    creationTimestamp: '2026-01-01T00:00:00Z',
    managedFields: [{ manager: 'sluice-delivery', operation: 'Apply', time: '2026-01-01T00:00:00Z' }],
    labels: { a: 'b' },
    ...meta,
  },
  data: { k: 'v' },
  ...over,
});

describe('hasDrifted', () => {
  it('GIVEN a dry-run result equal to live but for volatile metadata and status THEN no drift', () => {
    const dry = live(
      { status: { anything: true } },
      { resourceVersion: '42', managedFields: [{ manager: 'x', time: 'later' }], generation: 4 },
    );
    expect(hasDrifted(dry, live())).toBe(false);
  });

  it.each([
    ['a data value', live({ data: { k: 'w' } })],
    ['a label', live({}, { labels: { a: 'c' } })],
    ['an annotation added', live({}, { annotations: { x: 'y' } })],
    ['a removed field', { ...live(), data: undefined }],
  ])('GIVEN %s changed THEN drift', (_, dry) => {
    expect(hasDrifted(dry, live())).toBe(true);
  });

  it('GIVEN no live object THEN drift (it must be created)', () => {
    expect(hasDrifted(live(), undefined)).toBe(true);
  });

  it('GIVEN an object THEN comparable drops status and volatile metadata without touching the input', () => {
    const obj = live({ status: { s: 1 } });
    expect(comparable(obj)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'n', labels: { a: 'b' } },
      data: { k: 'v' },
    });
    expect(obj.metadata.uid).toBe('u-1');
  });
});

const deployment: Manifest = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'prod' },
  spec: {
    replicas: 2,
    template: {
      spec: {
        containers: [
          { name: 'web', image: 'web:1' },
          { name: 'side', image: 'side:1' },
        ],
      },
    },
  },
};

const withFields = (...entries: ManagedFieldsEntry[]) => ({ metadata: { managedFields: entries } });
const sluice: ManagedFieldsEntry = {
  manager: 'sluice-delivery',
  operation: 'Apply',
  fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:template': {} } },
};

describe('isDeclarativeOwner', () => {
  it.each<[ManagedFieldsEntry, boolean]>([
    [{ manager: 'hpa-sim', operation: 'Apply' }, true],
    [{ manager: 'sluice-rollout', operation: 'Apply' }, true],
    [{ manager: 'kube-controller-manager', operation: 'Update', subresource: 'scale' }, true],
    [{ manager: 'kubectl-edit', operation: 'Update' }, false],
    [{ manager: 'kubectl-client-side-apply', operation: 'Update' }, false],
  ])('GIVEN %j THEN declarative=%s', (entry, expected) => {
    expect(isDeclarativeOwner(entry)).toBe(expected);
  });
});

describe('planOwnership (the HPA rule)', () => {
  it('GIVEN no live object THEN the object is applied as rendered, without force', () => {
    expect(planOwnership(deployment, undefined, 'sluice-delivery')).toEqual({
      object: deployment,
      yielded: [],
      reverted: [],
      force: false,
    });
  });

  it('GIVEN only Sluice and status writers own fields THEN nothing changes', () => {
    const plan = planOwnership(
      deployment,
      withFields(sluice, {
        manager: 'kube-controller-manager',
        operation: 'Update',
        subresource: 'status',
        fieldsV1: { 'f:status': { 'f:replicas': {} } },
      }),
      'sluice-delivery',
    );
    expect(plan.object).toBe(deployment);
    expect(plan.force).toBe(false);
  });

  it('GIVEN an autoscaler applying spec.replicas THEN spec.replicas is dropped (not fought) and no force is used', () => {
    const plan = planOwnership(
      deployment,
      withFields(sluice, {
        manager: 'hpa-sim',
        operation: 'Apply',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      }),
      'sluice-delivery',
    );
    expect(plan.yielded).toEqual([{ path: 'spec.replicas', manager: 'hpa-sim' }]);
    expect(plan.force).toBe(false);
    expect((plan.object.spec as { replicas?: number }).replicas).toBeUndefined();
    expect((plan.object.spec as { template: unknown }).template).toEqual(
      (deployment.spec as { template: unknown }).template,
    );
    // The input is not modified.
    expect((deployment.spec as { replicas: number }).replicas).toBe(2);
  });

  it('GIVEN the HPA controller writing through the scale subresource THEN spec.replicas is yielded too', () => {
    const plan = planOwnership(
      deployment,
      withFields({
        manager: 'kube-controller-manager',
        operation: 'Update',
        subresource: 'scale',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      }),
      'sluice-delivery',
    );
    expect(plan.yielded.map((c) => c.path)).toEqual(['spec.replicas']);
  });

  it('GIVEN another applier owning one container image THEN only that leaf is dropped; the item and its key stay', () => {
    const plan = planOwnership(
      deployment,
      withFields({
        manager: 'sluice-rollout',
        operation: 'Apply',
        fieldsV1: {
          'f:spec': {
            'f:template': {
              'f:spec': { 'f:containers': { 'k:{"name":"web"}': { '.': {}, 'f:name': {}, 'f:image': {} } } },
            },
          },
        },
      }),
      'sluice-delivery',
    );
    expect(plan.yielded).toEqual([
      { path: 'spec.template.spec.containers[{"name":"web"}].image', manager: 'sluice-rollout' },
    ]);
    const containers = (plan.object.spec as { template: { spec: { containers: unknown[] } } }).template.spec
      .containers;
    expect(containers).toEqual([{ name: 'web' }, { name: 'side', image: 'side:1' }]);
  });

  it('GIVEN a manual edit (an Update) of a field Git sets THEN it is kept and the apply is forced, so the edit is reverted', () => {
    const plan = planOwnership(
      deployment,
      withFields(sluice, {
        manager: 'kubectl-edit',
        operation: 'Update',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      }),
      'sluice-delivery',
    );
    expect(plan.object).toBe(deployment);
    expect(plan.reverted).toEqual([{ path: 'spec.replicas', manager: 'kubectl-edit' }]);
    expect(plan.force).toBe(true);
  });

  it('GIVEN a field both yielded to an applier and edited by hand THEN it is not sent, so nothing is forced', () => {
    const replicas = { 'f:spec': { 'f:replicas': {} } };
    const plan = planOwnership(
      deployment,
      withFields(
        { manager: 'kubectl-edit', operation: 'Update', fieldsV1: replicas },
        { manager: 'hpa-sim', operation: 'Apply', fieldsV1: replicas },
      ),
      'sluice-delivery',
    );
    expect(plan.reverted).toEqual([]);
    expect(plan.force).toBe(false);
  });

  it('GIVEN a manual edit of a field Git does not set THEN it is neither reverted nor forced', () => {
    const plan = planOwnership(
      deployment,
      withFields({
        manager: 'kubectl-edit',
        operation: 'Update',
        fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:x': {} } } },
      }),
      'sluice-delivery',
    );
    expect(plan.force).toBe(false);
  });
});
