// Git write-back after a rollback, against a real Git server (git http-backend): revert,
// restore when the revert conflicts, push races, idempotent re-runs, and pull requests
// through a local stand-in for the GitHub and GitLab APIs (there is no GitHub here: the
// stand-in implements only the endpoints Sluice calls and records what it was sent).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PullRequestTarget } from '../../src/api/canary-release.js';
import { GitError } from '../../src/git/errors.js';
import {
  openRollbackPullRequest,
  pushRollback,
  rollbackCommitMessage,
  type RollbackWriteBackRequest,
} from '../../src/git/write-back.js';
import { commitFiles, createRepo, runGit, startGitServer, type GitServer } from '../support/git-server.js';

let server: GitServer;
let tmp: string;
let n = 0;

beforeAll(async () => {
  server = await startGitServer();
  tmp = mkdtempSync(join(tmpdir(), 'sluice-write-back-test-'));
});
afterAll(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const GOOD = {
  'deploy/app.yaml': 'image: app:1\n',
  'deploy/old.yaml': 'old: true\n',
  'README.md': '# app\n',
};

/** A repository with a good commit, then the bad one (modify, add, delete), then an unrelated commit. */
async function repoWithBadCommit(repo: string) {
  // The repository's name in the first commit keeps SHAs (and so rollback branch names) apart:
  // identical trees committed in the same second would hash alike, and the fake host would see
  // one repository's pull request as already open for another.
  const { sha: good } = await createRepo(server, repo, { ...GOOD, 'README.md': `# app (${repo})\n` }, 'good');
  const bad = await commitFiles(server, repo, {
    add: { 'deploy/app.yaml': 'image: app:2\n', 'deploy/extra.yaml': 'extra: true\n' },
    remove: ['deploy/old.yaml'],
    message: 'ship app 2',
  });
  const unrelated = await commitFiles(server, repo, {
    add: { 'README.md': '# app, docs\n' },
    message: 'docs',
  });
  return { good, bad, unrelated };
}

function request(
  repo: string,
  bad: string,
  extra: Partial<RollbackWriteBackRequest> = {},
): RollbackWriteBackRequest {
  return {
    url: server.url(repo),
    auth: { type: 'basic', ...server.credentials() },
    branch: 'main',
    badCommit: bad,
    paths: [],
    dir: './deploy',
    message: rollbackCommitMessage({
      namespace: 'shop',
      name: 'web',
      step: '2/4',
      canaryWeight: 20,
      reason: 'AnalysisFailed: score 0.50 below 0.95',
      metric: 'error-rate',
      value: '0.2',
      threshold: '<= 0.01',
      badRevision: `main@sha1:${bad}`,
    }),
    author: { name: 'Sluice', email: 'sluice@sluice.dev' },
    workDir: join(tmp, `work-${n++}`),
    ...extra,
  };
}

const bare = (repo: string) => server.repoPath(repo);
const show = (repo: string, rev: string, path: string) =>
  runGit(['--git-dir', bare(repo), 'show', `${rev}:${path}`]).catch(() => undefined);
const files = (repo: string, rev: string) =>
  runGit(['--git-dir', bare(repo), 'ls-tree', '-r', '--name-only', rev]).then((s) => s.split('\n'));
const tip = (repo: string) => runGit(['--git-dir', bare(repo), 'rev-parse', 'main']);
const pushes = (repo: string) =>
  server.requests().filter((r) => r.repo === repo && r.method === 'POST' && r.service === 'git-receive-pack');

describe('pushRollback', () => {
  it('GIVEN a bad commit that reverts cleanly WHEN rolled back THEN a revert commit on main undoes its modify, add and delete and keeps later commits', async () => {
    const { bad, unrelated } = await repoWithBadCommit('clean');
    const out = await pushRollback(request('clean', bad));
    expect(out).toEqual({ method: 'revert', commit: await tip('clean'), attempts: 1 });
    expect(await runGit(['--git-dir', bare('clean'), 'rev-parse', 'main~1'])).toBe(unrelated);
    expect(await show('clean', 'main', 'deploy/app.yaml')).toBe('image: app:1');
    expect(await show('clean', 'main', 'deploy/old.yaml')).toBe('old: true');
    expect(await files('clean', 'main')).not.toContain('deploy/extra.yaml');
    expect(await show('clean', 'main', 'README.md')).toBe('# app, docs');
    // The server's own git accepts what isomorphic-git wrote.
    await runGit(['--git-dir', bare('clean'), 'fsck', '--no-progress']);
  });

  it('GIVEN a rollback commit THEN its message names the release, step, metric, value, threshold and carries the trailers', async () => {
    const { bad } = await repoWithBadCommit('message');
    await pushRollback(request('message', bad));
    const message = await runGit(['--git-dir', bare('message'), 'log', '-1', '--format=%B', 'main']);
    expect(message.split('\n')[0]).toBe(
      'Roll back shop/web at step 2/4: error-rate = 0.2 (threshold <= 0.01)',
    );
    expect(message).toContain('canary weight 20%');
    expect(message).toContain('Reason: AnalysisFailed: score 0.50 below 0.95');
    const trailers = await runGit([
      '--git-dir',
      bare('message'),
      'log',
      '-1',
      '--format=%(trailers)',
      'main',
    ]);
    expect(trailers.split('\n')).toEqual(['Sluice-Release: shop/web', `Sluice-Reverts: ${bad}`]);
    const author = await runGit(['--git-dir', bare('message'), 'log', '-1', '--format=%an <%ae>', 'main']);
    expect(author).toBe('Sluice <sluice@sluice.dev>');
  });

  it('GIVEN the target file changed again after the bad commit WHEN rolled back THEN the last-good contents of the paths are restored', async () => {
    const { good, bad } = await repoWithBadCommit('conflict');
    await commitFiles(server, 'conflict', {
      add: { 'deploy/app.yaml': 'image: app:2.1\n' },
      message: 'hotfix',
    });
    const out = await pushRollback(
      request('conflict', bad, { lastGoodCommit: good, paths: ['deploy/app.yaml'] }),
    );
    expect(out.method).toBe('restore');
    expect(await show('conflict', 'main', 'deploy/app.yaml')).toBe('image: app:1');
    // Only the named paths are restored: extra.yaml stays, old.yaml stays deleted.
    expect(await files('conflict', 'main')).toEqual(['README.md', 'deploy/app.yaml', 'deploy/extra.yaml']);
  });

  it('GIVEN a conflicting revert and paths [] THEN every file under dir is restored, files outside it kept', async () => {
    const { good, bad } = await repoWithBadCommit('restore-dir');
    await commitFiles(server, 'restore-dir', {
      add: { 'deploy/app.yaml': 'image: app:2.1\n' },
      message: 'hotfix',
    });
    const out = await pushRollback(request('restore-dir', bad, { lastGoodCommit: good }));
    expect(out.method).toBe('restore');
    expect(await files('restore-dir', 'main')).toEqual(['README.md', 'deploy/app.yaml', 'deploy/old.yaml']);
    expect(await show('restore-dir', 'main', 'README.md')).toBe('# app, docs');
  });

  it('GIVEN a conflicting revert and no last good commit THEN a terminal Conflict naming the paths, nothing pushed', async () => {
    const { bad } = await repoWithBadCommit('no-good');
    await commitFiles(server, 'no-good', {
      add: { 'deploy/app.yaml': 'image: app:2.1\n' },
      message: 'hotfix',
    });
    const before = await tip('no-good');
    server.clearRequests();
    const err = await pushRollback(request('no-good', bad)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as GitError).reason).toBe('Conflict');
    expect((err as GitError).terminal).toBe(true);
    expect((err as GitError).message).toContain('deploy/app.yaml');
    expect((err as GitError).message).not.toContain(server.credentials().password);
    expect(await tip('no-good')).toBe(before);
    expect(pushes('no-good')).toHaveLength(0);
  });

  it('GIVEN another push lands between fetch and push WHEN rolled back THEN the rollback is rebuilt on the new tip and pushed on attempt 2', async () => {
    const { bad } = await repoWithBadCommit('race');
    let racer = '';
    const out = await pushRollback(request('race', bad), {
      beforePush: async (attempt) => {
        if (attempt === 1)
          racer = await commitFiles(server, 'race', { add: { 'other.txt': 'x\n' }, message: 'racer' });
      },
    });
    expect(out.method).toBe('revert');
    expect(out.attempts).toBe(2);
    expect(await tip('race')).toBe(out.commit);
    expect(await runGit(['--git-dir', bare('race'), 'rev-parse', 'main~1'])).toBe(racer);
    expect(await show('race', 'main', 'other.txt')).toBe('x');
    expect(await show('race', 'main', 'deploy/app.yaml')).toBe('image: app:1');
  });

  it('GIVEN the branch moves before every push THEN PushRejected after maxAttempts, never a force push', async () => {
    const { bad } = await repoWithBadCommit('always-race');
    let racer = '';
    const err = await pushRollback(request('always-race', bad), {
      maxAttempts: 3,
      beforePush: async (attempt) => {
        racer = await commitFiles(server, 'always-race', {
          add: { 'n.txt': `${attempt}\n` },
          message: 'racer',
        });
      },
    }).catch((e: unknown) => e);
    expect((err as GitError).reason).toBe('PushRejected');
    expect((err as GitError).message).toContain('3 attempts');
    expect(await tip('always-race')).toBe(racer);
  });

  it('GIVEN a rollback already pushed (a crash before status was written) WHEN run again, even from a fresh work dir THEN alreadyDone with that commit and no push', async () => {
    const { bad } = await repoWithBadCommit('idem');
    const first = await pushRollback(request('idem', bad));
    await commitFiles(server, 'idem', { add: { 'later.txt': 'later\n' }, message: 'later work' });
    server.clearRequests();
    const again = await pushRollback(request('idem', bad));
    expect(again).toEqual({ method: 'alreadyDone', commit: first.commit, attempts: 1 });
    expect(pushes('idem')).toHaveLength(0);
  });

  it('GIVEN Git already undid the bad change by hand THEN alreadyDone at the tip, nothing pushed', async () => {
    const { bad } = await repoWithBadCommit('by-hand');
    await commitFiles(server, 'by-hand', {
      add: { 'deploy/app.yaml': 'image: app:1\n', 'deploy/old.yaml': 'old: true\n' },
      remove: ['deploy/extra.yaml'],
      message: 'manual revert',
    });
    const head = await tip('by-hand');
    server.clearRequests();
    expect(await pushRollback(request('by-hand', bad))).toEqual({
      method: 'alreadyDone',
      commit: head,
      attempts: 1,
    });
    expect(pushes('by-hand')).toHaveLength(0);
  });

  it('GIVEN a work directory damaged by a crash (a corrupt shallow file) THEN it is discarded and the rollback still pushed', async () => {
    const { bad } = await repoWithBadCommit('damaged');
    const req = request('damaged', bad);
    await pushRollback(req);
    const bad2 = await commitFiles(server, 'damaged', {
      add: { 'deploy/app.yaml': 'image: app:3\n' },
      message: 'ship app 3',
    });
    // What a crash mid-write leaves: a shallow list naming an object that is not there.
    const gitdir = join(req.workDir, 'write-back', readdirSync(join(req.workDir, 'write-back'))[0]!);
    writeFileSync(join(gitdir, 'shallow'), 'not-a-sha\n');
    const out = await pushRollback({ ...req, badCommit: bad2 });
    expect(out.method).toBe('revert');
    expect(await show('damaged', 'main', 'deploy/app.yaml')).toBe('image: app:1');
  });

  it('GIVEN wrong credentials THEN AuthFailed without the password in the message', async () => {
    const { bad } = await repoWithBadCommit('auth');
    const err = await pushRollback(
      request('auth', bad, { auth: { type: 'basic', username: 'sluice', password: 'wrong-password' } }),
    ).catch((e: unknown) => e);
    expect((err as GitError).reason).toBe('AuthFailed');
    expect((err as GitError).message).not.toContain('wrong-password');
  });
});

/** A stand-in for the GitHub and GitLab pull request endpoints, recording each request. */
interface FakeHost {
  url: string;
  calls: Array<{ method: string; path: string; headers: IncomingMessage['headers']; body: unknown }>;
  /** Answers the next N creations 500, as a host having a bad moment. */
  failCreates(n: number): void;
  stop(): Promise<void>;
}

async function startFakeHost(): Promise<FakeHost> {
  const calls: FakeHost['calls'] = [];
  const open: Array<{ head: string; base: string; url: string; number: number }> = [];
  let failing = 0;
  const server: Server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const body = text ? (JSON.parse(text) as Record<string, string>) : undefined;
      calls.push({ method: req.method ?? '', path: url.pathname + url.search, headers: req.headers, body });
      const json = (status: number, v: unknown) => {
        res.writeHead(status, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(v));
      };
      const gh = /^\/repos\/([^/]+)\/([^/]+)\/pulls$/.exec(url.pathname);
      const gl = /^\/api\/v4\/projects\/([^/]+)\/merge_requests$/.exec(url.pathname);
      if (req.method === 'POST' && failing > 0) {
        failing--;
        return json(500, { message: 'Server Error' });
      }
      if (gh) {
        if (req.headers.authorization !== 'Bearer gh-token') return json(401, { message: 'Bad credentials' });
        if (req.method === 'GET') {
          const head = url.searchParams.get('head')?.split(':')[1];
          return json(
            200,
            open.filter((p) => p.head === head).map((p) => ({ html_url: p.url, number: p.number })),
          );
        }
        if (open.some((p) => p.head === body!.head))
          return json(422, {
            message: 'Validation Failed',
            errors: [{ message: 'A pull request already exists' }],
          });
        const pr = { head: body!.head!, base: body!.base!, number: open.length + 1, url: '' };
        pr.url = `https://github.example/${gh[1]}/${gh[2]}/pull/${pr.number}`;
        open.push(pr);
        return json(201, { html_url: pr.url, number: pr.number });
      }
      if (gl) {
        if (req.headers['private-token'] !== 'gl-token') return json(401, { message: '401 Unauthorized' });
        if (req.method === 'GET') {
          const head = url.searchParams.get('source_branch');
          return json(
            200,
            open.filter((p) => p.head === head).map((p) => ({ web_url: p.url, iid: p.number })),
          );
        }
        const pr = {
          head: body!.source_branch!,
          base: body!.target_branch!,
          number: open.length + 1,
          url: '',
        };
        pr.url = `https://gitlab.example/${decodeURIComponent(gl[1]!)}/-/merge_requests/${pr.number}`;
        open.push(pr);
        return json(201, { web_url: pr.url, iid: pr.number });
      }
      json(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    failCreates: (k) => (failing = k),
    stop: () => new Promise((r) => server.close(() => r())),
  };
}

describe('openRollbackPullRequest (local stand-in for the GitHub / GitLab API)', () => {
  let host: FakeHost;
  beforeAll(async () => (host = await startFakeHost()));
  afterAll(async () => host?.stop());

  const github = (): PullRequestTarget => ({
    provider: 'github',
    apiURL: host.url,
    repository: 'acme/shop',
    secretRef: { name: 'gh' },
  });

  it('GIVEN github WHEN a rollback PR is opened THEN the commit is on sluice/rollback-<name>-<sha7>, main is untouched, and POST /repos/acme/shop/pulls has title, head, base and body', async () => {
    const { bad } = await repoWithBadCommit('pr-gh');
    const mainBefore = await tip('pr-gh');
    const out = await openRollbackPullRequest({
      ...request('pr-gh', bad),
      target: github(),
      token: 'gh-token',
    });
    const branch = `sluice/rollback-web-${bad.slice(0, 7)}`;
    expect(out).toEqual({
      url: 'https://github.example/acme/shop/pull/1',
      branch,
      commit: expect.any(String),
    });
    expect(await tip('pr-gh')).toBe(mainBefore);
    expect(await runGit(['--git-dir', bare('pr-gh'), 'rev-parse', branch])).toBe(out.commit);
    expect(await runGit(['--git-dir', bare('pr-gh'), 'rev-parse', `${branch}~1`])).toBe(mainBefore);
    expect(await show('pr-gh', branch, 'deploy/app.yaml')).toBe('image: app:1');
    const post = host.calls.find((c) => c.method === 'POST')!;
    expect(post.path).toBe('/repos/acme/shop/pulls');
    expect(post.headers.authorization).toBe('Bearer gh-token');
    expect(post.headers.accept).toBe('application/vnd.github+json');
    expect(post.body).toEqual({
      title: 'Roll back shop/web at step 2/4: error-rate = 0.2 (threshold <= 0.01)',
      head: branch,
      base: 'main',
      body: expect.stringContaining(`Sluice-Reverts: ${bad}`),
    });
    expect(host.calls[0]!.path).toBe(
      `/repos/acme/shop/pulls?state=open&head=acme%3A${encodeURIComponent(branch)}&base=main`,
    );

    // Run again (a crash before the URL reached status): the same PR, nothing pushed, no POST.
    const posts = host.calls.filter((c) => c.method === 'POST').length;
    server.clearRequests();
    const again = await openRollbackPullRequest({
      ...request('pr-gh', bad),
      target: github(),
      token: 'gh-token',
    });
    expect(again).toEqual(out);
    expect(host.calls.filter((c) => c.method === 'POST')).toHaveLength(posts);
    expect(pushes('pr-gh')).toHaveLength(0);
  });

  it('GIVEN the branch was pushed but opening the PR failed (host 500, or a crash) WHEN run again THEN the pushed branch is reused and the PR opened, nothing pushed twice', async () => {
    const { bad } = await repoWithBadCommit('pr-retry');
    host.failCreates(1);
    const first = await openRollbackPullRequest({
      ...request('pr-retry', bad),
      target: github(),
      token: 'gh-token',
    }).catch((e: unknown) => e as Error);
    expect((first as Error).message).toContain('HTTP 500');
    const branch = `sluice/rollback-web-${bad.slice(0, 7)}`;
    const pushed = await runGit(['--git-dir', bare('pr-retry'), 'rev-parse', branch]);
    server.clearRequests();
    const again = await openRollbackPullRequest({
      ...request('pr-retry', bad),
      target: github(),
      token: 'gh-token',
    });
    expect(again).toEqual({ url: expect.stringMatching(/\/pull\/\d+$/), branch, commit: pushed });
    expect(pushes('pr-retry')).toHaveLength(0);
  });

  it('GIVEN the PR was merged and its branch deleted (status not yet written) WHEN run again THEN the merged commit, no URL, nothing pushed or opened', async () => {
    const { bad } = await repoWithBadCommit('pr-merged');
    const out = await openRollbackPullRequest({
      ...request('pr-merged', bad),
      target: github(),
      token: 'gh-token',
    });
    // Merge as a fast-forward, then delete the branch, as a host may on merge.
    await runGit(['--git-dir', bare('pr-merged'), 'update-ref', 'refs/heads/main', out.commit]);
    await runGit(['--git-dir', bare('pr-merged'), 'update-ref', '-d', `refs/heads/${out.branch}`]);
    const posts = host.calls.filter((c) => c.method === 'POST').length;
    server.clearRequests();
    const again = await openRollbackPullRequest({
      ...request('pr-merged', bad),
      target: github(),
      token: 'gh-token',
    });
    expect(again).toEqual({ url: '', branch: out.branch, commit: out.commit });
    expect(pushes('pr-merged')).toHaveLength(0);
    expect(host.calls.filter((c) => c.method === 'POST')).toHaveLength(posts);
  });

  it('GIVEN gitlab WHEN a rollback MR is opened THEN POST /projects/<url-encoded path>/merge_requests with PRIVATE-TOKEN, source and target branch', async () => {
    const { bad } = await repoWithBadCommit('pr-gl');
    const target: PullRequestTarget = {
      provider: 'gitlab',
      apiURL: `${host.url}/api/v4/`,
      repository: 'acme/platform/shop',
      secretRef: { name: 'gl' },
      baseBranch: 'main',
    };
    const out = await openRollbackPullRequest({ ...request('pr-gl', bad), target, token: 'gl-token' });
    expect(out.url).toMatch(/^https:\/\/gitlab\.example\/acme\/platform\/shop\/-\/merge_requests\/\d+$/);
    const post = host.calls.filter((c) => c.method === 'POST').at(-1)!;
    expect(post.path).toBe('/api/v4/projects/acme%2Fplatform%2Fshop/merge_requests');
    expect(post.headers['private-token']).toBe('gl-token');
    expect(post.body).toMatchObject({
      source_branch: `sluice/rollback-web-${bad.slice(0, 7)}`,
      target_branch: 'main',
      remove_source_branch: true,
      title: expect.stringContaining('error-rate = 0.2'),
    });
  });

  it('GIVEN a rejected token THEN an error naming the HTTP status, without the token', async () => {
    const { bad } = await repoWithBadCommit('pr-bad-token');
    const err = await openRollbackPullRequest({
      ...request('pr-bad-token', bad),
      target: github(),
      token: 'not-the-token',
    }).catch((e: unknown) => e as Error);
    expect((err as Error).message).toContain('HTTP 401');
    expect((err as Error).message).not.toContain('not-the-token');
  });
});
