import type { KubernetesObject } from '@kubernetes/client-node';
import type { GitSourceStatus } from '../api/git-source.js';
import { GitError } from './errors.js';
import {
  failureOutcome,
  jitteredInterval,
  nextSourceStatus,
  RECONCILE_REQUESTED_ANNOTATION,
  updateNeedsReconcile,
  type SourceOutcome,
} from './source-status.js';

const t0 = new Date('2026-11-30T10:00:00Z');
const t1 = new Date('2026-11-30T10:05:00Z');
const sha1 = 'a'.repeat(40);
const sha2 = 'b'.repeat(40);
const d1 = `sha256:${'1'.repeat(64)}`;
const d2 = `sha256:${'2'.repeat(64)}`;
const ok = (sha: string, digest: string): SourceOutcome => ({
  ok: true,
  revision: `main@sha1:${sha}`,
  digest,
  path: `/data/artifacts/${digest.slice(7)}`,
});
const fail = (
  reason: 'AuthFailed' | 'RefNotFound' | 'FetchFailed' | 'ArtifactFailed',
  terminal = false,
): SourceOutcome => ({
  ok: false,
  reason,
  message: `${reason} happened`,
  terminal,
});
const cond = (s: GitSourceStatus, type: string) => s.conditions?.find((c) => c.type === type);

/** Status after a first good fetch of sha1. */
const good = nextSourceStatus(undefined, 1, ok(sha1, d1), t0).status;

describe('nextSourceStatus', () => {
  it('GIVEN a first successful fetch THEN Ready=True, the artifact is published and one NewArtifact event is due', () => {
    const { status, events } = nextSourceStatus(undefined, 1, ok(sha1, d1), t0);
    expect(status.artifact).toEqual({
      revision: `main@sha1:${sha1}`,
      digest: d1,
      path: `/data/artifacts/${'1'.repeat(64)}`,
      lastUpdateTime: '2026-11-30T10:00:00Z',
    });
    expect(status.observedGeneration).toBe(1);
    expect(cond(status, 'Ready')).toMatchObject({
      status: 'True',
      reason: 'Succeeded',
      message: `stored artifact for revision main@sha1:${sha1}`,
    });
    expect(cond(status, 'Reconciling')).toBeUndefined();
    expect(cond(status, 'Stalled')).toBeUndefined();
    expect(events).toEqual([
      { type: 'Normal', reason: 'NewArtifact', message: `stored artifact for revision main@sha1:${sha1}` },
    ]);
  });

  it('GIVEN the same revision again THEN the status is deep-equal (no write) and no event is due', () => {
    const { status, events } = nextSourceStatus(good, 1, ok(sha1, d1), t1);
    expect(status).toEqual(good);
    expect(events).toEqual([]);
  });

  it('GIVEN a new revision THEN the artifact and lastUpdateTime move and NewArtifact is due', () => {
    const { status, events } = nextSourceStatus(good, 1, ok(sha2, d2), t1);
    expect(status.artifact).toMatchObject({
      revision: `main@sha1:${sha2}`,
      digest: d2,
      lastUpdateTime: '2026-11-30T10:05:00Z',
    });
    expect(events.map((e) => e.reason)).toEqual(['NewArtifact']);
  });

  it.each<[string, SourceOutcome, 'True' | undefined, string]>([
    ['wrong credentials', fail('AuthFailed'), undefined, 'ProgressingWithRetry'],
    ['a deleted branch', fail('RefNotFound'), undefined, 'ProgressingWithRetry'],
    ['an unreachable server', fail('FetchFailed'), undefined, 'ProgressingWithRetry'],
    ['a broken artifact', fail('ArtifactFailed'), undefined, 'ProgressingWithRetry'],
    ['an invalid ref (terminal)', fail('RefNotFound', true), 'True', ''],
    ['a missing Secret (terminal)', fail('AuthFailed', true), 'True', ''],
  ])(
    'GIVEN %s after a good fetch THEN Ready=False with its reason, the artifact is kept, and Stalled only when terminal',
    (_w, outcome, stalled, reconciling) => {
      const { status, events } = nextSourceStatus(good, 2, outcome, t1);
      expect(status.artifact).toEqual(good.artifact);
      expect(status.observedGeneration).toBe(2);
      const o = outcome as Extract<SourceOutcome, { ok: false }>;
      expect(cond(status, 'Ready')).toMatchObject({ status: 'False', reason: o.reason, message: o.message });
      expect(cond(status, 'Stalled')?.status).toBe(stalled);
      expect(cond(status, 'Reconciling')?.reason ?? '').toBe(reconciling);
      expect(events).toEqual([{ type: 'Warning', reason: o.reason, message: o.message }]);
    },
  );

  it('GIVEN the same failure twice THEN the second is not another event; another reason is', () => {
    const failed = nextSourceStatus(good, 1, fail('FetchFailed'), t0).status;
    expect(nextSourceStatus(failed, 1, fail('FetchFailed'), t1).events).toEqual([]);
    expect(nextSourceStatus(failed, 1, fail('AuthFailed'), t1).events.map((e) => e.reason)).toEqual([
      'AuthFailed',
    ]);
  });

  it('GIVEN a failing source that works again on the same revision THEN Ready=True and an ArtifactUpToDate event', () => {
    const failed = nextSourceStatus(good, 1, fail('FetchFailed'), t0).status;
    const { status, events } = nextSourceStatus(failed, 1, ok(sha1, d1), t1);
    expect(cond(status, 'Ready')).toMatchObject({ status: 'True', reason: 'Succeeded' });
    expect(status.artifact).toEqual(good.artifact);
    expect(events).toEqual([
      {
        type: 'Normal',
        reason: 'ArtifactUpToDate',
        message: `recovered: stored artifact for revision main@sha1:${sha1}`,
      },
    ]);
  });

  it('GIVEN a failure before any fetch THEN no artifact is invented', () => {
    const { status } = nextSourceStatus(undefined, 1, fail('AuthFailed'), t0);
    expect(status.artifact).toBeUndefined();
  });

  it('GIVEN a reconcile request THEN lastHandledReconcileAt records it, whatever the outcome', () => {
    expect(nextSourceStatus(good, 1, ok(sha1, d1), t1, 'req-1').status.lastHandledReconcileAt).toBe('req-1');
    expect(nextSourceStatus(good, 1, fail('FetchFailed'), t1, 'req-2').status.lastHandledReconcileAt).toBe(
      'req-2',
    );
    const handled = { ...good, lastHandledReconcileAt: 'req-1' };
    expect(nextSourceStatus(handled, 1, ok(sha1, d1), t1).status.lastHandledReconcileAt).toBe('req-1');
  });
});

describe('failureOutcome', () => {
  it.each<[string, GitError | Error, string, boolean]>([
    ['AuthFailed', new GitError('401', { reason: 'AuthFailed' }), 'AuthFailed', false],
    ['RefNotFound', new GitError('gone', { reason: 'RefNotFound' }), 'RefNotFound', false],
    [
      'an invalid ref',
      new GitError('invalid ref', { reason: 'RefNotFound', terminal: true }),
      'RefNotFound',
      true,
    ],
    [
      'Unreachable',
      new GitError('Git server unreachable (ECONNREFUSED)', { reason: 'Unreachable' }),
      'FetchFailed',
      false,
    ],
    ['FetchFailed', new GitError('HTTP 500', { reason: 'FetchFailed' }), 'FetchFailed', false],
    ['ArtifactFailed', new GitError('unsafe path', { reason: 'ArtifactFailed' }), 'ArtifactFailed', false],
    ['a plain Error', new Error('boom'), 'FetchFailed', false],
  ])('GIVEN %s THEN the condition reason and terminal flag follow the table', (_w, err, reason, terminal) => {
    expect(failureOutcome(err)).toEqual({ ok: false, reason, message: err.message, terminal });
  });
});

describe('jitteredInterval', () => {
  it.each([0, 0.25, 0.5, 0.999999])(
    'GIVEN random()=%s THEN the delay stays within ±10%% of the interval',
    (r) => {
      const ms = jitteredInterval(60_000, () => r);
      expect(ms).toBeGreaterThanOrEqual(54_000);
      expect(ms).toBeLessThanOrEqual(66_000);
    },
  );

  it('GIVEN the extremes THEN they are exactly -10% and just under +10%, and the middle is the interval', () => {
    expect(jitteredInterval(60_000, () => 0)).toBe(54_000);
    expect(jitteredInterval(60_000, () => 0.5)).toBe(60_000);
    expect(jitteredInterval(60_000, () => 0.9999999)).toBe(66_000);
  });

  it('GIVEN Math.random THEN many draws all stay in bounds', () => {
    for (let i = 0; i < 1000; i++) {
      const ms = jitteredInterval(2_000);
      expect(ms >= 1_800 && ms <= 2_200).toBe(true);
    }
  });
});

describe('updateNeedsReconcile', () => {
  const obj = (
    generation: number,
    annotation?: string,
    extra: Record<string, unknown> = {},
  ): KubernetesObject => ({
    metadata: {
      uid: 'u1',
      generation,
      resourceVersion: String(Math.random()),
      ...(annotation ? { annotations: { [RECONCILE_REQUESTED_ANNOTATION]: annotation } } : {}),
      ...extra,
    },
  });
  it.each<[string, KubernetesObject, KubernetesObject, boolean]>([
    ['a status write', obj(1), obj(1), false],
    ['a spec change', obj(1), obj(2), true],
    ['a first reconcile request', obj(1), obj(1, 't1'), true],
    ['a new reconcile request', obj(1, 't1'), obj(1, 't2'), true],
    ['the same request, other metadata changed', obj(1, 't1'), obj(1, 't1', { labels: { a: 'b' } }), false],
    ['a deletion', obj(1), obj(1, undefined, { deletionTimestamp: '2026-11-30T10:00:00Z' }), true],
  ])('GIVEN %s THEN the need to reconcile follows the table', (_w, old, next, want) => {
    expect(updateNeedsReconcile(old, next)).toBe(want);
  });
});
