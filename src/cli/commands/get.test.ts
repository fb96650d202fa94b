import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import { runCli } from '../run.js';
import { formatListing } from './get.js';
import { captureOutput } from '../../../test/support/capture-output.js';

const NOW = new Date('2026-11-30T12:00:00Z');
const cond = (type: string, status: string, message: string) => ({
  type,
  status,
  reason: 'X',
  message,
  lastTransitionTime: '2026-11-30T11:00:00Z',
});
// The server's JSON has a string where client-node's types say Date.
const meta = (name: string, namespace?: string) =>
  ({
    name,
    ...(namespace ? { namespace } : {}),
    creationTimestamp: '2026-11-30T11:55:00Z',
  }) as unknown as V1ObjectMeta;

describe('sluice get: usage errors (exit 2)', () => {
  let io: ReturnType<typeof captureOutput>;
  beforeEach(() => (io = captureOutput()));
  afterEach(() => io.restore());

  it.each([
    [['get'], 'missing argument'],
    [['get', 'pods'], 'unknown resource type "pods": use one of sources, clusters, placements, deliveries'],
    [['get', 'clusters', '-o', 'wide'], '-o must be one of table, json, yaml, got "wide"'],
    [['get', 'deliveries', '-n', 'x', '-A'], '-n and -A cannot be used together'],
    [['get', 'deliveries', 'web', '-A'], 'a NAME cannot be given with -A'],
    [['get', 'clusters', 'a', 'b'], 'unexpected argument "b"'],
    [['get', 'clusters', '--bogus'], "Unknown option '--bogus'"],
  ])('GIVEN %j THEN exit 2 saying %s, with the usage text', async (argv, message) => {
    expect(await runCli(argv)).toBe(2);
    expect(io.err()).toContain(message);
    expect(io.err()).toContain('Usage: sluice get');
  });

  it('GIVEN --help THEN usage on stdout, exit 0', async () => {
    expect(await runCli(['get', '--help'])).toBe(0);
    expect(io.out()).toContain('Usage: sluice get sources|clusters|placements|deliveries');
  });

  it('GIVEN an unreadable kubeconfig THEN exit 1 naming it', async () => {
    expect(await runCli(['get', 'clusters', '--kubeconfig', '/nonexistent/kc'])).toBe(1);
    expect(io.err()).toContain('cannot load kubeconfig /nonexistent/kc');
  });

  it('GIVEN sluice --help THEN get, reconcile and diff are listed', async () => {
    expect(await runCli(['--help'])).toBe(0);
    for (const c of ['get', 'reconcile', 'diff']) expect(io.out()).toMatch(new RegExp(`^  ${c} `, 'm'));
  });
});

describe('formatListing', () => {
  it('GIVEN clusters THEN NAME, AVAILABLE, VERSION, AGE, MESSAGE', () => {
    const out = formatListing(
      'clusters',
      [
        {
          apiVersion: 'sluice.dev/v1',
          kind: 'Cluster',
          metadata: meta('member-1'),
          status: {
            version: 'v1.36.3',
            conditions: [
              cond('Available', 'True', 'Kubernetes v1.36.3, 60 API group/versions, 1 ready node(s)'),
            ],
          },
        },
        { apiVersion: 'sluice.dev/v1', kind: 'Cluster', metadata: meta('new') },
      ] as KubernetesObject[],
      { allNamespaces: true, now: NOW },
    );
    expect(out).toBe(
      [
        'NAME       AVAILABLE   VERSION   AGE   MESSAGE',
        'member-1   True        v1.36.3   5m    Kubernetes v1.36.3, 60 API group/versions, 1 ready node(s)',
        'new        Unknown               5m',
        '',
      ].join('\n'),
    );
  });

  it('GIVEN placements across namespaces THEN a NAMESPACE column, decisions counted and named', () => {
    const out = formatListing(
      'plr',
      [
        {
          apiVersion: 'sluice.dev/v1',
          kind: 'PlacementRule',
          metadata: meta('prod', 'team-a'),
          status: {
            decisions: [{ clusterName: 'member-1' }, { clusterName: 'member-2' }],
            conditions: [cond('Ready', 'True', '2 of 3 clusters selected')],
          },
        },
        { apiVersion: 'sluice.dev/v1', kind: 'PlacementRule', metadata: meta('none', 'team-b') },
      ] as KubernetesObject[],
      { allNamespaces: true, now: NOW },
    );
    expect(out).toBe(
      [
        'NAMESPACE   NAME   READY     DECISIONS   CLUSTERS            AGE   MESSAGE',
        'team-a      prod   True      2           member-1,member-2   5m    2 of 3 clusters selected',
        'team-b      none   Unknown   0           <none>              5m',
        '',
      ].join('\n'),
    );
  });

  it('GIVEN sources and deliveries THEN revision, suspension, healthy/placed clusters', () => {
    const src = formatListing(
      'sources',
      [
        {
          apiVersion: 'sluice.dev/v1',
          kind: 'GitSource',
          metadata: meta('app', 'ns'),
          spec: { suspend: false },
          status: {
            artifact: { revision: 'main@sha1:4f1c', digest: 'sha256:x', lastUpdateTime: '' },
            conditions: [cond('Ready', 'True', 'stored artifact')],
          },
        } as never,
      ],
      { allNamespaces: false, now: NOW },
    );
    expect(src.split('\n')[0]).toBe('NAME   READY   REVISION         SUSPENDED   AGE   MESSAGE');
    expect(src.split('\n')[1]).toBe('app    True    main@sha1:4f1c   False       5m    stored artifact');

    const dlv = formatListing(
      'dlv',
      [
        {
          apiVersion: 'sluice.dev/v1',
          kind: 'Delivery',
          metadata: meta('web', 'ns'),
          spec: { suspend: true },
          status: {
            lastAppliedRevision: 'main@sha1:4f1c',
            clusters: [
              { name: 'member-1', phase: 'Healthy' },
              { name: 'member-2', phase: 'Healthy' },
              { name: 'member-3', phase: 'Unreachable' },
            ],
            conditions: [cond('Ready', 'False', 'member-3 unreachable')],
          },
        } as never,
      ],
      { allNamespaces: false, now: NOW },
    );
    expect(dlv.split('\n')[0]).toBe('NAME   READY   REVISION         CLUSTERS   SUSPENDED   AGE   MESSAGE');
    expect(dlv.split('\n')[1]).toBe(
      'web    False   main@sha1:4f1c   2/3        True        5m    member-3 unreachable',
    );
  });
});
