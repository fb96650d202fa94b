import type { ClusterPlan, Planned, PrunePreview } from '../delivery/applier.js';
import type { Manifest } from '../delivery/objects.js';
import {
  clusterDiff,
  diffExitCode,
  formatClusterDiff,
  summaryLine,
  type ClusterDiff,
  type ClusterDiffOutcome,
} from './delivery-diff.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const REV = 'main@sha1:0123456789abcdef0123456789abcdef01234567';

const cm = (name: string, data: Record<string, string>, extra: Record<string, unknown> = {}): Manifest => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'app' },
  data,
  ...extra,
});

/** What the API server adds on a live object: never part of the diff. */
const serverNoise = {
  managedFields: [{ manager: 'sluice-delivery', operation: 'Apply' }],
  resourceVersion: '42',
  uid: 'u-1',
  creationTimestamp: '2026-01-01T00:00:00Z',
  generation: 3,
};
const live = (m: Manifest): Manifest => ({ ...m, metadata: { ...m.metadata, ...serverNoise } });

let line = 0;
function planned(desired: Manifest, fields: Partial<Planned> = {}): Planned {
  line += 10;
  return {
    id: `/${desired.kind}/${desired.metadata.namespace ?? ''}/${desired.metadata.name}`,
    stage: 2,
    rendered: { object: desired, origin: { file: 'deploy/app.yaml', line, col: 1, docIndex: 0 } },
    desired,
    deferred: false,
    ...fields,
  };
}

const plan = (...objects: Planned[]): Extract<ClusterPlan, { ok: true }> =>
  ({ ok: true, input: {}, stored: { ok: true, entries: [] }, objects }) as unknown as Extract<
    ClusterPlan,
    { ok: true }
  >;

const noPrune: PrunePreview = { kind: 'planned', plan: { delete: [], release: [], keep: [] } };

describe('clusterDiff', () => {
  beforeEach(() => (line = 0));

  it('GIVEN a configured object THEN the diff shows the changed value and none of the server noise', () => {
    const before = live(cm('settings', { color: 'blue', size: 'L' }));
    const after = live(cm('settings', { color: 'green', size: 'L' }, { status: { x: 1 } }));
    const d = clusterDiff(
      'member-1',
      plan(planned(cm('settings', { color: 'green' }), { live: before, result: after, action: 'configure' })),
      noPrune,
      REV,
    );
    expect(d).toMatchObject({ created: 0, configured: 1, deleted: 0, unchanged: 0, failed: 0 });
    const o = d.objects[0];
    expect(o).toMatchObject({
      action: 'configured',
      object: 'ConfigMap app/settings',
      origin: 'deploy/app.yaml:10:1',
    });
    const diff = o?.action === 'configured' ? o.diff : '';
    expect(diff).toContain(`--- live\n+++ ${REV}\n`);
    expect(diff).toContain('-  color: blue\n+  color: green\n');
    expect(diff).not.toMatch(/managedFields|resourceVersion|uid|creationTimestamp|generation|status/);
  });

  it('GIVEN a created Secret and a changed Secret THEN values show only as *** / *** (before) / *** (after)', () => {
    const secret = (name: string, data: Record<string, string>): Manifest => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: 'app' },
      type: 'Opaque',
      data,
    });
    const d = clusterDiff(
      'member-1',
      plan(
        planned(secret('new', {}), {
          result: live(secret('new', { token: b64('s3cret-token') })),
          action: 'create',
        }),
        planned(secret('db', {}), {
          live: live(secret('db', { user: b64('admin'), password: b64('old-pass') })),
          result: live(secret('db', { user: b64('admin'), password: b64('new-pass') })),
          action: 'configure',
        }),
      ),
      noPrune,
      REV,
    );
    const text = formatClusterDiff(d);
    expect(text).toContain('+ created Secret app/new');
    expect(text).toContain('+  token: "***"');
    expect(text).toContain('-  password: "*** (before)"');
    expect(text).toContain('+  password: "*** (after)"');
    expect(text).toContain('   user: "***"');
    expect(text).not.toMatch(/s3cret|old-pass|new-pass|admin/);
    expect(text).not.toContain(b64('s3cret-token'));
  });

  it('GIVEN unchanged, failed, deferred objects and a prune plan THEN each is counted and shown as such', () => {
    const prune: PrunePreview = {
      kind: 'planned',
      plan: {
        delete: [{ id: '/ConfigMap/app/old', version: 'v1' }],
        release: [],
        keep: [{ entry: { id: '/Namespace//gone', version: 'v1' }, reason: 'live state unknown (x)' }],
      },
    };
    const d = clusterDiff(
      'member-2',
      plan(
        planned(cm('same', {}), {
          live: live(cm('same', {})),
          result: live(cm('same', {})),
          action: 'unchanged',
        }),
        planned(cm('busy', {}), { failure: 'deploy/app.yaml:20:1: ConfigMap app/busy: conflict' }),
        planned(cm('fresh', { k: 'v' }), { deferred: true, fresh: true }),
      ),
      prune,
      REV,
    );
    expect(d).toMatchObject({ created: 1, configured: 0, deleted: 1, unchanged: 1, failed: 1 });
    expect(d.objects.map((o) => `${o.action} ${o.object}`)).toEqual([
      'failed ConfigMap app/busy',
      'created ConfigMap app/fresh',
      'deleted ConfigMap app/old',
    ]);
    expect(d.notes).toEqual(['not deleted: /Namespace//gone: live state unknown (x)']);
    const text = formatClusterDiff(d);
    expect(text).toContain(
      '! failed ConfigMap app/busy: deploy/app.yaml:20:1: ConfigMap app/busy: conflict\n',
    );
    expect(text).toContain('— as written in Git, not dry-run: its namespace is created by this revision\n');
    expect(text).toContain('    +  k: v\n');
    expect(text).toContain('- deleted ConfigMap app/old\n');
    expect(text.endsWith('member-2: 1 created, 0 configured, 1 deleted, 1 unchanged, 1 failed\n')).toBe(true);
  });

  it('GIVEN an unreadable inventory THEN nothing is deleted and a note says why', () => {
    const d = clusterDiff(
      'm',
      plan(),
      { kind: 'skipped', reason: 'inventory unreadable (bad); nothing pruned' },
      REV,
    );
    expect(d.deleted).toBe(0);
    expect(formatClusterDiff(d)).toBe(
      '=== m ===\nnote: inventory unreadable (bad); nothing pruned\nm: 0 created, 0 configured, 0 deleted, 0 unchanged\n',
    );
  });
});

describe('formatClusterDiff', () => {
  it('GIVEN one configured object THEN header, marked object line, indented diff, summary', () => {
    const d = clusterDiff(
      'member-1',
      plan(
        planned(cm('settings', {}), {
          live: live(cm('settings', { color: 'blue' })),
          result: live(cm('settings', { color: 'green' })),
          action: 'configure',
        }),
      ),
      noPrune,
      REV,
    );
    expect(formatClusterDiff(d)).toBe(
      [
        '=== member-1 ===',
        '~ configured ConfigMap app/settings (deploy/app.yaml:10:1)',
        '    --- live',
        `    +++ ${REV}`,
        '    @@ -1,6 +1,6 @@',
        '     apiVersion: v1',
        '     data:',
        '    -  color: blue',
        '    +  color: green',
        '     kind: ConfigMap',
        '     metadata:',
        '       name: settings',
        'member-1: 0 created, 1 configured, 0 deleted, 0 unchanged',
        '',
      ].join('\n'),
    );
  });
});

describe('summaryLine and diffExitCode', () => {
  const diff = (counts: Partial<ClusterDiff>): ClusterDiff => ({
    cluster: 'member-1',
    objects: [],
    created: 0,
    configured: 0,
    deleted: 0,
    unchanged: 0,
    failed: 0,
    notes: [],
    ...counts,
  });
  const ok = (counts: Partial<ClusterDiff>): ClusterDiffOutcome => ({ ok: true, diff: diff(counts) });
  const down: ClusterDiffOutcome = { ok: false, cluster: 'member-2', message: 'connect ECONNREFUSED' };

  it('GIVEN counts THEN the summary line names them in a fixed order', () => {
    expect(summaryLine(diff({ created: 1, configured: 2, unchanged: 97 }))).toBe(
      'member-1: 1 created, 2 configured, 0 deleted, 97 unchanged',
    );
  });

  it.each([
    ['nothing differs anywhere', 0, [ok({ unchanged: 5 }), ok({ unchanged: 5 })]],
    ['no clusters', 0, []],
    ['one object created', 1, [ok({ unchanged: 5 }), ok({ created: 1 })]],
    ['one configured', 1, [ok({ configured: 1 })]],
    ['only a deletion', 1, [ok({ deleted: 1 })]],
    ['a cluster unreachable, others differ', 2, [ok({ configured: 1 }), down]],
    ['a cluster unreachable, others equal', 2, [ok({}), down]],
    ['an object the server refused', 2, [ok({ configured: 1, failed: 1 })]],
  ])('GIVEN %s THEN exit %s', (_name, code, outcomes) => {
    expect(diffExitCode(outcomes)).toBe(code);
  });
});
