// The GitSource fetch layer against a real Git server (git http-backend): resolve, shallow
// fetch, content-addressed artifacts, and every failure a GitSource must report.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArtifactStore } from '../../src/git/artifact.js';
import type { GitAuth } from '../../src/git/auth.js';
import { computeDigest } from '../../src/git/digest.js';
import { GitError } from '../../src/git/errors.js';
import { fetchRevision, type FetchedRevision, type FetchRevisionOptions } from '../../src/git/fetch.js';
import { parseRefSpec, resolveRef, type GitRefSpec } from '../../src/git/ref.js';
import {
  commitFiles,
  createBranch,
  createRepo,
  createTag,
  deleteBranch,
  startGitServer,
  type GitServer,
} from '../support/git-server.js';

let server: GitServer;
let tmp: string;
let artifacts: ArtifactStore;
let dirs = 0;

beforeAll(async () => {
  server = await startGitServer();
  tmp = mkdtempSync(join(tmpdir(), 'sluice-git-fetch-test-'));
  artifacts = new ArtifactStore(join(tmp, 'artifacts'));
});
afterAll(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const auth = (): GitAuth => ({ type: 'basic', ...server.credentials() });
const newWorkDir = () => join(tmp, `work-${dirs++}`);

function fetchRef(
  repo: string,
  spec: GitRefSpec,
  extra: Partial<FetchRevisionOptions> = {},
): Promise<FetchedRevision> {
  return fetchRevision({
    url: server.url(repo),
    ref: parseRefSpec(spec),
    auth: auth(),
    workDir: newWorkDir(),
    artifacts,
    ...extra,
  });
}

/** Requests that download objects (upload-pack negotiations), as opposed to ref listings. */
const objectFetches = (repo: string) =>
  server.requests().filter((r) => r.repo === repo && r.method === 'POST' && r.service === 'git-upload-pack');
const refListings = (repo: string) =>
  server.requests().filter((r) => r.repo === repo && r.method === 'GET' && r.path.endsWith('/info/refs'));

async function failure(p: Promise<unknown>): Promise<GitError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(GitError);
    return err as GitError;
  }
  throw new Error('expected a GitError, but the call succeeded');
}

function filesOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const full = join(dir, entry);
    if (statSync(full).isFile()) out[entry] = readFileSync(full, 'utf8');
  }
  return out;
}

const text = (files: Record<string, string>) =>
  Object.entries(files).map(([path, content]) => ({
    path,
    kind: 'file' as const,
    content: Buffer.from(content),
  }));

describe('fetchRevision by ref kind', () => {
  const files = { 'deploy/app.yaml': 'kind: Deployment\n', 'README.md': '# app\n' };
  let first: string;
  let second: string;

  beforeAll(async () => {
    ({ sha: first } = await createRepo(server, 'kinds', files));
    await createTag(server, 'kinds', 'v1.0.0');
    await createTag(server, 'kinds', 'v1.1.0', { message: 'annotated release' });
    second = await commitFiles(server, 'kinds', {
      add: { 'deploy/app.yaml': 'kind: StatefulSet\n' },
      message: 'two',
    });
    await createTag(server, 'kinds', 'v2.0.0');
    await createTag(server, 'kinds', 'v1.2.0-rc.1');
    await commitFiles(server, 'kinds', { add: { 'later.txt': 'later\n' }, message: 'three' });
  });

  it('GIVEN a branch THEN the artifact holds exactly the tip commit tree, named main@sha1:<sha>', async () => {
    const tip = await commitFiles(server, 'kinds', { message: 'tip', branch: 'env/prod', from: 'main~1' });
    const got = await fetchRef('kinds', { branch: 'env/prod' });
    expect(got.revision).toBe(`env/prod@sha1:${tip}`);
    expect(got.fetched).toBe(true);
    expect(filesOf(got.path)).toEqual({ ...files, 'deploy/app.yaml': 'kind: StatefulSet\n' });
    expect(got.digest).toBe(computeDigest(text({ ...files, 'deploy/app.yaml': 'kind: StatefulSet\n' })));
  });

  it('GIVEN a lightweight tag THEN its commit; GIVEN an annotated tag THEN the peeled commit', async () => {
    const light = await fetchRef('kinds', { tag: 'v1.0.0' });
    expect(light.revision).toBe(`v1.0.0@sha1:${first}`);
    const annotated = await fetchRef('kinds', { tag: 'v1.1.0' });
    expect(annotated.revision).toBe(`v1.1.0@sha1:${first}`);
    expect(filesOf(annotated.path)).toEqual(files);
  });

  it('GIVEN a semver range THEN the highest matching release tag (no release candidates)', async () => {
    expect((await fetchRef('kinds', { semver: '^1.0.0' })).revision).toBe(`v1.1.0@sha1:${first}`);
    expect((await fetchRef('kinds', { semver: '>=1.0.0 <3.0.0' })).revision).toBe(`v2.0.0@sha1:${second}`);
  });

  it('GIVEN a commit below the branch tip THEN the fetch deepens until it has it', async () => {
    const plain = await fetchRef('kinds', { commit: first });
    expect(plain.revision).toBe(`sha1:${first}`);
    expect(filesOf(plain.path)).toEqual(files);
    const onBranch = await fetchRef('kinds', { commit: second, branch: 'main' });
    expect(onBranch.revision).toBe(`main@sha1:${second}`);
  });

  it('GIVEN no ref THEN the default branch, named by the HEAD symref', async () => {
    const head = await fetchRef('kinds', {});
    expect(head.revision).toMatch(/^main@sha1:[0-9a-f]{40}$/);
    expect(filesOf(head.path)['later.txt']).toBe('later\n');
  });

  it('GIVEN two sources of one commit THEN they share one artifact directory', async () => {
    const a = await fetchRef('kinds', { tag: 'v1.0.0' });
    const b = await fetchRef('kinds', { commit: first });
    expect(b.digest).toBe(a.digest);
    expect(b.path).toBe(a.path);
  });
});

describe('fetchRevision change detection', () => {
  it('GIVEN the ref still points at the last artifact’s commit THEN no objects are fetched', async () => {
    await createRepo(server, 'same', { 'a.yaml': 'a: 1\n' });
    const workDir = newWorkDir();
    const last = await fetchRef('same', { branch: 'main' }, { workDir });
    server.clearRequests();

    const again = await fetchRef('same', { branch: 'main' }, { workDir, last });

    expect(again).toEqual({ ...last, fetched: false });
    expect(objectFetches('same')).toHaveLength(0);
    expect(refListings('same')).toHaveLength(1);
  });

  it('GIVEN no last artifact but the commit already in the work dir (a restart) THEN no objects are fetched', async () => {
    await createRepo(server, 'restart', { 'a.yaml': 'a: 1\n' });
    const workDir = newWorkDir();
    const before = await fetchRef('restart', { branch: 'main' }, { workDir });
    server.clearRequests();

    const after = await fetchRef('restart', { branch: 'main' }, { workDir });

    expect(after).toEqual({ ...before, fetched: false });
    expect(objectFetches('restart')).toHaveLength(0);
  });

  it('GIVEN the last artifact was garbage-collected THEN it is rebuilt with the same digest', async () => {
    await createRepo(server, 'rebuilt', { 'a.yaml': 'rebuilt\n' });
    const workDir = newWorkDir();
    const last = await fetchRef('rebuilt', { branch: 'main' }, { workDir });
    rmSync(last.path, { recursive: true });

    const again = await fetchRef('rebuilt', { branch: 'main' }, { workDir, last });

    expect(again.digest).toBe(last.digest);
    expect(filesOf(again.path)).toEqual({ 'a.yaml': 'rebuilt\n' });
  });

  it('GIVEN a new commit THEN a new revision and a new digest; GIVEN an empty commit THEN a new revision, same digest', async () => {
    await createRepo(server, 'moving', { 'a.yaml': 'a: 1\n' });
    const workDir = newWorkDir();
    const v1 = await fetchRef('moving', { branch: 'main' }, { workDir });

    const c2 = await commitFiles(server, 'moving', { add: { 'a.yaml': 'a: 2\n' }, message: 'bump' });
    server.clearRequests();
    const v2 = await fetchRef('moving', { branch: 'main' }, { workDir, last: v1 });
    expect(v2.revision).toBe(`main@sha1:${c2}`);
    expect(v2.digest).not.toBe(v1.digest);
    expect(v2.fetched).toBe(true);
    expect(objectFetches('moving').length).toBeGreaterThan(0);
    expect(filesOf(v2.path)).toEqual({ 'a.yaml': 'a: 2\n' });
    expect(filesOf(v1.path)).toEqual({ 'a.yaml': 'a: 1\n' });

    const c3 = await commitFiles(server, 'moving', { message: 'empty' });
    const v3 = await fetchRef('moving', { branch: 'main' }, { workDir, last: v2 });
    expect(v3.revision).toBe(`main@sha1:${c3}`);
    expect(v3.digest).toBe(v2.digest);
  });
});

describe('fetchRevision failures', () => {
  beforeAll(() => createRepo(server, 'fail', { 'a.yaml': 'a\n' }));

  it('GIVEN wrong credentials THEN AuthFailed, and the password is not in the message', async () => {
    const password = 'wrong-password-4f2a';
    const err = await failure(
      fetchRef('fail', { branch: 'main' }, { auth: { type: 'basic', username: 'sluice', password } }),
    );
    expect(err).toMatchObject({ reason: 'AuthFailed', status: 401, terminal: false });
    expect(err.message).not.toContain(password);
    expect(err.message).not.toContain(server.credentials().password);
    expect(err.message).not.toContain(Buffer.from(`sluice:${password}`).toString('base64'));
  });

  it('GIVEN no credentials or a bearer token the server does not take THEN AuthFailed', async () => {
    expect((await failure(fetchRef('fail', { branch: 'main' }, { auth: { type: 'none' } }))).reason).toBe(
      'AuthFailed',
    );
    const token = 'tok-secret-9c1e';
    const err = await failure(fetchRef('fail', { branch: 'main' }, { auth: { type: 'bearer', token } }));
    expect(err.reason).toBe('AuthFailed');
    expect(err.message).not.toContain(token);
  });

  it('GIVEN credentials rotated on the server THEN the old ones fail with AuthFailed', async () => {
    const old = server.credentials();
    const stale = auth();
    server.setCredentials(old.username, 'rotated-password');
    try {
      const err = await failure(fetchRef('fail', { branch: 'main' }, { auth: stale }));
      expect(err.reason).toBe('AuthFailed');
      expect(err.message).not.toContain(old.password);
    } finally {
      server.setCredentials(old.username, old.password);
    }
  });

  it('GIVEN credentials in the URL THEN they are redacted from messages', async () => {
    const err = await failure(
      fetchRevision({
        url: server.url('fail').replace('http://', 'http://sluice:url-secret-77@'),
        ref: parseRefSpec({ branch: 'main' }),
        auth: { type: 'none' },
        workDir: newWorkDir(),
        artifacts,
      }),
    );
    expect(err.reason).toBe('AuthFailed');
    expect(err.message).not.toContain('url-secret-77');
  });

  it('GIVEN a deleted branch THEN RefNotFound', async () => {
    await createBranch(server, 'fail', 'feature');
    const workDir = newWorkDir();
    const last = await fetchRef('fail', { branch: 'feature' }, { workDir });
    await deleteBranch(server, 'fail', 'feature');
    const err = await failure(fetchRef('fail', { branch: 'feature' }, { workDir, last }));
    expect(err).toMatchObject({ reason: 'RefNotFound', terminal: false });
    expect(err.message).toMatch(/branch "feature" not found/);
  });

  it.each<[string, GitRefSpec, RegExp]>([
    ['an unknown tag', { tag: 'v9.9.9' }, /tag "v9.9.9" not found/],
    ['a semver range no tag matches', { semver: '^7' }, /no tag matches semver range "\^7"/],
    ['a commit on no branch', { commit: 'f'.repeat(40) }, /is not in the history of the default branch/],
    ['a commit on a missing branch', { commit: 'f'.repeat(40), branch: 'nope' }, /branch "nope" not found/],
  ])('GIVEN %s THEN RefNotFound', async (_what, spec, message) => {
    const err = await failure(fetchRef('fail', spec));
    expect(err.reason).toBe('RefNotFound');
    expect(err.message).toMatch(message);
  });

  it('GIVEN a repository that does not exist THEN FetchFailed (HTTP 404)', async () => {
    const err = await failure(fetchRef('no-such-repo', { branch: 'main' }));
    expect(err).toMatchObject({ reason: 'FetchFailed', status: 404 });
  });

  it.each(['ssh://git@127.0.0.1/x.git', 'git@127.0.0.1:org/x.git', 'file:///tmp/x.git'])(
    'GIVEN the URL %s THEN a terminal FetchFailed saying only HTTP(S) works, without a request',
    async (url) => {
      server.clearRequests();
      const err = await failure(resolveRef(url, parseRefSpec({ branch: 'main' }), auth()));
      expect(err).toMatchObject({ reason: 'FetchFailed', terminal: true });
      expect(err.message).toMatch(/only http:\/\/ and https:\/\/ URLs are supported/);
      expect(server.requests()).toHaveLength(0);
    },
  );

  it('GIVEN a server that accepts connections but never answers THEN Unreachable (timed out)', async () => {
    const stalled: Server = createServer(() => undefined);
    await new Promise<void>((r) => stalled.listen(0, '127.0.0.1', r));
    const port = (stalled.address() as { port: number }).port;
    try {
      const err = await failure(
        fetchRevision({
          url: `http://127.0.0.1:${port}/x.git`,
          ref: parseRefSpec({ branch: 'main' }),
          auth: auth(),
          workDir: newWorkDir(),
          artifacts,
          timeoutMs: 300,
        }),
      );
      expect(err.reason).toBe('Unreachable');
      expect(err.message).toMatch(/timed out/);
    } finally {
      stalled.close();
    }
  });
});

describe('fetchRevision when the server goes down', () => {
  it('GIVEN the server paused THEN Unreachable; GIVEN it resumed THEN the next fetch recovers', async () => {
    await createRepo(server, 'outage', { 'a.yaml': 'a: 1\n' });
    const workDir = newWorkDir();
    const before = await fetchRef('outage', { branch: 'main' }, { workDir });

    await server.pause();
    let during: GitError;
    let commitWhileDown: string;
    try {
      // Commits still land (the helpers write through the filesystem).
      commitWhileDown = await commitFiles(server, 'outage', {
        add: { 'a.yaml': 'a: 2\n' },
        message: 'during',
      });
      during = await failure(fetchRef('outage', { branch: 'main' }, { workDir, last: before }));
    } finally {
      await server.resume();
    }
    expect(during.reason).toBe('Unreachable');

    const after = await fetchRef('outage', { branch: 'main' }, { workDir, last: before });
    expect(after.revision).toBe(`main@sha1:${commitWhileDown}`);
    expect(filesOf(after.path)).toEqual({ 'a.yaml': 'a: 2\n' });
  });
});

describe('fetchRevision work directory upkeep', () => {
  const packs = (workDir: string) =>
    readdirSync(join(workDir, 'objects', 'pack')).filter((f) => f.endsWith('.pack')).length;

  it('GIVEN a work dir damaged by a crash THEN the next fetch starts afresh and succeeds', async () => {
    await createRepo(server, 'damaged', { 'a.yaml': 'a: 1\n' });
    const workDir = newWorkDir();
    const last = await fetchRef('damaged', { branch: 'main' }, { workDir });
    for (const f of readdirSync(join(workDir, 'objects', 'pack'))) {
      writeFileSync(join(workDir, 'objects', 'pack', f), 'garbage');
    }
    const next = await commitFiles(server, 'damaged', { add: { 'b.yaml': 'b: 1\n' }, message: 'two' });

    const got = await fetchRef('damaged', { branch: 'main' }, { workDir, last });

    expect(got.revision).toBe(`main@sha1:${next}`);
    expect(filesOf(got.path)).toEqual({ 'a.yaml': 'a: 1\n', 'b.yaml': 'b: 1\n' });
  });

  it('GIVEN many updates THEN packfiles do not pile up without bound (isomorphic-git has no gc)', async () => {
    await createRepo(server, 'busy-history', { 'n.txt': '0\n' });
    const workDir = newWorkDir();
    let last = await fetchRef('busy-history', { branch: 'main' }, { workDir });
    for (let i = 1; i <= 20; i++) {
      await commitFiles(server, 'busy-history', { add: { 'n.txt': `${i}\n` }, message: `c${i}` });
      last = await fetchRef('busy-history', { branch: 'main' }, { workDir, last });
      expect(packs(workDir)).toBeLessThanOrEqual(17);
    }
    expect(filesOf(last.path)).toEqual({ 'n.txt': '20\n' });
  });
});

describe('fetchRevision concurrency', () => {
  it('GIVEN concurrent fetches into one work dir THEN they are serialized and both succeed', async () => {
    const { sha: base } = await createRepo(server, 'busy', { 'a.yaml': 'a: 1\n' });
    await createTag(server, 'busy', 'v1.0.0');
    const tip = await commitFiles(server, 'busy', { add: { 'b.yaml': 'b: 1\n' }, message: 'two' });
    const workDir = newWorkDir();

    const [byBranch, byTag, again] = await Promise.all([
      fetchRef('busy', { branch: 'main' }, { workDir }),
      fetchRef('busy', { tag: 'v1.0.0' }, { workDir }),
      fetchRef('busy', { branch: 'main' }, { workDir }),
    ]);

    expect(byBranch.revision).toBe(`main@sha1:${tip}`);
    expect(filesOf(byBranch.path)).toEqual({ 'a.yaml': 'a: 1\n', 'b.yaml': 'b: 1\n' });
    expect(byTag.revision).toBe(`v1.0.0@sha1:${base}`);
    expect(filesOf(byTag.path)).toEqual({ 'a.yaml': 'a: 1\n' });
    expect(again.digest).toBe(byBranch.digest);
  });
});
