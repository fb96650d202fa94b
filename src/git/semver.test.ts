import {
  compareVersions,
  maxSatisfying,
  parseRange,
  parseVersion,
  satisfies,
  SemverRangeError,
} from './semver.js';

const matches = (version: string, range: string) => satisfies(parseVersion(version)!, parseRange(range));

describe('parseVersion', () => {
  it.each([
    ['1.2.3', { major: 1, minor: 2, patch: 3, prerelease: [] }],
    ['v1.2.3', { major: 1, minor: 2, patch: 3, prerelease: [] }],
    ['1.2.3-rc.1', { major: 1, minor: 2, patch: 3, prerelease: ['rc', 1] }],
    ['1.2.3-rc.1+build.7', { major: 1, minor: 2, patch: 3, prerelease: ['rc', 1] }],
    ['0.0.0', { major: 0, minor: 0, patch: 0, prerelease: [] }],
  ])('GIVEN %s THEN it parses', (text, want) => {
    expect(parseVersion(text)).toEqual(want);
  });

  it.each(['1.2', '1', 'v1.2', '01.2.3', '1.2.3-', '1.2.3-01', 'release-1.2.3', 'latest', '', '1.2.3.4'])(
    'GIVEN %j THEN it is not a version',
    (text) => {
      expect(parseVersion(text)).toBeUndefined();
    },
  );
});

describe('compareVersions', () => {
  // SemVer 2.0.0 §11's own example, in ascending order.
  const ordered = [
    '1.0.0-alpha',
    '1.0.0-alpha.1',
    '1.0.0-alpha.beta',
    '1.0.0-beta',
    '1.0.0-beta.2',
    '1.0.0-beta.11',
    '1.0.0-rc.1',
    '1.0.0',
    '1.0.1',
    '1.1.0',
    '2.0.0',
  ];
  it('GIVEN the spec example THEN precedence is strictly ascending', () => {
    for (let i = 1; i < ordered.length; i++) {
      expect(compareVersions(parseVersion(ordered[i - 1]!)!, parseVersion(ordered[i]!)!)).toBe(-1);
      expect(compareVersions(parseVersion(ordered[i]!)!, parseVersion(ordered[i - 1]!)!)).toBe(1);
    }
  });
  it('GIVEN versions differing only in build metadata THEN they are equal', () => {
    expect(compareVersions(parseVersion('1.0.0+a')!, parseVersion('1.0.0+b')!)).toBe(0);
  });
});

describe('satisfies', () => {
  it.each([
    // X-ranges
    ['1.2.x', '1.2.0', true],
    ['1.2.x', '1.2.9', true],
    ['1.2.x', '1.3.0', false],
    ['1.x', '1.9.9', true],
    ['1', '2.0.0', false],
    ['*', '0.0.1', true],
    ['', 'n/a', 'throws'],
    // caret
    ['^1.2.0', '1.2.0', true],
    ['^1.2.0', '1.9.3', true],
    ['^1.2.0', '2.0.0', false],
    ['^1.2.0', '1.1.9', false],
    ['^0.2.3', '0.2.9', true],
    ['^0.2.3', '0.3.0', false],
    ['^0.0.3', '0.0.4', false],
    ['^0.x', '0.9.0', true],
    // tilde
    ['~1.2', '1.2.7', true],
    ['~1.2', '1.3.0', false],
    ['~1.2.3', '1.2.2', false],
    ['~1', '1.9.0', true],
    // comparators, space- and comma-separated
    ['>=1.0.0 <2.0.0', '1.0.0', true],
    ['>=1.0.0 <2.0.0', '1.99.0', true],
    ['>=1.0.0 <2.0.0', '2.0.0', false],
    ['>= 1.0.0, < 2.0.0', '1.5.0', true],
    ['>1.2', '1.2.9', false],
    ['>1.2', '1.3.0', true],
    ['<=1.2', '1.2.9', true],
    ['<1.2', '1.1.9', true],
    ['=1.2.3', '1.2.3', true],
    ['v1.2.3', '1.2.3', true],
    // hyphen and unions
    ['1.2.3 - 2.3', '2.3.9', true],
    ['1.2.3 - 2.3', '2.4.0', false],
    ['^1 || ^3', '2.0.0', false],
    ['^1 || ^3', '3.1.0', true],
    // prereleases only when the range names one on the same MAJOR.MINOR.PATCH
    ['^1.2.0', '1.3.0-rc.1', false],
    ['^1.2.0', '2.0.0-rc.1', false],
    ['>=1.3.0-rc.0 <1.4.0', '1.3.0-rc.1', true],
    ['>=1.3.0-rc.0 <1.4.0', '1.3.1-rc.1', false],
    ['*', '1.0.0-rc.1', false],
  ])('GIVEN range %j WHEN testing %s THEN %s', (range, version, want) => {
    if (want === 'throws') {
      expect(() => parseRange(range)).toThrow(SemverRangeError);
      return;
    }
    expect(matches(version, range)).toBe(want);
  });

  it.each(['^^1', '>=1.0.0 <', '1.2.3.4', 'latest', '>=a', '1.2 ||', '=>1'])(
    'GIVEN invalid range %j THEN parseRange throws naming it',
    (range) => {
      expect(() => parseRange(range)).toThrow(SemverRangeError);
    },
  );
});

describe('maxSatisfying', () => {
  const tags = ['v1.0.0', 'v1.2.0', 'v1.10.0', 'v2.0.0', 'v1.11.0-rc.1', 'latest', 'v1.3', 'release'];
  it('GIVEN mixed tags THEN it picks the highest version in range, ignoring non-versions', () => {
    expect(maxSatisfying(tags, '^1.0.0')).toBe('v1.10.0');
    expect(maxSatisfying(tags, '~1.2')).toBe('v1.2.0');
    expect(maxSatisfying(tags, '>=3')).toBeUndefined();
  });
  it('GIVEN equal versions spelled differently THEN the answer does not depend on input order', () => {
    expect(maxSatisfying(['1.2.3', 'v1.2.3'], '1.x')).toBe('v1.2.3');
    expect(maxSatisfying(['v1.2.3', '1.2.3'], '1.x')).toBe('v1.2.3');
  });
});
