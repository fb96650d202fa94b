import {
  decodeInventory,
  diffSummary,
  encodeInventory,
  inventoryChunks,
  inventoryConfigMapName,
  inventoryEntry,
  InventoryError,
  MAX_CHUNK_BYTES,
  nextInventory,
  pruneSet,
  type InventoryEntry,
  type LiveState,
} from './inventory.js';
import { ownerLabels, type Manifest } from './objects.js';

const e = (id: string, version = 'v1'): InventoryEntry => ({ id, version });
const obj = (
  apiVersion: string,
  kind: string,
  name: string,
  namespace?: string,
  spec?: unknown,
): Manifest => ({
  apiVersion,
  kind,
  metadata: namespace ? { name, namespace } : { name },
  ...(spec ? { spec } : {}),
});

describe('inventoryEntry', () => {
  it.each<[Manifest, InventoryEntry]>([
    [obj('apps/v1', 'Deployment', 'web', 'prod'), e('apps/Deployment/prod/web', 'v1')],
    [obj('v1', 'Namespace', 'prod'), e('/Namespace//prod', 'v1')],
    [obj('example.com/v1beta2', 'Widget', 'w', 'a'), e('example.com/Widget/a/w', 'v1beta2')],
  ])('GIVEN %j WHEN recorded THEN the entry is %j', (o, expected) => {
    expect(inventoryEntry(o)).toEqual(expected);
  });
});

describe('encodeInventory / decodeInventory', () => {
  const sample: InventoryEntry[] = [
    e('apps/Deployment/prod/web'),
    e('/ConfigMap/prod/cfg'),
    e('/Namespace//prod'),
    e('apps/Deployment/prod/api'),
    e('example.com/Widget/prod/w', 'v1beta1'),
    e('rbac.authorization.k8s.io/ClusterRole//view-extra'),
  ];

  it('GIVEN a few entries WHEN encoded THEN the chunk is a readable, sorted, sectioned text', () => {
    const chunks = encodeInventory(sample);

    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.replace(/set=[0-9a-f]+/, 'set=…')).toBe(
      [
        '# sluice.dev/inventory v1 set=… shard=0/1',
        '= v1 ConfigMap',
        'prod/cfg',
        '= v1 Namespace',
        'prod',
        '= apps/v1 Deployment',
        'prod/api',
        'prod/web',
        '= example.com/v1beta1 Widget',
        'prod/w',
        '= rbac.authorization.k8s.io/v1 ClusterRole',
        'view-extra',
        '',
      ].join('\n'),
    );
  });

  it('GIVEN entries in any order with duplicates WHEN encoded THEN the chunks are identical and the last duplicate wins', () => {
    const withNewerVersion = [...sample, e('apps/Deployment/prod/web', 'v1beta2')];

    const decoded = decodeInventory(encodeInventory(withNewerVersion));

    expect(encodeInventory([...sample].reverse())).toEqual(encodeInventory(sample));
    expect(decoded.ok && decoded.entries.find((x) => x.id === 'apps/Deployment/prod/web')).toEqual(
      e('apps/Deployment/prod/web', 'v1beta2'),
    );
    expect(decoded.entries).toHaveLength(sample.length);
  });

  it('GIVEN any inventory WHEN encoded then decoded THEN the same entries come back sorted by id', () => {
    expect(decodeInventory(encodeInventory(sample))).toEqual({
      ok: true,
      entries: [...sample].sort((x, y) => (x.id < y.id ? -1 : 1)),
      staleChunks: [],
    });
  });

  it('GIVEN an empty inventory WHEN encoded THEN it is one header-only chunk that decodes to nothing', () => {
    const chunks = encodeInventory([]);

    expect(chunks).toHaveLength(1);
    expect(chunks[0]).toMatch(/^# sluice\.dev\/inventory v1 set=[0-9a-f]{12} shard=0\/1\n$/);
    expect(decodeInventory(chunks)).toEqual({ ok: true, entries: [], staleChunks: [] });
  });

  it('GIVEN no chunks at all WHEN decoded THEN it is an empty inventory (nothing applied yet)', () => {
    expect(decodeInventory([])).toEqual({ ok: true, entries: [], staleChunks: [] });
  });

  it('GIVEN 5,000 objects WHEN encoded with the default limit THEN they fit one ConfigMap chunk at under 40 bytes each', () => {
    const many = Array.from({ length: 5000 }, (_, i) =>
      e(i % 2 ? `apps/Deployment/team-${i % 50}/service-${i}` : `/ConfigMap/team-${i % 50}/config-${i}`),
    );

    const chunks = encodeInventory(many);

    expect(chunks).toHaveLength(1);
    expect(Buffer.byteLength(chunks[0] ?? '')).toBeLessThan(5000 * 40);
    expect(decodeInventory(chunks)).toMatchObject({
      ok: true,
      entries: expect.arrayContaining([many[4999]]),
    });
  });

  it('GIVEN a small chunk limit WHEN encoded THEN every chunk fits, repeats its section header, and the shards decode in any order', () => {
    const many = Array.from({ length: 60 }, (_, i) =>
      e(`apps/Deployment/ns/web-${String(i).padStart(2, '0')}`),
    );

    const chunks = encodeInventory(many, { maxChunkBytes: 200 });

    expect(chunks.length).toBeGreaterThan(3);
    for (const c of chunks) {
      expect(Buffer.byteLength(c)).toBeLessThanOrEqual(200);
      expect(c.split('\n')[1]).toBe('= apps/v1 Deployment');
    }
    const shuffled = [...chunks].reverse();
    expect(decodeInventory(shuffled)).toEqual({ ok: true, entries: many, staleChunks: [] });
  });

  it('GIVEN the default limit WHEN encoding THEN it leaves room under the 1 MiB ConfigMap limit', () => {
    expect(MAX_CHUNK_BYTES).toBe(900 * 1024);
  });

  it('GIVEN a chunk limit too small for one entry, or a malformed entry WHEN encoded THEN it throws InventoryError', () => {
    expect(() => encodeInventory(sample, { maxChunkBytes: 50 })).toThrow(InventoryError);
    expect(() => encodeInventory([e('not-an-id')])).toThrow(
      'invalid inventory entry {"id":"not-an-id","version":"v1"}',
    );
    expect(() => encodeInventory([e('apps/Deployment/ns/x', 'apps/v1')])).toThrow(InventoryError);
  });

  it('GIVEN a new complete set next to a leftover shard of an older, larger set WHEN decoded THEN the new set wins and the leftover is stale', () => {
    const old = encodeInventory(
      Array.from({ length: 30 }, (_, i) => e(`/ConfigMap/a/old-${i}`)),
      { maxChunkBytes: 200 },
    );
    const fresh = encodeInventory([e('/ConfigMap/a/new')], { maxChunkBytes: 200 });
    // Shard 0 was overwritten by the new write; the old shards 1.. were not yet deleted.
    const stored = [...fresh, ...old.slice(1)];

    const decoded = decodeInventory(stored);

    expect(decoded).toEqual({
      ok: true,
      entries: [e('/ConfigMap/a/new')],
      staleChunks: old.slice(1).map((_, i) => i + 1),
    });
  });

  it.each<[string, string[], string[]]>([
    [
      'a missing header',
      ['= v1 ConfigMap\nns/a\n'],
      [
        'chunk 0: first line is not a "# sluice.dev/inventory v1 set=… shard=i/n" header',
        'no complete inventory set: shards are missing or come from different writes',
      ],
    ],
    [
      'an entry before any section',
      ['# sluice.dev/inventory v1 set=0123456789ab shard=0/1\nns/a\n'],
      ['chunk 0 line 2: entry before any "= <apiVersion> <Kind>" section'],
    ],
    [
      'a malformed entry',
      ['# sluice.dev/inventory v1 set=0123456789ab shard=0/1\n= v1 ConfigMap\nns/a/b\nns/ok\n'],
      ['chunk 0 line 3: "ns/a/b" is neither "<namespace>/<name>" nor "<name>"'],
    ],
    [
      'a missing shard',
      ['# sluice.dev/inventory v1 set=0123456789ab shard=0/2\n= v1 ConfigMap\nns/ok\n'],
      ['no complete inventory set: shards are missing or come from different writes'],
    ],
  ])(
    'GIVEN %s WHEN decoded THEN it is not ok, with exact errors and every readable entry',
    (_what, chunks, errors) => {
      const decoded = decodeInventory(chunks);

      expect(decoded).toMatchObject({ ok: false, errors });
      if (chunks[0]?.includes('ns/ok')) expect(decoded.entries).toEqual([e('/ConfigMap/ns/ok')]);
    },
  );
});

describe('inventoryConfigMapName', () => {
  it.each<[string, string, number, string]>([
    ['team', 'web', 0, 'sluice-inventory.team.web.0'],
    ['a-b', 'c', 1, 'sluice-inventory.a-b.c.1'],
    ['a', 'b-c', 1, 'sluice-inventory.a.b-c.1'],
  ])('GIVEN Delivery %s/%s shard %d WHEN named THEN %s', (namespace, name, shard, expected) => {
    expect(inventoryConfigMapName({ namespace, name }, shard)).toBe(expected);
  });

  it('GIVEN a very long Delivery name WHEN named THEN the name stays within 253 characters and is stable', () => {
    const owner = { namespace: 'team', name: 'x'.repeat(250) };

    const name = inventoryConfigMapName(owner, 12);

    expect(name.length).toBeLessThanOrEqual(253);
    expect(name).toMatch(/^sluice-inventory\.team\.[0-9a-f]{16}\.12$/);
    expect(inventoryConfigMapName(owner, 12)).toBe(name);
  });
});

describe('inventoryChunks', () => {
  it('GIVEN entries WHEN cut into ConfigMaps THEN each encoded chunk is named by its shard, and decoding them gives the entries back', () => {
    const entries = [e('/Namespace//team'), e('/ConfigMap/team/a'), e('apps/Deployment/team/web')];

    const chunks = inventoryChunks({ namespace: 'team', name: 'web' }, entries);

    expect([...chunks.keys()]).toEqual(['sluice-inventory.team.web.0']);
    expect([...chunks.values()]).toEqual(encodeInventory(entries));
    expect(decodeInventory([...chunks.values()])).toMatchObject({
      ok: true,
      entries: expect.arrayContaining(entries),
    });
  });
});

describe('pruneSet', () => {
  const owner = ownerLabels({ namespace: 'team', name: 'web', cluster: 'east' });
  const owned: LiveState = { state: 'Present', labels: { ...owner, extra: 'x' } };
  const rendered = [obj('apps/v1', 'Deployment', 'web', 'prod'), obj('v1', 'ConfigMap', 'cfg', 'prod')];

  it('GIVEN objects that left Git WHEN planned THEN only owned ones are deleted, webhooks first and CRDs and namespaces last', () => {
    const previous = [
      e('apps/Deployment/prod/web'),
      e('apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com'),
      e('/Namespace//old'),
      e('/ConfigMap/prod/old'),
      e('admissionregistration.k8s.io/ValidatingWebhookConfiguration//hook'),
      e('rbac.authorization.k8s.io/ClusterRole//reader'),
    ];

    const plan = pruneSet({ previous, rendered, owner, live: () => owned });

    expect(plan.delete.map((x) => x.id)).toEqual([
      'admissionregistration.k8s.io/ValidatingWebhookConfiguration//hook',
      '/ConfigMap/prod/old',
      'rbac.authorization.k8s.io/ClusterRole//reader',
      '/Namespace//old',
      'apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com',
    ]);
    expect(plan.release).toEqual([]);
    expect(plan.keep).toEqual([]);
  });

  it.each<[string, 'delete' | 'release' | 'keep', LiveState, string]>([
    ['still carries both owner labels', 'delete', owned, ''],
    ['is already gone', 'release', { state: 'Absent' }, 'already deleted'],
    [
      'lost the cluster label',
      'release',
      { state: 'Present', labels: { 'sluice.dev/delivery': 'team.web' } },
      'live object no longer carries the owner labels; left in place',
    ],
    [
      'carries another Delivery’s label',
      'release',
      { state: 'Present', labels: { ...owner, 'sluice.dev/delivery': 'team.other' } },
      'live object no longer carries the owner labels; left in place',
    ],
    [
      'has no labels',
      'release',
      { state: 'Present' },
      'live object no longer carries the owner labels; left in place',
    ],
    [
      'opts out of pruning',
      'release',
      { state: 'Present', labels: owner, annotations: { 'sluice.dev/prune': 'disabled' } },
      'pruning disabled by sluice.dev/prune: disabled; left in place',
    ],
    [
      'cannot be looked up',
      'keep',
      { state: 'Unknown', reason: 'cluster east unreachable' },
      'live state unknown (cluster east unreachable); not pruned this time',
    ],
  ])(
    'GIVEN a stale object whose live copy %s WHEN planned THEN it is in %s',
    (_what, bucket, live, reason) => {
      const stale = e('/ConfigMap/prod/old');

      const plan = pruneSet({
        previous: [stale, e('apps/Deployment/prod/web')],
        rendered,
        owner,
        live: () => live,
      });

      const expected = { delete: [] as unknown[], release: [] as unknown[], keep: [] as unknown[] };
      expected[bucket].push(bucket === 'delete' ? stale : { entry: stale, reason });
      expect(plan).toEqual(expected);
    },
  );

  it('GIVEN an empty render WHEN planned THEN nothing is deleted and the live state is not even asked', () => {
    let asked = 0;
    const live = (): LiveState => {
      asked += 1;
      return owned;
    };

    const plan = pruneSet({ previous: [e('/ConfigMap/prod/old')], rendered: [], owner, live });

    expect(plan).toEqual({
      delete: [],
      release: [],
      keep: [{ entry: e('/ConfigMap/prod/old'), reason: 'render is empty; an empty render never prunes' }],
    });
    expect(asked).toBe(0);
  });

  it('GIVEN an object whose apiVersion changed in Git WHEN planned THEN it is not pruned (same id)', () => {
    const plan = pruneSet({
      previous: [e('apps/Deployment/prod/web', 'v1beta2')],
      rendered,
      owner,
      live: () => owned,
    });

    expect(plan.delete).toEqual([]);
  });

  it('GIVEN a removed Namespace that still holds rendered objects and a removed CRD whose kind is still rendered WHEN planned THEN both are kept', () => {
    const plan = pruneSet({
      previous: [
        e('/Namespace//prod'),
        e('apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com'),
        e('apiextensions.k8s.io/CustomResourceDefinition//gadgets.other.io'),
      ],
      rendered: [...rendered, obj('example.com/v1', 'Widget', 'w', 'prod')],
      owner,
      live: () => owned,
    });

    expect(plan).toEqual({
      delete: [e('apiextensions.k8s.io/CustomResourceDefinition//gadgets.other.io')],
      release: [],
      keep: [
        { entry: e('/Namespace//prod'), reason: 'namespace prod still holds rendered objects' },
        {
          entry: e('apiextensions.k8s.io/CustomResourceDefinition//widgets.example.com'),
          reason: 'CRD widgets.example.com may still serve rendered Widget',
        },
      ],
    });
  });

  it('GIVEN a custom resource whose CRD is itself rendered WHEN another CRD of that group left Git THEN that CRD is deleted', () => {
    const crd = obj('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'widgets.example.com', undefined, {
      group: 'example.com',
      names: { kind: 'Widget' },
    });

    const plan = pruneSet({
      previous: [e('apiextensions.k8s.io/CustomResourceDefinition//gizmos.example.com')],
      rendered: [crd, obj('example.com/v1', 'Widget', 'w', 'prod')],
      owner,
      live: () => owned,
    });

    expect(plan.delete).toEqual([e('apiextensions.k8s.io/CustomResourceDefinition//gizmos.example.com')]);
  });
});

describe('nextInventory', () => {
  it('GIVEN a sync that applied some objects, deleted one and failed to delete another WHEN recorded THEN only the removed one is forgotten', () => {
    const previous = [
      e('/ConfigMap/a/deleted'),
      e('/ConfigMap/a/delete-failed'),
      e('apps/Deployment/a/web', 'v1beta2'),
    ];
    const applied = [e('apps/Deployment/a/web', 'v1'), e('/ConfigMap/a/new')];

    expect(nextInventory(previous, applied, ['/ConfigMap/a/deleted'])).toEqual([
      e('/ConfigMap/a/delete-failed'),
      e('/ConfigMap/a/new'),
      e('apps/Deployment/a/web', 'v1'),
    ]);
  });
});

describe('diffSummary', () => {
  it.each<[string, string, Parameters<typeof diffSummary>[0]]>([
    ['nothing', '0 created, 0 configured, 0 unchanged, 0 deleted', []],
    [
      'a mixed change set',
      '1 created, 1 configured, 2 unchanged, 1 deleted',
      [
        { id: 'a', action: 'created' },
        { id: 'b', action: 'configured' },
        { id: 'c', action: 'unchanged' },
        { id: 'd', action: 'unchanged' },
        { id: 'e', action: 'deleted' },
      ],
    ],
    [
      'an id reported twice (dry-run then apply)',
      '0 created, 1 configured, 0 unchanged, 0 deleted',
      [
        { id: 'a', action: 'unchanged' },
        { id: 'a', action: 'configured' },
      ],
    ],
  ])('GIVEN %s WHEN summarised THEN %s', (_what, text, changes) => {
    expect(diffSummary(changes).text).toBe(text);
  });
});
