// The test Git server itself: auth, push (chunked), gzip'd fetch negotiation, pause/resume,
// and the repository helpers — driven with the system git CLI, the reference client.
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  commitFiles,
  createBranch,
  createRepo,
  createTag,
  deleteBranch,
  revParse,
  runGit,
  startGitServer,
  type GitServer,
} from '../support/git-server.js';

let server: GitServer;
let tmp: string;

beforeAll(async () => {
  server = await startGitServer();
  tmp = mkdtempSync(join(tmpdir(), 'sluice-git-server-test-'));
});
afterAll(async () => {
  await server?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
const infoRefs = (repo: string, authorization?: string) =>
  fetch(`${server.url(repo)}/info/refs?service=git-upload-pack`, {
    headers: authorization ? { Authorization: authorization } : {},
  });

describe('git-server auth', () => {
  beforeAll(() => createRepo(server, 'auth', { 'a.txt': 'a\n' }));

  it('GIVEN no or wrong credentials THEN 401 with a Basic challenge; GIVEN the right ones THEN the ref advertisement', async () => {
    const { username, password } = server.credentials();
    for (const authorization of [
      undefined,
      basic(username, 'wrong'),
      basic('other', password),
      'Bearer xyz',
    ]) {
      const res = await infoRefs('auth', authorization);
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic realm=/);
      await res.text();
    }
    const ok = await infoRefs('auth', basic(username, password));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement');
    expect(await ok.text()).toContain('refs/heads/main');
  });

  it('GIVEN setCredentials THEN the old credentials stop working and the new ones work', async () => {
    const old = server.credentials();
    try {
      server.setCredentials('rotated', 'new-password');
      expect((await infoRefs('auth', basic(old.username, old.password))).status).toBe(401);
      expect((await infoRefs('auth', basic('rotated', 'new-password'))).status).toBe(200);
    } finally {
      server.setCredentials(old.username, old.password);
    }
  });

  it('GIVEN a repository that does not exist THEN 404 after authentication', async () => {
    const { username, password } = server.credentials();
    const res = await infoRefs('missing', basic(username, password));
    expect(res.status).toBe(404);
  });
});

describe('git-server with the git CLI', () => {
  it('GIVEN a clone over HTTP WHEN pushing a pack larger than http.postBuffer THEN the chunked push lands', async () => {
    await createRepo(server, 'push', { 'README.md': '# push\n' });
    const dir = join(tmp, 'push');
    await runGit(['clone', '--quiet', server.url('push', { withCredentials: true }), dir]);
    writeFileSync(join(dir, 'blob.bin'), randomBytes(300 * 1024));
    await runGit(['add', '-A'], { cwd: dir });
    await runGit(['commit', '--quiet', '-m', 'big'], { cwd: dir });
    server.clearRequests();
    // git streams a request body larger than http.postBuffer with chunked encoding.
    await runGit(['-c', 'http.postBuffer=65536', 'push', '--quiet', 'origin', 'HEAD:main'], { cwd: dir });

    const pushes = server.requests().filter((r) => r.method === 'POST' && r.service === 'git-receive-pack');
    expect(pushes.some((r) => r.chunked && r.status === 200)).toBe(true);
    expect(await revParse(server, 'push', 'main')).toBe(await runGit(['rev-parse', 'HEAD'], { cwd: dir }));
  });

  it('GIVEN many refs to want WHEN cloning THEN the gzip-encoded negotiation is served', async () => {
    await createRepo(server, 'many', { 'a.txt': 'a\n' });
    const work = join(tmp, 'many-work');
    await runGit(['clone', '--quiet', server.repoPath('many'), work]);
    // 40 branches on 40 distinct commits: the want list is well over git's 1 KiB gzip threshold.
    for (let i = 0; i < 40; i++) {
      await runGit(['commit', '--quiet', '--allow-empty', '-m', `c${i}`], { cwd: work });
      await runGit(['branch', `b${i}`], { cwd: work });
    }
    await runGit(['push', '--quiet', 'origin', '--all'], { cwd: work });
    server.clearRequests();

    const dir = join(tmp, 'many-clone');
    await runGit(['clone', '--quiet', '--mirror', server.url('many', { withCredentials: true }), dir]);

    const negotiations = server
      .requests()
      .filter((r) => r.method === 'POST' && r.service === 'git-upload-pack');
    expect(negotiations.some((r) => r.contentEncoding === 'gzip' && r.status === 200)).toBe(true);
    expect((await runGit(['--git-dir', dir, 'branch', '--list'])).split('\n')).toHaveLength(41);
  });

  it('GIVEN pause() THEN connections are refused; GIVEN resume() THEN the same URL works again', async () => {
    await createRepo(server, 'pause', { 'a.txt': 'a\n' });
    const url = server.url('pause', { withCredentials: true });
    await server.pause();
    try {
      await expect(runGit(['ls-remote', url])).rejects.toThrow(
        /Failed to connect|Connection refused|Could not connect/i,
      );
    } finally {
      await server.resume();
    }
    await expect(runGit(['ls-remote', url])).resolves.toContain('refs/heads/main');
  });
});

describe('repository helpers', () => {
  it('GIVEN createRepo, commitFiles, createBranch, createTag and deleteBranch THEN the bare repo shows each change', async () => {
    const { url, sha: first } = await createRepo(server, 'org/helpers', {
      'deploy/a.yaml': 'a\n',
      'deploy/b.yaml': 'b\n',
    });
    expect(url).toBe(`http://127.0.0.1:${server.port}/org/helpers.git`);
    expect(await revParse(server, 'org/helpers', 'main')).toBe(first);

    const second = await commitFiles(server, 'org/helpers', {
      add: { 'deploy/a.yaml': 'a2\n', 'bin/data': new Uint8Array([0, 1, 2]) },
      remove: ['deploy/b.yaml'],
      message: 'change',
    });
    expect(await revParse(server, 'org/helpers', 'main~1')).toBe(first);
    const tree = await runGit([
      '--git-dir',
      server.repoPath('org/helpers'),
      'ls-tree',
      '-r',
      '--name-only',
      second,
    ]);
    expect(tree.split('\n')).toEqual(['bin/data', 'deploy/a.yaml']);

    const onFeature = await commitFiles(server, 'org/helpers', { message: 'feature', branch: 'feature' });
    expect(await revParse(server, 'org/helpers', 'feature~1')).toBe(second);
    expect(onFeature).not.toBe(second);

    expect(await createBranch(server, 'org/helpers', 'old', first)).toBe(first);
    expect(await createTag(server, 'org/helpers', 'v1.0.0', { ref: first, message: 'release' })).toBe(first);
    expect(await createTag(server, 'org/helpers', 'light')).toBe(second);
    const tagType = await runGit(['--git-dir', server.repoPath('org/helpers'), 'cat-file', '-t', 'v1.0.0']);
    expect(tagType).toBe('tag');

    await deleteBranch(server, 'org/helpers', 'old');
    await expect(revParse(server, 'org/helpers', 'old')).rejects.toThrow();
    await expect(deleteBranch(server, 'org/helpers', 'old')).rejects.toThrow(/has no branch old/);
  });

  it('GIVEN concurrent commits to one repo THEN all land, one after another', async () => {
    await createRepo(server, 'concurrent', { 'n.txt': '0\n' });
    const shas = await Promise.all(
      [1, 2, 3].map((i) =>
        commitFiles(server, 'concurrent', { add: { [`f${i}`]: `${i}\n` }, message: `c${i}` }),
      ),
    );
    expect(new Set(shas).size).toBe(3);
    const log = await runGit(['--git-dir', server.repoPath('concurrent'), 'rev-list', 'main']);
    expect(log.split('\n')).toHaveLength(4);
  });

  it('GIVEN a hostile global git config THEN the helpers ignore it', async () => {
    const home = join(tmp, 'home');
    mkdirSync(home, { recursive: true });
    writeFileSync(
      join(home, '.gitconfig'),
      '[user]\n\tname = Wrong Name\n[init]\n\tdefaultBranch = trunk\n[commit]\n\tgpgsign = true\n',
    );
    const saved = process.env.HOME;
    process.env.HOME = home;
    try {
      const { sha } = await createRepo(server, 'isolated', { 'a.txt': 'a\n' });
      const author = await runGit([
        '--git-dir',
        server.repoPath('isolated'),
        'log',
        '-1',
        '--format=%an',
        sha,
      ]);
      expect(author).toBe('Sluice Test');
      expect(await revParse(server, 'isolated', 'main')).toBe(sha);
    } finally {
      process.env.HOME = saved;
    }
  });
});
