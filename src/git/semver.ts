// A small semantic-version range matcher for GitSource `ref.semver`, so tag selection needs
// no extra dependency. It follows node-semver's grammar and prerelease rule (the one most
// users know): X-ranges, `~`, `^`, hyphen ranges, comparator sets joined by spaces (or commas,
// as Flux's Masterminds/semver allows) and `||`.

/** A parsed `MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]` version. Build metadata never affects order. */
export interface SemVer {
  readonly major: number;
  readonly minor: number;
  readonly patch: number;
  readonly prerelease: ReadonlyArray<string | number>;
}

type Op = '<' | '<=' | '>' | '>=' | '=';
interface Comparator {
  readonly op: Op;
  readonly version: SemVer;
}
/** A parsed range: an OR of AND-sets of comparators (an empty AND-set matches every release). */
export type SemverRange = ReadonlyArray<ReadonlyArray<Comparator>>;

/** A range that does not parse; `message` says which part and why. */
export class SemverRangeError extends Error {
  override readonly name = 'SemverRangeError';
}

const NUM = '0|[1-9]\\d*';
const IDENT = `(?:${NUM}|\\d*[a-zA-Z-][a-zA-Z0-9-]*)`;
const FULL = new RegExp(
  `^v?(${NUM})\\.(${NUM})\\.(${NUM})(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?$`,
);
const XR = `(?:${NUM}|[xX*])`;
const PARTIAL = new RegExp(
  `^v?(${XR})(?:\\.(${XR})(?:\\.(${XR})(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+[0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*)?)?)?$`,
);

function prereleaseOf(text: string | undefined): Array<string | number> {
  if (!text) return [];
  return text.split('.').map((id) => (/^\d+$/.test(id) ? Number(id) : id));
}

/**
 * Parses a full version, with an optional leading `v` (`v1.2.3`, `1.2.3-rc.1+build.5`).
 * Returns undefined for anything else, including partial versions like `1.2`.
 */
export function parseVersion(text: string): SemVer | undefined {
  const m = FULL.exec(text.trim());
  if (!m) return undefined;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (![major, minor, patch].every(Number.isSafeInteger)) return undefined;
  return { major, minor, patch, prerelease: prereleaseOf(m[4]) };
}

function compareIds(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  // Numeric identifiers sort before alphanumeric ones (SemVer 2.0.0 §11).
  if (typeof a === 'number') return -1;
  if (typeof b === 'number') return 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

/** SemVer 2.0.0 precedence: negative, zero or positive as `a` is lower, equal or higher. */
export function compareVersions(a: SemVer, b: SemVer): number {
  const core = a.major - b.major || a.minor - b.minor || a.patch - b.patch;
  if (core !== 0) return Math.sign(core);
  const pa = a.prerelease;
  const pb = b.prerelease;
  if (pa.length === 0 || pb.length === 0) return pb.length - pa.length === 0 ? 0 : pa.length === 0 ? 1 : -1;
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i];
    const y = pb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    const c = compareIds(x, y);
    if (c !== 0) return Math.sign(c);
  }
  return 0;
}

const v = (major: number, minor: number, patch: number, prerelease: Array<string | number> = []): SemVer => ({
  major,
  minor,
  patch,
  prerelease,
});
// `<X-0` excludes X's prereleases too: `^1.2.3` must not match `2.0.0-rc.1`. (It cannot
// let one of X's prereleases through the prerelease rule in `satisfies` either: every
// prerelease of X is >= X-0.)
const below = (major: number, minor: number, patch: number): Comparator => ({
  op: '<',
  version: v(major, minor, patch, [0]),
});
const atLeast = (version: SemVer): Comparator => ({ op: '>=', version });
const NOTHING: Comparator[] = [{ op: '<', version: v(0, 0, 0, [0]) }];

interface Partial {
  major?: number;
  minor?: number;
  patch?: number;
  prerelease: Array<string | number>;
}

function parsePartial(text: string, whole: string): Partial {
  const m = PARTIAL.exec(text);
  if (!m) throw new SemverRangeError(`invalid version "${text}" in semver range "${whole}"`);
  const num = (s: string | undefined) => (s === undefined || /^[xX*]$/.test(s) ? undefined : Number(s));
  const major = num(m[1]);
  const minor = major === undefined ? undefined : num(m[2]);
  const patch = minor === undefined ? undefined : num(m[3]);
  return { major, minor, patch, prerelease: patch === undefined ? [] : prereleaseOf(m[4]) };
}

function full(p: Partial): SemVer {
  return v(p.major ?? 0, p.minor ?? 0, p.patch ?? 0, p.prerelease);
}

function desugar(op: string, p: Partial): Comparator[] {
  const { major, minor, patch } = p;
  switch (op) {
    case '':
    case '=':
      if (major === undefined) return [];
      if (minor === undefined) return [atLeast(full(p)), below(major + 1, 0, 0)];
      if (patch === undefined) return [atLeast(full(p)), below(major, minor + 1, 0)];
      return [{ op: '=', version: full(p) }];
    case '~':
    case '~>':
      if (major === undefined) return [];
      if (minor === undefined) return [atLeast(full(p)), below(major + 1, 0, 0)];
      return [atLeast(full(p)), below(major, minor + 1, 0)];
    case '^':
      if (major === undefined) return [];
      if (major > 0 || minor === undefined) return [atLeast(full(p)), below(major + 1, 0, 0)];
      if (minor > 0 || patch === undefined) return [atLeast(full(p)), below(0, minor + 1, 0)];
      return [atLeast(full(p)), below(0, 0, patch + 1)];
    case '>':
      if (major === undefined) return NOTHING;
      if (minor === undefined) return [atLeast(v(major + 1, 0, 0))];
      if (patch === undefined) return [atLeast(v(major, minor + 1, 0))];
      return [{ op: '>', version: full(p) }];
    case '>=':
      return major === undefined ? [] : [atLeast(full(p))];
    case '<':
      if (major === undefined) return NOTHING;
      if (patch === undefined) return [below(major, minor ?? 0, 0)];
      return [{ op: '<', version: full(p) }];
    case '<=':
      if (major === undefined) return [];
      if (minor === undefined) return [below(major + 1, 0, 0)];
      if (patch === undefined) return [below(major, minor + 1, 0)];
      return [{ op: '<=', version: full(p) }];
    default:
      throw new SemverRangeError(`unknown operator "${op}"`);
  }
}

function parseHyphen(lo: string, hi: string, whole: string): Comparator[] {
  const a = parsePartial(lo, whole);
  const b = parsePartial(hi, whole);
  const lower = a.major === undefined ? [] : [atLeast(full(a))];
  return [...lower, ...desugar('<=', b)];
}

/**
 * Parses a range such as `1.2.x`, `^1.2.0`, `~1.2`, `>=1.0.0 <2.0.0`, `1.0.0 - 1.4`,
 * `>=1.0, <2.0` or `^1 || ^2`. Throws `SemverRangeError` naming the offending part.
 */
export function parseRange(range: string): SemverRange {
  if (range.trim() === '') throw new SemverRangeError('empty semver range');
  return range.split('||').map((part) => {
    const text = part.trim();
    if (text === '') throw new SemverRangeError(`empty alternative in semver range "${range}"`);
    const hyphen = /^(\S+)\s+-\s+(\S+)$/.exec(text);
    if (hyphen) return parseHyphen(hyphen[1]!, hyphen[2]!, range);
    // `>= 1.0.0` is written with a space often enough to accept it.
    const tokens = text
      .replace(/,/g, ' ')
      .replace(/(<=|>=|~>|[<>=~^])\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    return tokens.flatMap((token) => {
      const m = /^(<=|>=|~>|[<>=~^]?)(.*)$/.exec(token)!;
      return desugar(m[1]!, parsePartial(m[2]!, range));
    });
  });
}

function test(c: Comparator, version: SemVer): boolean {
  const d = compareVersions(version, c.version);
  switch (c.op) {
    case '<':
      return d < 0;
    case '<=':
      return d <= 0;
    case '>':
      return d > 0;
    case '>=':
      return d >= 0;
    case '=':
      return d === 0;
  }
}

function sameCore(a: SemVer, b: SemVer): boolean {
  return a.major === b.major && a.minor === b.minor && a.patch === b.patch;
}

/**
 * True when `version` is in `range`. A prerelease (`1.3.0-rc.1`) matches only a set that
 * names a prerelease of the same `MAJOR.MINOR.PATCH` (node-semver's rule), so `^1.2.0`
 * never picks a release candidate by accident.
 */
export function satisfies(version: SemVer, range: SemverRange): boolean {
  return range.some(
    (set) =>
      set.every((c) => test(c, version)) &&
      (version.prerelease.length === 0 ||
        set.some((c) => c.version.prerelease.length > 0 && sameCore(c.version, version))),
  );
}

/**
 * The highest of `candidates` (full versions, optionally `v`-prefixed; others are skipped)
 * within `range`, or undefined. Ties in precedence (`v1.2.3` and `1.2.3`, or differing
 * build metadata) go to the greater string, so the answer never depends on input order.
 */
export function maxSatisfying(candidates: Iterable<string>, range: SemverRange | string): string | undefined {
  const r = typeof range === 'string' ? parseRange(range) : range;
  let best: { text: string; version: SemVer } | undefined;
  for (const text of candidates) {
    const version = parseVersion(text);
    if (!version || !satisfies(version, r)) continue;
    const c = best ? compareVersions(version, best.version) : 1;
    if (c > 0 || (c === 0 && best && text > best.text)) best = { text, version };
  }
  return best?.text;
}
