import type { Cluster } from '../api/cluster.js';
import type { PlacementRuleSpec, ResourceHint } from '../api/placement-rule.js';
import { clusterFacts, decide, type ClusterFacts, type DecideInput, type DecideResult } from './decide.js';

const NOW = new Date('2024-05-01T12:00:00Z');
const ago = (seconds: number): string =>
  new Date(NOW.getTime() - seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

const available = [{ type: 'Available', status: 'True' }];
const unavailable = [{ type: 'Available', status: 'False' }];

const cluster = (
  name: string,
  labels: Record<string, string> = {},
  extra: Partial<ClusterFacts> = {},
): ClusterFacts => ({
  name,
  labels,
  conditions: available,
  ...extra,
});

const fleet: ClusterFacts[] = [
  cluster('east', { env: 'prod', region: 'us' }, { allocatable: { cpu: '8', memory: '32Gi' } }),
  cluster('west', { env: 'prod', region: 'us' }, { allocatable: { cpu: '16', memory: '16Gi' } }),
  cluster('euro', { env: 'prod', region: 'eu' }, { allocatable: { cpu: '7500m', memory: '64Gi' } }),
  cluster('dev', { env: 'dev' }, { allocatable: { cpu: '2', memory: '8Gi' } }),
];

function run(spec: PlacementRuleSpec, over: Partial<DecideInput> = {}): Extract<DecideResult, { ok: true }> {
  const result = decide({ spec, clusters: fleet, debounceMs: 30_000, ...over }, NOW);
  if (!result.ok) throw new Error(result.errors.map((e) => e.message).join('\n'));
  return result;
}
const names = (r: Extract<DecideResult, { ok: true }>): string[] => r.decisions.map((d) => d.clusterName);

describe('decide: selection', () => {
  it.each<[string, PlacementRuleSpec, string[]]>([
    ['no selector at all', {}, ['dev', 'east', 'euro', 'west']],
    ['an empty selector {}', { clusterSelector: {} }, ['dev', 'east', 'euro', 'west']],
    ['matchLabels env=prod', { clusterSelector: { matchLabels: { env: 'prod' } } }, ['east', 'euro', 'west']],
    [
      'matchExpressions region NotIn [eu] (absent labels match)',
      { clusterSelector: { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['eu'] }] } },
      ['dev', 'east', 'west'],
    ],
    [
      'a clusters list, which replaces the selector',
      { clusterSelector: { matchLabels: { env: 'prod' } }, clusters: [{ name: 'dev' }, { name: 'west' }] },
      ['dev', 'west'],
    ],
    [
      'an empty clusters list (the selector applies)',
      { clusterSelector: { matchLabels: { region: 'eu' } }, clusters: [] },
      ['euro'],
    ],
    ['clusterReplicas 0', { clusterReplicas: 0 }, []],
  ])('GIVEN %s WHEN decided THEN the decisions are %j, sorted by name', (_what, spec, expected) => {
    expect(names(run(spec))).toEqual(expected);
  });

  it('GIVEN reasons matter to on-call WHEN decided THEN each decision says why it was chosen', () => {
    expect(run({}).decisions[0]).toEqual({ clusterName: 'dev', reason: 'no clusterSelector: every cluster' });
    expect(run({ clusterSelector: {} }).decisions[0]?.reason).toBe('empty clusterSelector: every cluster');
    expect(run({ clusters: [{ name: 'dev' }] }).decisions[0]?.reason).toBe('named in spec.clusters');
    expect(
      run({
        clusterSelector: { matchLabels: { env: 'dev' } },
        clusterConditions: [{ type: 'Available', status: 'True' }],
      }).decisions,
    ).toEqual([{ clusterName: 'dev', reason: 'matches clusterSelector; Available=True' }]);
  });

  it('GIVEN a clusters list naming a cluster that does not exist WHEN decided THEN the rest are chosen and the name is reported', () => {
    const r = run({ clusters: [{ name: 'east' }, { name: 'mars' }] });

    expect(names(r)).toEqual(['east']);
    expect(r.messages).toEqual(['spec.clusters names cluster mars, which does not exist']);
  });
});

describe('decide: clusterConditions', () => {
  const clusters = [
    cluster(
      'a',
      {},
      {
        conditions: [
          { type: 'Available', status: 'True' },
          { type: 'Joined', status: 'True' },
        ],
      },
    ),
    cluster('b', {}, { conditions: [{ type: 'Available', status: 'True' }] }),
    cluster(
      'c',
      {},
      {
        conditions: [
          { type: 'Available', status: 'False' },
          { type: 'Joined', status: 'True' },
        ],
      },
    ),
    cluster('d', {}, { conditions: undefined }),
  ];

  it.each<[string, PlacementRuleSpec['clusterConditions'], string[]]>([
    ['none', undefined, ['a', 'b', 'c', 'd']],
    ['Available=True', [{ type: 'Available', status: 'True' }], ['a', 'b']],
    [
      'Available=True and Joined=True (all must match)',
      [
        { type: 'Available', status: 'True' },
        { type: 'Joined', status: 'True' },
      ],
      ['a'],
    ],
    ['Available=False', [{ type: 'Available', status: 'False' }], ['c']],
  ])('GIVEN conditions %s WHEN decided THEN %j', (_what, clusterConditions, expected) => {
    expect(names(run({ clusterConditions }, { clusters }))).toEqual(expected);
  });
});

describe('decide: clusterReplicas and resourceHint', () => {
  it.each<[string, PlacementRuleSpec, string[]]>([
    ['no hint: by name', { clusterReplicas: 2 }, ['dev', 'east']],
    // The schema defaults order; an object stored before that default still decides Desc.
    [
      'most cpu (Desc when order is absent)',
      { clusterReplicas: 2, resourceHint: { type: 'cpu' } as ResourceHint },
      ['east', 'west'],
    ],
    ['least cpu', { clusterReplicas: 2, resourceHint: { type: 'cpu', order: 'Asc' } }, ['dev', 'euro']],
    ['most memory', { clusterReplicas: 1, resourceHint: { type: 'memory', order: 'Desc' } }, ['euro']],
    [
      'a cap larger than the fleet',
      { clusterReplicas: 10, resourceHint: { type: 'cpu', order: 'Desc' } },
      ['dev', 'east', 'euro', 'west'],
    ],
  ])('GIVEN %s WHEN decided THEN %j', (_what, spec, expected) => {
    expect(names(run(spec))).toEqual(expected);
  });

  it('GIVEN a cap and a hint WHEN decided THEN reasons name the capacity and the left-out clusters are reported', () => {
    const r = run({ clusterReplicas: 2, resourceHint: { type: 'cpu', order: 'Desc' } });

    expect(r.decisions).toEqual([
      { clusterName: 'east', reason: 'no clusterSelector: every cluster; allocatable cpu 8' },
      { clusterName: 'west', reason: 'no clusterSelector: every cluster; allocatable cpu 16' },
    ]);
    expect(r.messages).toEqual(['not chosen (clusterReplicas 2 reached): euro, dev']);
  });

  it('GIVEN clusters with missing or unreadable capacity WHEN ranked THEN they come last, by name, and the bad quantity is reported', () => {
    const clusters = [
      cluster('a', {}, { allocatable: { cpu: 'lots' } }),
      cluster('b', {}),
      cluster('c', {}, { allocatable: { cpu: '500m' } }),
      cluster('d', {}, { allocatable: { cpu: '1' } }),
    ];

    const r = run({ clusterReplicas: 3, resourceHint: { type: 'cpu', order: 'Asc' } }, { clusters });

    expect(names(r)).toEqual(['a', 'c', 'd']);
    expect(r.messages).toEqual([
      'cluster a: status.allocatable.cpu: "lots" is not a Kubernetes quantity (e.g. 500m, 2, 64Gi, 1e3, 1.5Ki)',
      'not chosen (clusterReplicas 3 reached): b',
    ]);
  });

  it('GIVEN previous decisions WHEN a bigger cluster appears THEN the previous ones stay (sticky)', () => {
    const r = run(
      { clusterReplicas: 2, resourceHint: { type: 'cpu', order: 'Desc' } },
      { previousDecisions: [{ clusterName: 'dev' }, { clusterName: 'euro' }] },
    );

    expect(r.decisions).toEqual([
      { clusterName: 'dev', reason: 'no clusterSelector: every cluster; kept from previous decisions' },
      { clusterName: 'euro', reason: 'no clusterSelector: every cluster; kept from previous decisions' },
    ]);
  });

  it('GIVEN one sticky decision and a cap of two WHEN decided THEN the free slot goes to the best new cluster', () => {
    const r = run(
      { clusterReplicas: 2, resourceHint: { type: 'cpu', order: 'Desc' } },
      { previousDecisions: [{ clusterName: 'dev' }] },
    );

    expect(names(r)).toEqual(['dev', 'west']);
  });
});

describe('decide: debounce of failing decided clusters', () => {
  const spec: PlacementRuleSpec = {
    clusterSelector: { matchLabels: { env: 'prod' } },
    clusterConditions: [{ type: 'Available', status: 'True' }],
  };
  const flapping = (conditions = unavailable): ClusterFacts[] =>
    fleet.map((c) => (c.name === 'east' ? { ...c, conditions } : c));

  it('GIVEN a decided cluster failing for 12s of a 30s debounce WHEN decided THEN it is kept with its reason, failingSince and a requeue', () => {
    const r = run(spec, {
      clusters: flapping(),
      previousDecisions: [{ clusterName: 'east', failingSince: ago(12) }, { clusterName: 'west' }],
    });

    expect(r.decisions).toEqual([
      {
        clusterName: 'east',
        reason: `kept: Available=False since ${ago(12)}, within the 30s debounce`,
        failingSince: ago(12),
      },
      { clusterName: 'euro', reason: 'matches clusterSelector; Available=True' },
      {
        clusterName: 'west',
        reason: 'matches clusterSelector; Available=True; kept from previous decisions',
      },
    ]);
    expect(r.requeueAfterMs).toBe(18_000);
  });

  it('GIVEN a decided cluster seen failing for the first time WHEN decided THEN the debounce starts now', () => {
    const r = run(spec, { clusters: flapping(), previousDecisions: [{ clusterName: 'east' }] });

    expect(r.decisions.find((d) => d.clusterName === 'east')).toEqual({
      clusterName: 'east',
      reason: 'kept: Available=False since 2024-05-01T12:00:00Z, within the 30s debounce',
      failingSince: '2024-05-01T12:00:00Z',
    });
    expect(r.requeueAfterMs).toBe(30_000);
  });

  it('GIVEN a decided cluster whose condition is missing WHEN decided THEN the reason says it is absent', () => {
    const r = run(spec, {
      clusters: flapping([]),
      previousDecisions: [{ clusterName: 'east', failingSince: ago(5) }],
    });

    expect(r.decisions.find((d) => d.clusterName === 'east')?.reason).toBe(
      `kept: Available absent since ${ago(5)}, within the 30s debounce`,
    );
  });

  it('GIVEN a decided cluster failing for 45s WHEN decided THEN it is evicted and another cluster takes its slot', () => {
    const r = run(
      { ...spec, clusterReplicas: 1 },
      { clusters: flapping(), previousDecisions: [{ clusterName: 'east', failingSince: ago(45) }] },
    );

    expect(r.decisions).toEqual([{ clusterName: 'euro', reason: 'matches clusterSelector; Available=True' }]);
    expect(r.messages).toEqual([
      'evicted east: Available=False for 45s ≥ 30s debounce',
      'not chosen (clusterReplicas 1 reached): west',
    ]);
    expect(r.requeueAfterMs).toBeUndefined();
  });

  it('GIVEN a kept failing cluster and a cap WHEN decided THEN it keeps its slot, so no replacement is placed during the debounce', () => {
    const r = run(
      { ...spec, clusterReplicas: 1 },
      { clusters: flapping(), previousDecisions: [{ clusterName: 'east', failingSince: ago(10) }] },
    );

    expect(names(r)).toEqual(['east']);
  });

  it('GIVEN a healthy and a failing decided cluster and a cap lowered to one WHEN decided THEN the healthy one stays', () => {
    const r = run(
      { ...spec, clusterReplicas: 1 },
      {
        clusters: flapping(),
        previousDecisions: [{ clusterName: 'east', failingSince: ago(10) }, { clusterName: 'west' }],
      },
    );

    expect(names(r)).toEqual(['west']);
    expect(r.requeueAfterMs).toBeUndefined();
  });

  it('GIVEN a cluster that recovered WHEN decided THEN its failingSince is cleared', () => {
    const r = run(spec, { previousDecisions: [{ clusterName: 'east', failingSince: ago(20) }] });

    expect(r.decisions.find((d) => d.clusterName === 'east')).toEqual({
      clusterName: 'east',
      reason: 'matches clusterSelector; Available=True; kept from previous decisions',
    });
  });

  it('GIVEN a debounce of zero WHEN a decided cluster fails THEN it is evicted at once', () => {
    const r = run(spec, {
      clusters: flapping(),
      previousDecisions: [{ clusterName: 'east' }],
      debounceMs: 0,
    });

    expect(names(r)).toEqual(['euro', 'west']);
    expect(r.messages).toEqual(['evicted east: Available=False for 0ms ≥ 0ms debounce']);
  });

  it('GIVEN an unreadable failingSince WHEN decided THEN the debounce restarts and it is reported', () => {
    const r = run(spec, {
      clusters: flapping(),
      previousDecisions: [{ clusterName: 'east', failingSince: 'yesterday' }],
    });

    expect(r.decisions.find((d) => d.clusterName === 'east')?.failingSince).toBe('2024-05-01T12:00:00Z');
    expect(r.messages).toEqual(['east: failingSince "yesterday" is not a time; restarting the debounce']);
  });

  it('GIVEN decided clusters that no longer match the labels or no longer exist WHEN decided THEN they are dropped at once, debounce or not', () => {
    const clusters = fleet
      .filter((c) => c.name !== 'west')
      .map((c) => (c.name === 'east' ? { ...c, labels: { env: 'dev' } } : c));

    const r = run(spec, {
      clusters,
      previousDecisions: [{ clusterName: 'east' }, { clusterName: 'west', failingSince: ago(1) }],
    });

    expect(names(r)).toEqual(['euro']);
    expect(r.messages).toEqual([
      'dropped east: no longer selected by the rule',
      'dropped west: the cluster no longer exists',
    ]);
  });
});

describe('decide: invalid specs', () => {
  it.each<[string, unknown, string[]]>([
    [
      'a bad operator in the second expression',
      {
        clusterSelector: {
          matchExpressions: [
            { key: 'env', operator: 'In', values: ['prod'] },
            { key: 'tier', operator: 'Equals', values: ['gold'] },
          ],
        },
      },
      [
        'spec.clusterSelector.matchExpressions[1].operator: Invalid value: "Equals": not a valid selector operator',
      ],
    ],
    [
      'values with Exists',
      { clusterSelector: { matchExpressions: [{ key: 'gpu', operator: 'Exists', values: ['yes'] }] } },
      [
        "spec.clusterSelector.matchExpressions[0].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
      ],
    ],
    [
      'several mistakes at once',
      {
        clusters: [{ name: 'a' }, { name: '' }, { name: 'a' }],
        clusterConditions: [{ type: 'Available', status: 'true' }, { status: 'True' }],
        clusterReplicas: -1,
        resourceHint: { type: 'gpu', order: 'Descending' },
      },
      [
        'spec.clusters[1].name: Required value',
        'spec.clusters[2].name: Duplicate value: "a"',
        'spec.clusterConditions[0].status: Unsupported value: "true": supported values: "True", "False", "Unknown"',
        'spec.clusterConditions[1].type: Required value',
        'spec.clusterReplicas: Invalid value: -1: must be greater than or equal to 0',
        'spec.resourceHint.type: Unsupported value: "gpu": supported values: "cpu", "memory"',
        'spec.resourceHint.order: Unsupported value: "Descending": supported values: "Asc", "Desc"',
      ],
    ],
    [
      'a fractional clusterReplicas',
      { clusterReplicas: 1.5 },
      ['spec.clusterReplicas: Invalid value: 1.5: must be an integer'],
    ],
    [
      'a resourceHint without type',
      { resourceHint: { order: 'Asc' } },
      ['spec.resourceHint.type: Required value'],
    ],
    ['no spec', undefined, ['spec: Required value']],
  ])(
    'GIVEN %s WHEN decided THEN it fails with exact field paths and no decisions',
    (_what, spec, expected) => {
      const result = decide({ spec: spec as PlacementRuleSpec, clusters: fleet, debounceMs: 0 }, NOW);

      expect(result.ok).toBe(false);
      expect(result.ok ? [] : result.errors.map((e) => e.message)).toEqual(expected);
      expect(result.ok ? [] : result.errors.map((e) => e.name)).toEqual(expected.map(() => 'FieldError'));
    },
  );
});

describe('clusterFacts', () => {
  it('GIVEN a Cluster resource WHEN read THEN name, labels, conditions and allocatable come from metadata and status', () => {
    const c = {
      apiVersion: 'sluice.dev/v1',
      kind: 'Cluster',
      metadata: { name: 'east', labels: { env: 'prod' } },
      spec: { inCluster: true },
      status: {
        conditions: [
          { type: 'Available', status: 'True', reason: 'Probed', message: '', lastTransitionTime: ago(60) },
        ],
        allocatable: { cpu: '8', memory: '32Gi' },
      },
    } as Cluster;

    expect(clusterFacts(c)).toEqual({
      name: 'east',
      labels: { env: 'prod' },
      conditions: c.status?.conditions,
      allocatable: { cpu: '8', memory: '32Gi' },
    });
  });
});
