import {
  applyNamespacing,
  boundedLabelValue,
  builtinScope,
  carriesOwnerLabels,
  objectId,
  objectRef,
  ownerLabels,
  parseObjectId,
  stageObjects,
  withOwnerLabels,
  type Manifest,
  type ObjectRef,
  type RenderedObject,
  type Scope,
} from './objects.js';

const obj = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
  extra: object = {},
): Manifest => ({
  apiVersion,
  kind,
  metadata: namespace === undefined ? { name } : { name, namespace },
  ...extra,
});
let line = 0;
const at = (object: Manifest, file = 'a.yaml'): RenderedObject => ({
  object,
  origin: { file, line: ++line, col: 1, docIndex: 0 },
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    Object.values(value).forEach(deepFreeze);
    Object.freeze(value);
  }
  return value;
}

describe('objectRef / objectId', () => {
  it.each<[Manifest, ObjectRef, string]>([
    [
      obj('apps/v1', 'Deployment', 'web', 'prod'),
      { group: 'apps', version: 'v1', kind: 'Deployment', namespace: 'prod', name: 'web' },
      'apps/Deployment/prod/web',
    ],
    [
      obj('v1', 'ConfigMap', 'cfg', 'prod'),
      { group: '', version: 'v1', kind: 'ConfigMap', namespace: 'prod', name: 'cfg' },
      '/ConfigMap/prod/cfg',
    ],
    [
      obj('v1', 'Namespace', 'prod'),
      { group: '', version: 'v1', kind: 'Namespace', name: 'prod' },
      '/Namespace//prod',
    ],
    [
      obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'system:view'),
      { group: 'rbac.authorization.k8s.io', version: 'v1', kind: 'ClusterRole', name: 'system:view' },
      'rbac.authorization.k8s.io/ClusterRole//system:view',
    ],
    [
      obj('v1', 'ConfigMap', 'cfg', ''),
      { group: '', version: 'v1', kind: 'ConfigMap', name: 'cfg' },
      '/ConfigMap//cfg',
    ],
  ])('GIVEN %j WHEN identified THEN ref and id are stable and parse back', (o, ref, id) => {
    expect(objectRef(o)).toEqual(ref);
    expect(objectId(objectRef(o))).toBe(id);
    const { version: _v, ...rest } = ref;
    expect(parseObjectId(id)).toEqual(rest);
  });

  it.each(['', 'a/b/c', 'a/b/c/d/e', 'g//ns/name', 'g/Kind/ns/'])(
    'GIVEN the malformed id %j WHEN parsed THEN undefined',
    (id) => {
      expect(parseObjectId(id)).toBeUndefined();
    },
  );
});

describe('builtinScope', () => {
  it.each<[string, string, Scope | undefined]>([
    ['', 'Namespace', 'Cluster'],
    ['', 'ConfigMap', 'Namespaced'],
    ['apps', 'Deployment', 'Namespaced'],
    ['rbac.authorization.k8s.io', 'ClusterRole', 'Cluster'],
    ['rbac.authorization.k8s.io', 'RoleBinding', 'Namespaced'],
    ['apiextensions.k8s.io', 'CustomResourceDefinition', 'Cluster'],
    ['storage.k8s.io', 'StorageClass', 'Cluster'],
    ['networking.k8s.io', 'IngressClass', 'Cluster'],
    ['networking.k8s.io', 'Ingress', 'Namespaced'],
    ['gateway.networking.k8s.io', 'GatewayClass', undefined],
    ['sluice.dev', 'Delivery', undefined],
  ])('GIVEN %j %s WHEN looked up THEN %s', (group, kind, scope) => {
    expect(builtinScope(group, kind)).toBe(scope);
  });
});

describe('applyNamespacing', () => {
  const lookupScope = (group: string, kind: string): Scope | undefined =>
    group === 'gateway.networking.k8s.io' ? (kind === 'GatewayClass' ? 'Cluster' : 'Namespaced') : undefined;

  it('GIVEN a mixed render WHEN namespaced with a target THEN only namespaced objects without a namespace get it, and stray namespaces on cluster-scoped objects are dropped', () => {
    const input = deepFreeze([
      at(obj('v1', 'ConfigMap', 'no-ns')),
      at(obj('v1', 'ConfigMap', 'explicit', 'other')),
      at(obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'reader', 'stray')),
      at(obj('v1', 'Namespace', 'team')),
      at(obj('gateway.networking.k8s.io/v1', 'HTTPRoute', 'route')),
      at(obj('gateway.networking.k8s.io/v1', 'GatewayClass', 'gc')),
      at(
        obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com', undefined, {
          spec: { group: 'example.com', scope: 'Namespaced', names: { kind: 'Widget' } },
        }),
      ),
      at(obj('example.com/v1', 'Widget', 'w')),
    ]);

    const result = applyNamespacing(input, { targetNamespace: 'team', lookupScope });

    expect(result.ok && result.objects.map((o) => objectId(objectRef(o.object)))).toEqual([
      '/ConfigMap/team/no-ns',
      '/ConfigMap/other/explicit',
      'rbac.authorization.k8s.io/ClusterRole//reader',
      '/Namespace//team',
      'gateway.networking.k8s.io/HTTPRoute/team/route',
      'gateway.networking.k8s.io/GatewayClass//gc',
      'apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com',
      'example.com/Widget/team/w',
    ]);
    expect(result.ok && result.objects[2]?.object.metadata).toEqual({ name: 'reader' });
    expect(result.ok && result.objects[1]).toBe(input[1]);
  });

  it('GIVEN no target namespace, an unknown kind and objects that collide after namespacing WHEN namespaced THEN every problem is reported at its origin', () => {
    const input = [
      { object: obj('v1', 'Secret', 's'), origin: { file: 'a.yaml', line: 3, col: 1, docIndex: 0 } },
      {
        object: obj('example.com/v1', 'Gizmo', 'g', 'x'),
        origin: { file: 'b.yaml', line: 1, col: 1, docIndex: 1 },
      },
      {
        object: obj('v1', 'Namespace', 'dup', 'x'),
        origin: { file: 'c.yaml', line: 1, col: 1, docIndex: 0 },
      },
      { object: obj('v1', 'Namespace', 'dup'), origin: { file: 'd.yaml', line: 7, col: 3, docIndex: 0 } },
    ];

    const result = applyNamespacing(input, { lookupScope });

    expect(result.ok ? [] : result.errors.map((e) => [e.code, e.message])).toEqual([
      [
        'MissingNamespace',
        'a.yaml:3:1: Secret s is namespaced but has no metadata.namespace, and the Delivery sets no targetNamespace',
      ],
      [
        'UnknownScope',
        'b.yaml:1:1: cannot tell whether example.com/Gizmo is namespaced: no CustomResourceDefinition for it in the render or on the cluster',
      ],
      ['DuplicateObject', 'd.yaml:7:3: duplicate object /Namespace//dup: also defined at c.yaml:1:1'],
    ]);
  });
});

describe('stageObjects', () => {
  it('GIVEN a render in arbitrary order WHEN staged THEN CRDs, Namespaces, cluster definitions, the rest and admission come in that order, each stage sorted', () => {
    const input = [
      at(obj('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'hook')),
      at(obj('apps/v1', 'Deployment', 'web', 'team')),
      at(obj('example.com/v1', 'Widget', 'w', 'team')),
      at(obj('v1', 'Service', 'web', 'team')),
      at(obj('v1', 'ConfigMap', 'b', 'team')),
      at(obj('v1', 'ConfigMap', 'a', 'team')),
      at(obj('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'bind')),
      at(obj('rbac.authorization.k8s.io/v1', 'ClusterRole', 'role')),
      at(obj('v1', 'Namespace', 'team')),
      at(obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com')),
      at(obj('v1', 'ServiceAccount', 'sa', 'team')),
    ];

    const stages = stageObjects(input).map((s) => s.map((o) => `${o.object.kind}/${o.object.metadata.name}`));

    expect(stages).toEqual([
      ['CustomResourceDefinition/widgets.example.com'],
      ['Namespace/team'],
      ['ClusterRole/role', 'ClusterRoleBinding/bind'],
      ['ServiceAccount/sa', 'ConfigMap/a', 'ConfigMap/b', 'Service/web', 'Deployment/web', 'Widget/w'],
      ['ValidatingWebhookConfiguration/hook'],
    ]);
  });

  it('GIVEN only namespaced workloads WHEN staged THEN there is one stage and no empty ones', () => {
    expect(stageObjects([at(obj('v1', 'ConfigMap', 'a', 'x'))])).toHaveLength(1);
    expect(stageObjects([])).toEqual([]);
  });
});

describe('owner labels', () => {
  it('GIVEN a Delivery on a cluster WHEN labelled THEN the labels name <ns>.<name> and the cluster', () => {
    expect(ownerLabels({ namespace: 'team', name: 'web', cluster: 'east-1' })).toEqual({
      'sluice.dev/delivery': 'team.web',
      'sluice.dev/cluster': 'east-1',
    });
  });

  it('GIVEN names longer than a label value allows WHEN labelled THEN the value is a stable ≤63-char prefix plus hash', () => {
    const long = `team.${'very-long-delivery-name.'.repeat(4)}end`;

    const value = boundedLabelValue(long);

    expect(value).toHaveLength(63);
    expect(value).toMatch(/^team\.very-long-delivery-name\.very-long-delivery-name-[0-9a-f]{10}$/);
    expect(boundedLabelValue(long)).toBe(value);
    expect(boundedLabelValue(`${long}x`)).not.toBe(value);
  });

  it('GIVEN a frozen manifest with its own labels WHEN owner labels are added THEN a copy carries both, owner labels win, and the input is untouched', () => {
    const input = deepFreeze(
      obj('v1', 'ConfigMap', 'c', 'x', {
        data: { a: '1' },
      }),
    );
    const withLabels = deepFreeze({
      ...input,
      metadata: { ...input.metadata, labels: { app: 'web', 'sluice.dev/delivery': 'evil.claim' } },
    });
    const owner = ownerLabels({ namespace: 'team', name: 'web', cluster: 'east' });

    const out = withOwnerLabels(withLabels, owner);

    expect(out.metadata.labels).toEqual({
      app: 'web',
      'sluice.dev/delivery': 'team.web',
      'sluice.dev/cluster': 'east',
    });
    expect(withLabels.metadata.labels).toEqual({ app: 'web', 'sluice.dev/delivery': 'evil.claim' });
    expect(out.data).toBe(input.data);
    expect(withOwnerLabels(input, owner).metadata.labels).toEqual(owner);
  });

  it.each<[string, boolean, Record<string, string> | undefined]>([
    [
      'all owner labels and more',
      true,
      { 'sluice.dev/delivery': 'team.web', 'sluice.dev/cluster': 'east', app: 'x' },
    ],
    ['only the delivery label', false, { 'sluice.dev/delivery': 'team.web' }],
    ['another cluster', false, { 'sluice.dev/delivery': 'team.web', 'sluice.dev/cluster': 'west' }],
    ['no labels', false, undefined],
  ])('GIVEN live labels with %s WHEN checked THEN owned is %s', (_what, expected, live) => {
    expect(carriesOwnerLabels(live, ownerLabels({ namespace: 'team', name: 'web', cluster: 'east' }))).toBe(
      expected,
    );
  });
});
