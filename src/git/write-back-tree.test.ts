import { describe, expect, it } from '@jest/globals';
import {
  nestTree,
  normalizeRepoPath,
  restoreTree,
  revertTree,
  type FlatTree,
  type TreeEntry,
} from './write-back-tree.js';

const blob = (oid: string, mode = '100644'): TreeEntry => ({ mode, oid });
const tree = (entries: Record<string, string | TreeEntry>): FlatTree =>
  new Map(Object.entries(entries).map(([p, e]) => [p, typeof e === 'string' ? blob(e) : e]));
const plain = (t: FlatTree) =>
  Object.fromEntries([...t].map(([p, e]) => [p, e.mode === '100644' ? e.oid : e]));

describe('revertTree (P = parent of the bad commit C, H = tip)', () => {
  it.each([
    ['C modified a file H still has as C', { a: 'p' }, { a: 'c' }, { a: 'c' }, { a: 'p' }],
    ['C added a file', {}, { new: 'c' }, { new: 'c', other: 'x' }, { other: 'x' }],
    ['C deleted a file', { gone: 'p' }, {}, {}, { gone: 'p' }],
    ['H already undid it', { a: 'p' }, { a: 'c' }, { a: 'p' }, { a: 'p' }],
    [
      'paths C did not touch keep H',
      { a: 'p', b: '1' },
      { a: 'c', b: '1' },
      { a: 'c', b: '2' },
      { a: 'p', b: '2' },
    ],
  ])('GIVEN %s THEN a clean revert', (_name, p, c, h, want) => {
    const out = revertTree(tree(p), tree(c), tree(h));
    expect(out.clean).toBe(true);
    if (out.clean) expect(plain(out.tree)).toEqual(want);
  });

  it('GIVEN C changed only the mode THEN the mode is reverted', () => {
    const out = revertTree(
      tree({ s: blob('x') }),
      tree({ s: blob('x', '100755') }),
      tree({ s: blob('x', '100755') }),
    );
    expect(out.clean && plain(out.tree)).toEqual({ s: 'x' });
  });

  it.each([
    ['H changed the file again', { a: 'p' }, { a: 'c' }, { a: 'h' }, ['a']],
    ['H deleted the file C modified', { a: 'p' }, { a: 'c' }, {}, ['a']],
    ['H re-added a file C deleted, differently', { a: 'p' }, {}, { a: 'h' }, ['a']],
    ['H changed a file C added', {}, { n: 'c' }, { n: 'h' }, ['n']],
  ])('GIVEN %s THEN a conflict naming the paths', (_name, p, c, h, conflicts) => {
    expect(revertTree(tree(p), tree(c), tree(h))).toEqual({ clean: false, conflicts });
  });

  it('GIVEN reviving a file where H now has a directory of that name THEN a conflict', () => {
    expect(revertTree(tree({ x: 'p' }), tree({}), tree({ 'x/y': 'h' }))).toEqual({
      clean: false,
      conflicts: ['x'],
    });
  });
});

describe('restoreTree', () => {
  const good = tree({ 'deploy/app.yaml': 'g1', 'deploy/old.yaml': 'g2', 'README.md': 'r1' });
  const head = tree({ 'deploy/app.yaml': 'h1', 'deploy/new.yaml': 'h2', 'README.md': 'r2' });

  it('GIVEN paths THEN exactly those take the good entries (absent in good → removed)', () => {
    const out = restoreTree(good, head, { paths: ['./deploy/app.yaml', 'deploy/new.yaml'], dir: 'deploy' });
    expect(plain(out.tree)).toEqual({ 'deploy/app.yaml': 'g1', 'README.md': 'r2' });
    expect(out.changed).toEqual(['deploy/app.yaml', 'deploy/new.yaml']);
  });

  it('GIVEN no paths THEN everything under dir is restored, nothing outside', () => {
    const out = restoreTree(good, head, { paths: [], dir: './deploy/' });
    expect(plain(out.tree)).toEqual({ 'deploy/app.yaml': 'g1', 'deploy/old.yaml': 'g2', 'README.md': 'r2' });
  });

  it('GIVEN dir "." THEN the whole repository is restored', () => {
    expect(plain(restoreTree(good, head, { paths: [], dir: '.' }).tree)).toEqual(plain(good));
  });

  it('GIVEN a dir that is a prefix of another directory name THEN the other is untouched', () => {
    const out = restoreTree(tree({}), tree({ 'deploy-x/a': '1', 'deploy/a': '2' }), {
      paths: [],
      dir: 'deploy',
    });
    expect(plain(out.tree)).toEqual({ 'deploy-x/a': '1' });
  });
});

describe('normalizeRepoPath', () => {
  it.each([
    ['./deploy/', 'deploy'],
    ['/a//b', 'a/b'],
    ['.', ''],
  ])('GIVEN %s THEN %s', (input, want) => expect(normalizeRepoPath(input)).toBe(want));
  it('GIVEN ".." THEN an error naming the path', () =>
    expect(() => normalizeRepoPath('../x')).toThrow('"../x"'));
});

describe('nestTree', () => {
  it('GIVEN flat paths THEN nested directories with their files', () => {
    const nested = nestTree(tree({ 'a/b/c': '1', 'a/d': '2', e: '3' }));
    expect([...nested.files.keys()]).toEqual(['e']);
    const a = nested.dirs.get('a')!;
    expect([...a.files.keys()]).toEqual(['d']);
    expect([...a.dirs.get('b')!.files.keys()]).toEqual(['c']);
  });
});
