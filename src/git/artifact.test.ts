import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArtifactStore } from './artifact.js';
import { computeDigest, type ArtifactFile } from './digest.js';
import { GitError } from './errors.js';

const file = (path: string, content: string, kind: ArtifactFile['kind'] = 'file'): ArtifactFile => ({
  path,
  kind,
  content: Buffer.from(content, 'utf8'),
});

describe('ArtifactStore', () => {
  let root: string;
  let store: ArtifactStore;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'sluice-artifacts-'));
    store = new ArtifactStore(root);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('GIVEN files WHEN put THEN they are stored under the digest with their modes and links', async () => {
    const files = [
      file('deploy/app.yaml', 'kind: Deployment\n'),
      file('bin/run', '#!/bin/sh\n', 'executable'),
      file('current', 'deploy', 'symlink'),
    ];
    const artifact = await store.put(files);
    expect(artifact.digest).toBe(computeDigest(files));
    expect(artifact.path).toBe(store.artifactPath(artifact.digest));
    expect(readFileSync(join(artifact.path, 'deploy/app.yaml'), 'utf8')).toBe('kind: Deployment\n');
    expect(statSync(join(artifact.path, 'bin/run')).mode & 0o111).not.toBe(0);
    expect(statSync(join(artifact.path, 'deploy/app.yaml')).mode & 0o111).toBe(0);
    expect(readlinkSync(join(artifact.path, 'current'))).toBe('deploy');
    await expect(store.has(artifact.digest)).resolves.toBe(true);
  });

  it('GIVEN the same content put twice, even at once THEN one artifact, shared', async () => {
    const files = [file('a.yaml', 'a: 1\n')];
    const [x, y] = await Promise.all([store.put(files), store.put([...files])]);
    const z = await store.put(files);
    expect(new Set([x.path, y.path, z.path]).size).toBe(1);
    expect(readdirSync(root)).toEqual([x.digest.slice('sha256:'.length)]);
  });

  it.each<[string, ArtifactFile]>([
    ['a parent path', file('../escape', 'x')],
    ['an absolute path', file('/etc/x', 'x')],
    ['a .git directory', file('sub/.GIT/config', 'x')],
    ['an empty segment', file('a//b', 'x')],
    ['a symlink with ..', file('link', '../../etc/passwd', 'symlink')],
    ['an absolute symlink', file('link', '/etc/passwd', 'symlink')],
  ])('GIVEN %s THEN ArtifactFailed and nothing is written', async (_what, bad) => {
    await expect(store.put([file('ok', 'x'), bad])).rejects.toThrow(
      expect.objectContaining({ name: 'GitError', reason: 'ArtifactFailed' }),
    );
    expect(readdirSync(root)).toEqual([]);
  });

  it('GIVEN a malformed digest THEN artifactPath refuses it and has() is false', async () => {
    expect(() => store.artifactPath('sha256:../../etc')).toThrow(GitError);
    await expect(store.has('nope')).resolves.toBe(false);
  });

  it('GIVEN four artifacts WHEN gc keeps 2 THEN the two most recently used stay, plus any in use', async () => {
    const digests: string[] = [];
    for (const [i, name] of ['a', 'b', 'c', 'd'].entries()) {
      const { digest, path } = await store.put([file(name, name)]);
      // Explicit times: the test must not depend on the clock's resolution.
      const t = new Date(Date.UTC(2024, 0, 1, 0, i));
      utimesSync(path, t, t);
      digests.push(digest);
    }
    const [a, b, c, d] = digests as [string, string, string, string];
    const removed = await store.gc({ keep: 2, inUse: [a] });
    expect(removed).toEqual([b]);
    for (const [digest, kept] of [
      [a, true],
      [b, false],
      [c, true],
      [d, true],
    ] as const) {
      await expect(store.has(digest)).resolves.toBe(kept);
    }
  });

  it('GIVEN a temp directory left by a crashed writer THEN gc removes it only once stale', async () => {
    const fresh = join(root, '.tmp-fresh');
    const stale = join(root, '.tmp-stale');
    mkdirSync(fresh);
    mkdirSync(stale);
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    utimesSync(stale, old, old);
    await store.gc({ keep: 10 });
    expect(readdirSync(root).sort()).toEqual(['.tmp-fresh']);
  });

  it('GIVEN a missing root THEN gc removes nothing', async () => {
    await expect(new ArtifactStore(join(root, 'missing')).gc({ keep: 0 })).resolves.toEqual([]);
  });
});
