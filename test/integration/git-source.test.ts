// The GitSource controller, in-process through a Manager, against the real kube-local hub and
// a real Git server (git http-backend): refs, polling, credentials, deleted branches, a server
// that goes away, restarts that lost the artifact, and reconcile requests.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CoreV1Event, KubernetesObject } from '@kubernetes/client-node';
import type { GitSource, GitSourceSpec } from '../../src/api/git-source.js';
import { registerSourceControllers, type SourceControllers } from '../../src/git/register.js';
import { RECONCILE_REQUESTED_ANNOTATION } from '../../src/git/source-status.js';
import { Manager } from '../../src/kube/manager.js';
import { captureLogs } from '../support/capture-logs.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';
import {
  commitFiles,
  createBranch,
  createRepo,
  createTag,
  deleteBranch,
  startGitServer,
  type GitServer,
} from '../support/git-server.js';
import { createNamespace, deleteObject, ensureCrds, secret } from '../support/sluice-objects.js';

const hub = testClient('hub');
const ns = uniqueName('gitsource');
const logs = captureLogs();
const logLines = logs.raw;
let git: GitServer;
let storage: string;
let manager: Manager;
let controllers: SourceControllers;

type Cond = { type: string; status: string; reason: string; message: string };

async function apply(name: string, spec: Partial<GitSourceSpec>, annotations?: Record<string, string>) {
  await hub.raw.applyRaw(
    {
      apiVersion: 'sluice.dev/v1',
      kind: 'GitSource',
      metadata: { namespace: ns, name, ...(annotations ? { annotations } : {}) },
      spec: { interval: '2s', ...spec },
    } as KubernetesObject,
    { fieldManager: 'sluice-test', force: true },
  );
}

function get(name: string): Promise<GitSource> {
  return hub.raw.getRaw<GitSource>({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name },
  } as KubernetesObject);
}

const cond = (s: GitSource, type: string): Cond | undefined =>
  s.status?.conditions?.find((c) => c.type === type) as Cond | undefined;

/** Waits until `name`'s Ready condition has `status` (and `reason`), and returns the object. */
function waitReady(name: string, status: 'True' | 'False', reason?: string, timeoutMs = 60_000) {
  return eventually(async () => {
    const s = await get(name);
    const ready = cond(s, 'Ready');
    return ready?.status === status &&
      (!reason || ready.reason === reason) &&
      s.status?.observedGeneration === s.metadata?.generation
      ? s
      : undefined;
  }, timeoutMs);
}

function waitRevision(name: string, revision: string, timeoutMs = 60_000) {
  return eventually(async () => {
    const s = await get(name);
    return s.status?.artifact?.revision === revision && cond(s, 'Ready')?.status === 'True' ? s : undefined;
  }, timeoutMs);
}

async function credentialsSecret(name: string, password = git.credentials().password) {
  await secret(hub, ns, name, { username: git.credentials().username, password });
}

async function eventsOf(name: string): Promise<CoreV1Event[]> {
  const list = await hub.raw.listRaw<CoreV1Event & KubernetesObject>('v1', 'Event', { namespace: ns });
  return list.items.filter((e) => e.involvedObject?.name === name && e.involvedObject?.kind === 'GitSource');
}

const objectFetches = (repo: string) =>
  git.requests().filter((r) => r.repo === repo && r.method === 'POST' && r.service === 'git-upload-pack');

beforeAll(async () => {
  git = await startGitServer();
  storage = mkdtempSync(join(tmpdir(), 'sluice-gitsource-test-'));
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  await credentialsSecret('git-credentials');
  manager = new Manager({
    client: testClient('hub'),
    logger: logs.logger,
    leaderElection: false,
  });
  controllers = registerSourceControllers(manager, {
    storagePath: storage,
    keepArtifacts: 1,
    retry: { baseDelayMs: 200, maxDelayMs: 1000 },
  });
  await manager.start();
});

afterAll(async () => {
  await manager?.stop();
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await git?.stop();
  if (storage) rmSync(storage, { recursive: true, force: true });
});

describe('GitSource controller on a real hub and Git server', () => {
  it('GIVEN branch, tag and semver sources THEN each becomes Ready with its revision and an artifact on disk', async () => {
    const { sha: first } = await createRepo(git, 'refs', { 'deploy/app.yaml': 'kind: Deployment\n' });
    await createTag(git, 'refs', 'v1.0.0');
    const second = await commitFiles(git, 'refs', {
      add: { 'deploy/app.yaml': 'kind: StatefulSet\n' },
      message: 'two',
    });
    await createTag(git, 'refs', 'v1.1.0', { message: 'annotated' });
    await createTag(git, 'refs', 'v2.0.0');
    const url = git.url('refs');
    const secretRef = { name: 'git-credentials' };
    await apply('branch', { url, ref: { branch: 'main' }, secretRef });
    await apply('tag', { url, ref: { tag: 'v1.0.0' }, secretRef });
    await apply('semver', { url, ref: { semver: '^1.0.0' }, secretRef });

    const branch = await waitRevision('branch', `main@sha1:${second}`);
    const tag = await waitRevision('tag', `v1.0.0@sha1:${first}`);
    const semver = await waitRevision('semver', `v1.1.0@sha1:${second}`);

    expect(cond(branch, 'Ready')).toMatchObject({
      reason: 'Succeeded',
      message: `stored artifact for revision main@sha1:${second}`,
    });
    expect(cond(branch, 'Reconciling')).toBeUndefined();
    expect(cond(branch, 'Stalled')).toBeUndefined();
    // The branch and the semver source are the same tree: one artifact, shared.
    expect(semver.status?.artifact?.digest).toBe(branch.status?.artifact?.digest);
    const digest = branch.status!.artifact!.digest;
    expect(branch.status?.artifact?.path).toBe(controllers.artifacts.artifactPath(digest));
    expect(readFileSync(join(controllers.artifacts.artifactPath(digest), 'deploy/app.yaml'), 'utf8')).toBe(
      'kind: StatefulSet\n',
    );
    expect(
      readFileSync(
        join(controllers.artifacts.artifactPath(tag.status!.artifact!.digest), 'deploy/app.yaml'),
        'utf8',
      ),
    ).toBe('kind: Deployment\n');
    const events = await eventsOf('branch');
    expect(events.map((e) => `${e.type}/${e.reason}/${e.message}`)).toEqual([
      `Normal/NewArtifact/stored artifact for revision main@sha1:${second}`,
    ]);
  });

  it('GIVEN a 2s interval WHEN a commit is pushed THEN polling alone publishes it; an unchanged ref fetches nothing', async () => {
    await createRepo(git, 'poll', { 'a.yaml': 'a: 1\n' });
    await apply('poll', {
      url: git.url('poll'),
      ref: { branch: 'main' },
      secretRef: { name: 'git-credentials' },
    });
    const v1 = await waitReady('poll', 'True');
    const before = v1.status!.artifact!;

    // Several polls of an unchanged ref: ref listings only, no object download.
    git.clearRequests();
    const polls = () =>
      git.requests().filter((r) => r.repo === 'poll' && r.path.endsWith('/info/refs')).length;
    await eventually(async () => polls() >= 2, 30_000);
    expect(objectFetches('poll')).toHaveLength(0);
    expect((await get('poll')).status?.artifact).toEqual(before);

    const sha = await commitFiles(git, 'poll', { add: { 'a.yaml': 'a: 2\n' }, message: 'bump' });
    const v2 = await waitRevision('poll', `main@sha1:${sha}`);
    expect(v2.status?.artifact?.digest).not.toBe(before.digest);
    expect(readFileSync(join(v2.status!.artifact!.path!, 'a.yaml'), 'utf8')).toBe('a: 2\n');
  });

  it('GIVEN wrong credentials THEN AuthFailed and the artifact is unchanged; fixing the Secret recovers it', async () => {
    const { sha } = await createRepo(git, 'auth', { 'a.yaml': 'a: 1\n' });
    await credentialsSecret('auth-credentials');
    await apply('auth', {
      url: git.url('auth'),
      ref: { branch: 'main' },
      secretRef: { name: 'auth-credentials' },
    });
    const good = await waitRevision('auth', `main@sha1:${sha}`);

    await credentialsSecret('auth-credentials', 'not-the-password');
    const failed = await waitReady('auth', 'False', 'AuthFailed');
    expect(cond(failed, 'Ready')?.message).toBe(
      `resolve branch main of ${git.url('auth')}: authentication failed (HTTP 401 Unauthorized): check the credentials in the Secret`,
    );
    expect(cond(failed, 'Reconciling')?.reason).toBe('ProgressingWithRetry');
    // A new commit the controller cannot see: the next attempt fails, the artifact stays.
    await commitFiles(git, 'auth', { add: { 'a.yaml': 'a: 2\n' }, message: 'unseen' });
    git.clearRequests();
    await eventually(async () => git.requests().some((r) => r.repo === 'auth' && r.status === 401), 30_000);
    expect((await get('auth')).status?.artifact).toEqual(good.status?.artifact);
    expect(logLines.join('')).not.toContain('not-the-password');
    expect(logLines.join('')).not.toContain(git.credentials().password);

    await credentialsSecret('auth-credentials');
    await waitReady('auth', 'True', 'Succeeded');
    const reasons = (await eventsOf('auth')).map((e) => `${e.type}/${e.reason}`);
    expect(reasons).toEqual(expect.arrayContaining(['Normal/NewArtifact', 'Warning/AuthFailed']));
  });

  it('GIVEN a Secret that does not exist or lacks keys THEN Stalled (AuthFailed) naming it; creating it recovers', async () => {
    await createRepo(git, 'nosecret', { 'a.yaml': 'a: 1\n' });
    await apply('nosecret', {
      url: git.url('nosecret'),
      ref: { branch: 'main' },
      secretRef: { name: 'later' },
    });
    const stalled = await waitReady('nosecret', 'False', 'AuthFailed');
    expect(cond(stalled, 'Ready')?.message).toBe(`Secret ${ns}/later (spec.secretRef) not found`);
    expect(cond(stalled, 'Stalled')).toMatchObject({ status: 'True', reason: 'AuthFailed' });
    expect(stalled.status?.artifact).toBeUndefined();

    await secret(hub, ns, 'later', { user: 'x' });
    await eventually(async () => {
      const s = await get('nosecret');
      return cond(s, 'Ready')?.message ===
        `Secret ${ns}/later: has none of the keys "username"/"password" or "bearerToken"`
        ? s
        : undefined;
    });
    await credentialsSecret('later');
    await waitReady('nosecret', 'True');
  });

  it('GIVEN an invalid ref THEN Stalled with RefNotFound and not retried; fixing the spec recovers', async () => {
    await createRepo(git, 'badref', { 'a.yaml': 'a: 1\n' });
    await apply('badref', {
      url: git.url('badref'),
      ref: { branch: 'feature..x' },
      secretRef: { name: 'git-credentials' },
    });
    const stalled = await waitReady('badref', 'False', 'RefNotFound');
    expect(cond(stalled, 'Ready')?.message).toBe(
      'invalid ref: branch "feature..x" is not a valid Git ref name',
    );
    expect(cond(stalled, 'Stalled')?.status).toBe('True');
    const requests = git.requests().filter((r) => r.repo === 'badref').length;
    expect(requests).toBe(0);
    await apply('badref', {
      url: git.url('badref'),
      ref: { branch: 'main' },
      secretRef: { name: 'git-credentials' },
    });
    await waitReady('badref', 'True');
  });

  it('GIVEN the followed branch is deleted THEN RefNotFound keeping the artifact; recreated THEN it recovers', async () => {
    await createRepo(git, 'branchy', { 'a.yaml': 'a: 1\n' });
    const sha = await createBranch(git, 'branchy', 'release');
    await apply('branchy', {
      url: git.url('branchy'),
      ref: { branch: 'release' },
      secretRef: { name: 'git-credentials' },
    });
    const good = await waitRevision('branchy', `release@sha1:${sha}`);

    await deleteBranch(git, 'branchy', 'release');
    const gone = await waitReady('branchy', 'False', 'RefNotFound');
    expect(cond(gone, 'Ready')?.message).toBe(
      `resolve branch release of ${git.url('branchy')}: branch "release" not found on the remote`,
    );
    expect(gone.status?.artifact).toEqual(good.status?.artifact);

    const again = await commitFiles(git, 'branchy', { branch: 'release', message: 'recreated' });
    await waitRevision('branchy', `release@sha1:${again}`);
  });

  it('GIVEN the Git server goes away THEN FetchFailed saying it is unreachable; when it returns THEN it recovers', async () => {
    // A server of its own: pausing the shared one would fail every other source.
    const flaky = await startGitServer({ username: 'flaky', password: git.credentials().password });
    try {
      await createRepo(flaky, 'flaky', { 'a.yaml': 'a: 1\n' });
      await secret(hub, ns, 'flaky-credentials', { username: 'flaky', password: git.credentials().password });
      await apply('flaky', {
        url: flaky.url('flaky'),
        ref: { branch: 'main' },
        secretRef: { name: 'flaky-credentials' },
      });
      const good = await waitReady('flaky', 'True');

      await flaky.pause();
      const down = await waitReady('flaky', 'False', 'FetchFailed');
      expect(cond(down, 'Ready')?.message).toMatch(
        new RegExp(
          `^resolve branch main of ${flaky.url('flaky').replace(/[.]/g, '\\.')}: Git server unreachable \\(ECONNREFUSED\\)`,
        ),
      );
      expect(down.status?.artifact).toEqual(good.status?.artifact);

      const sha = await commitFiles(flaky, 'flaky', { add: { 'a.yaml': 'a: 2\n' }, message: 'while down' });
      await flaky.resume();
      await waitRevision('flaky', `main@sha1:${sha}`);
      const reasons = (await eventsOf('flaky')).map((e) => `${e.type}/${e.reason}`);
      expect(reasons).toEqual(expect.arrayContaining(['Warning/FetchFailed']));
    } finally {
      await flaky.stop();
    }
  });

  it('GIVEN the artifact directory is gone (a restart on a new pod) WHEN a reconcile is requested THEN it is rebuilt although the sha did not move, and lastHandledReconcileAt records the request', async () => {
    await createRepo(git, 'lost', { 'a.yaml': 'lost: 1\n' });
    await apply('lost', {
      url: git.url('lost'),
      ref: { branch: 'main' },
      interval: '10m',
      secretRef: { name: 'git-credentials' },
    });
    const good = await waitReady('lost', 'True');
    const { digest } = good.status!.artifact!;
    const path = controllers.artifacts.artifactPath(digest);
    rmSync(path, { recursive: true });
    rmSync(join(storage, 'sources', ns, 'lost'), { recursive: true });
    git.clearRequests();

    const requested = await controllers.requestReconcile(ns, 'lost');
    const handled = await eventually(async () => {
      const s = await get('lost');
      return s.status?.lastHandledReconcileAt === requested ? s : undefined;
    });
    expect(handled.metadata?.annotations?.[RECONCILE_REQUESTED_ANNOTATION]).toBe(requested);
    expect(handled.status?.artifact).toEqual(good.status?.artifact);
    expect(existsSync(join(path, 'a.yaml'))).toBe(true);
    expect(objectFetches('lost').length).toBeGreaterThan(0);
  });

  it('GIVEN a suspended source WHEN a commit is pushed THEN nothing is fetched; resumed THEN it catches up', async () => {
    await createRepo(git, 'suspended', { 'a.yaml': 'a: 1\n' });
    await apply('suspended', {
      url: git.url('suspended'),
      ref: { branch: 'main' },
      secretRef: { name: 'git-credentials' },
    });
    const good = await waitReady('suspended', 'True');
    await apply('suspended', {
      url: git.url('suspended'),
      ref: { branch: 'main' },
      secretRef: { name: 'git-credentials' },
      suspend: true,
    });
    // Wait until the controller has seen the suspension (its next poll would list refs).
    await eventually(async () =>
      logLines.some((l) => l.includes('suspended: not fetching') && l.includes(`${ns}/suspended`)),
    );
    const sha = await commitFiles(git, 'suspended', {
      add: { 'a.yaml': 'a: 2\n' },
      message: 'while suspended',
    });
    git.clearRequests();
    await new Promise((r) => setTimeout(r, 3000));
    expect(git.requests().filter((r) => r.repo === 'suspended')).toHaveLength(0);
    expect((await get('suspended')).status?.artifact).toEqual(good.status?.artifact);

    await apply('suspended', {
      url: git.url('suspended'),
      ref: { branch: 'main' },
      secretRef: { name: 'git-credentials' },
    });
    await waitRevision('suspended', `main@sha1:${sha}`);
  });

  it('GIVEN artifacts no source points at any more THEN a collection removes all but the most recent, never one in use', async () => {
    await createRepo(git, 'gc', { 'gc.yaml': 'gc: 0\n' });
    await apply('gc', {
      url: git.url('gc'),
      ref: { branch: 'main' },
      secretRef: { name: 'git-credentials' },
    });
    const passed: string[] = [];
    for (let i = 1; i <= 3; i++) {
      const sha = await commitFiles(git, 'gc', { add: { 'gc.yaml': `gc: ${i}\n` }, message: `gc ${i}` });
      const s = await waitRevision('gc', `main@sha1:${sha}`);
      passed.push(s.status!.artifact!.digest);
    }
    const all = await hub.raw.listRaw<GitSource>('sluice.dev/v1', 'GitSource', { namespace: ns });
    const inUse = new Set(all.items.flatMap((s) => (s.status?.artifact ? [s.status.artifact.digest] : [])));

    const removed = await controllers.collectArtifacts();

    // gc: 1 and gc: 2 are used by no source; with keepArtifacts 1, at least one of them goes.
    expect(removed.length).toBeGreaterThan(0);
    for (const digest of removed) expect(inUse.has(digest)).toBe(false);
    for (const digest of inUse) expect(await controllers.artifacts.has(digest)).toBe(true);
    expect(await controllers.artifacts.has(passed[2]!)).toBe(true);
  });

  it('GIVEN a deleted source THEN its work directory is removed and the controller goes on', async () => {
    await createRepo(git, 'deleted', { 'a.yaml': 'a: 1\n' });
    await apply('deleted', {
      url: git.url('deleted'),
      ref: { branch: 'main' },
      secretRef: { name: 'git-credentials' },
    });
    await waitReady('deleted', 'True');
    const dir = join(storage, 'sources', ns, 'deleted');
    expect(existsSync(dir)).toBe(true);
    await deleteObject(hub, {
      apiVersion: 'sluice.dev/v1',
      kind: 'GitSource',
      metadata: { namespace: ns, name: 'deleted' },
    });
    await eventually(async () => !existsSync(dir));
  });
});
