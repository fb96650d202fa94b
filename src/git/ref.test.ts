import type { ServerRef } from 'isomorphic-git';
import { GitError } from './errors.js';
import {
  formatRevision,
  isValidRefName,
  parseRefSpec,
  parseRevision,
  pickRef,
  selectSemverTag,
  type GitRefSpec,
} from './ref.js';

const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const C = 'c'.repeat(40);
const T = 'd'.repeat(40);

describe('parseRefSpec', () => {
  it.each<[GitRefSpec | undefined, unknown]>([
    [undefined, { kind: 'head' }],
    [{}, { kind: 'head' }],
    [{ branch: 'main' }, { kind: 'branch', branch: 'main' }],
    [{ branch: 'release/1.x' }, { kind: 'branch', branch: 'release/1.x' }],
    [{ tag: 'v1.2.3' }, { kind: 'tag', tag: 'v1.2.3' }],
    [{ semver: '^1.2.0' }, { kind: 'semver', range: '^1.2.0' }],
    [{ commit: A.toUpperCase() }, { kind: 'commit', commit: A }],
    [
      { commit: A, branch: 'main' },
      { kind: 'commit', commit: A, branch: 'main' },
    ],
    [
      { branch: '', tag: 'v1' },
      { kind: 'tag', tag: 'v1' },
    ],
  ])('GIVEN %j THEN the strategy is explicit: %j', (spec, want) => {
    expect(parseRefSpec(spec)).toEqual(want);
  });

  it.each<[GitRefSpec, RegExp]>([
    [{ branch: 'main', tag: 'v1' }, /set only one of branch, tag/],
    [{ tag: 'v1', semver: '^1' }, /set only one of tag, semver/],
    [{ commit: A, tag: 'v1' }, /set only one of tag, commit/],
    [{ commit: 'abc123' }, /not a full 40-character SHA-1/],
    [{ semver: '^^1' }, /invalid version "\^1" in semver range "\^\^1"/],
    [{ branch: 'feature..x' }, /branch "feature..x" is not a valid Git ref name/],
    [{ tag: 'has space' }, /tag "has space" is not a valid Git ref name/],
  ])('GIVEN %j THEN a terminal RefNotFound error says %s', (spec, message) => {
    let err: unknown;
    try {
      parseRefSpec(spec);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(GitError);
    expect(err).toMatchObject({ reason: 'RefNotFound', terminal: true });
    expect((err as Error).message).toMatch(message);
  });
});

describe('isValidRefName', () => {
  it.each(['main', 'release/1.x', 'v1.2.3', 'feature-a_b', 'a.b'])('GIVEN %j THEN valid', (name) => {
    expect(isValidRefName(name)).toBe(true);
  });
  it.each([
    '',
    '-x',
    'a..b',
    'a b',
    'a~1',
    'a^',
    'a:b',
    'a?',
    'a*',
    'a[',
    'a\\b',
    '/a',
    'a/',
    'a.',
    'a.lock',
    '.a',
    'a//b',
    'a@{1}',
    '@',
  ])('GIVEN %j THEN invalid', (name) => {
    expect(isValidRefName(name)).toBe(false);
  });
});

describe('revision strings (Flux format)', () => {
  it('GIVEN a name THEN <name>@sha1:<sha>; without one THEN sha1:<sha>', () => {
    expect(formatRevision('main', A)).toBe(`main@sha1:${A}`);
    expect(formatRevision('v1.2.3', A)).toBe(`v1.2.3@sha1:${A}`);
    expect(formatRevision(undefined, A)).toBe(`sha1:${A}`);
  });

  it('GIVEN a formatted revision THEN parseRevision gives the name and sha back', () => {
    expect(parseRevision(`main@sha1:${A}`)).toEqual({ name: 'main', sha: A });
    expect(parseRevision(`release/v1@x@sha1:${A}`)).toEqual({ name: 'release/v1@x', sha: A });
    expect(parseRevision(`sha1:${A}`)).toEqual({ name: undefined, sha: A });
  });

  it.each(['', `main/${A}`, 'main@sha1:abc', `main@sha256:${A}`])(
    'GIVEN %j THEN it is not a revision',
    (rev) => {
      expect(parseRevision(rev)).toBeUndefined();
    },
  );
});

describe('pickRef', () => {
  const refs: ServerRef[] = [
    { ref: 'HEAD', oid: A, target: 'refs/heads/main' },
    { ref: 'refs/heads/main', oid: A },
    { ref: 'refs/heads/dev', oid: B },
    { ref: 'refs/tags/v1.0.0', oid: C },
    { ref: 'refs/tags/v1.2.0', oid: T, peeled: B },
    { ref: 'refs/tags/v2.0.0', oid: A },
    { ref: 'refs/tags/v1.3.0-rc.1', oid: A },
    { ref: 'refs/tags/nightly', oid: A },
  ];

  it('GIVEN the default ref THEN the HEAD symref names the branch in the revision', () => {
    expect(pickRef(refs, { kind: 'head' })).toMatchObject({
      remoteRef: 'refs/heads/main',
      sha: A,
      revision: `main@sha1:${A}`,
    });
  });

  it('GIVEN a branch THEN its tip', () => {
    expect(pickRef(refs, { kind: 'branch', branch: 'dev' })).toMatchObject({
      sha: B,
      revision: `dev@sha1:${B}`,
    });
  });

  it('GIVEN an annotated tag THEN the peeled commit, not the tag object', () => {
    expect(pickRef(refs, { kind: 'tag', tag: 'v1.2.0' })).toMatchObject({
      remoteRef: 'refs/tags/v1.2.0',
      sha: B,
      revision: `v1.2.0@sha1:${B}`,
    });
  });

  it('GIVEN a semver range THEN the highest release tag in range, peeled', () => {
    expect(selectSemverTag(refs, '^1.0.0')).toEqual({ tag: 'v1.2.0', remoteRef: 'refs/tags/v1.2.0', sha: B });
    expect(pickRef(refs, { kind: 'semver', range: '1.0.x' })).toMatchObject({ revision: `v1.0.0@sha1:${C}` });
  });

  it('GIVEN a commit THEN sha1:<sha>, or <branch>@sha1:<sha> with a branch', () => {
    expect(pickRef([], { kind: 'commit', commit: C })).toMatchObject({
      remoteRef: undefined,
      revision: `sha1:${C}`,
    });
    expect(pickRef(refs, { kind: 'commit', commit: C, branch: 'dev' })).toMatchObject({
      remoteRef: 'refs/heads/dev',
      revision: `dev@sha1:${C}`,
    });
  });

  it.each([
    [{ kind: 'branch', branch: 'gone' }, /branch "gone" not found/],
    [{ kind: 'tag', tag: 'v9' }, /tag "v9" not found/],
    [{ kind: 'semver', range: '>=3' }, /no tag matches semver range ">=3"/],
  ] as const)('GIVEN %j that the remote lacks THEN RefNotFound (%s)', (ref, message) => {
    expect(() => pickRef(refs, ref)).toThrow(message);
    expect(() => pickRef(refs, ref)).toThrow(
      expect.objectContaining({ reason: 'RefNotFound', terminal: false }),
    );
  });
});
