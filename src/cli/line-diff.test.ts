import { diffLines, unifiedDiff } from './line-diff.js';

const lines = (...xs: string[]) => `${xs.join('\n')}\n`;
const letters = (s: string) => lines(...s.split(''));

describe('diffLines', () => {
  it.each([
    ['equal', 'abc', 'abc', ' a b c'],
    ['one replaced', 'abc', 'aXc', ' a-b+X c'],
    ['added at the end', 'ab', 'abc', ' a b+c'],
    ['removed at the start', 'abc', 'bc', '-a b c'],
    ['both empty', '', '', ''],
    ['from empty', '', 'xy', '+x+y'],
    ['to empty', 'xy', '', '-x-y'],
    ['a longest common subsequence kept', 'abcbdab', 'bdcaba', '-a b-c-b d+c a b+a'],
  ])('GIVEN %s THEN the edit script keeps a longest common subsequence', (_name, b, a, script) => {
    const out = diffLines(b.split('').filter(Boolean), a.split('').filter(Boolean));
    expect(out.map((l) => `${l.op}${l.text}`).join('')).toBe(script);
  });

  it('GIVEN any two inputs THEN both sides are reproduced from the script, in order', () => {
    const b = 'the quick brown fox jumps over the lazy dog'.split(' ');
    const a = 'a quick red fox leaps over the dog again'.split(' ');
    const out = diffLines(b, a);
    expect(out.filter((l) => l.op !== '+').map((l) => l.text)).toEqual(b);
    expect(out.filter((l) => l.op !== '-').map((l) => l.text)).toEqual(a);
    // fox, over, the, dog are the longest common run; quick too.
    expect(out.filter((l) => l.op === ' ').map((l) => l.text)).toEqual([
      'quick',
      'fox',
      'over',
      'the',
      'dog',
    ]);
  });

  it('GIVEN a middle too large for the table THEN still a correct script (removals, then additions)', () => {
    const b = Array.from({ length: 3000 }, (_, i) => `old ${i}`);
    const a = Array.from({ length: 3000 }, (_, i) => `new ${i}`);
    const out = diffLines(['head', ...b, 'tail'], ['head', ...a, 'tail']);
    expect(out[0]).toEqual({ op: ' ', text: 'head' });
    expect(out[1]).toEqual({ op: '-', text: 'old 0' });
    expect(out[3001]).toEqual({ op: '+', text: 'new 0' });
    expect(out[out.length - 1]).toEqual({ op: ' ', text: 'tail' });
    expect(out).toHaveLength(6002);
  });
});

describe('unifiedDiff', () => {
  // Expected outputs are what GNU `diff -u` prints for the same files (headers aside).
  it('GIVEN equal texts THEN an empty string', () => {
    expect(unifiedDiff(letters('abc'), letters('abc'))).toBe('');
  });

  it('GIVEN changes far apart THEN two hunks with 3 lines of context', () => {
    expect(unifiedDiff(letters('abcdefghijklm'), letters('aBcdefghijklmn'))).toBe(
      lines(
        '@@ -1,5 +1,5 @@',
        ' a',
        '-b',
        '+B',
        ' c',
        ' d',
        ' e',
        '@@ -11,3 +11,4 @@',
        ' k',
        ' l',
        ' m',
        '+n',
      ),
    );
  });

  it('GIVEN changes 5 lines apart THEN one hunk (contexts would touch)', () => {
    expect(unifiedDiff(letters('abcdefghX'), letters('abcZdefgh'))).toBe(
      lines('@@ -1,9 +1,9 @@', ' a', ' b', ' c', '+Z', ' d', ' e', ' f', ' g', ' h', '-X'),
    );
  });

  it('GIVEN one side empty THEN -0,0 / +0,0 like diff -u', () => {
    expect(unifiedDiff('', lines('x', 'y'))).toBe(lines('@@ -0,0 +1,2 @@', '+x', '+y'));
    expect(unifiedDiff(lines('x', 'y'), '')).toBe(lines('@@ -1,2 +0,0 @@', '-x', '-y'));
  });

  it('GIVEN labels and context 0 THEN a --- / +++ header and only the changed lines', () => {
    expect(
      unifiedDiff(letters('abc'), letters('aXc'), { context: 0, labels: { before: 'live', after: 'git' } }),
    ).toBe(lines('--- live', '+++ git', '@@ -2,1 +2,1 @@', '-b', '+X'));
  });

  it('GIVEN a text without a trailing newline THEN compared as if it had one', () => {
    expect(unifiedDiff('a\nb', 'a\nb\n')).toBe('');
  });
});
