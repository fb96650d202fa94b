import { createHash } from 'node:crypto';
import { computeDigest, isDigest, type ArtifactFile } from './digest.js';

const file = (path: string, content: string, kind: ArtifactFile['kind'] = 'file'): ArtifactFile => ({
  path,
  kind,
  content: Buffer.from(content, 'utf8'),
});

describe('computeDigest', () => {
  const files = [
    file('deploy/app.yaml', 'kind: Deployment\n'),
    file('README.md', '# app\n'),
    file('run.sh', 'x', 'executable'),
  ];

  it('GIVEN a fixed file set THEN the digest is the sha256 of the documented v1 encoding', () => {
    // Pinned: changing the encoding moves every artifact, so it must be deliberate.
    const encoding = 'sluice-artifact-v1\n' + 'file 1:a\n2:xy\n' + 'executable 3:b/c\n0:\n';
    const want = `sha256:${createHash('sha256').update(encoding).digest('hex')}`;
    expect(computeDigest([file('b/c', '', 'executable'), file('a', 'xy')])).toBe(want);
    expect(isDigest(want)).toBe(true);
  });

  it('GIVEN the same files in any order THEN the same digest', () => {
    expect(computeDigest([...files].reverse())).toBe(computeDigest(files));
  });

  it.each<[string, ArtifactFile[]]>([
    ['a content change', [file('deploy/app.yaml', 'kind: Deployment \n'), files[1]!, files[2]!]],
    ['a rename', [file('deploy/app.yml', 'kind: Deployment\n'), files[1]!, files[2]!]],
    ['a mode change', [files[0]!, files[1]!, file('run.sh', 'x', 'file')]],
    ['a file removed', [files[0]!, files[1]!]],
    ['a file added', [...files, file('empty', '')]],
  ])('GIVEN %s THEN a different digest', (_what, changed) => {
    expect(computeDigest(changed)).not.toBe(computeDigest(files));
  });

  it('GIVEN bytes moved between path and content or between files THEN a different digest', () => {
    expect(computeDigest([file('ab', 'c')])).not.toBe(computeDigest([file('a', 'bc')]));
    expect(computeDigest([file('a', 'xy'), file('b', '')])).not.toBe(
      computeDigest([file('a', 'x'), file('b', 'y')]),
    );
  });

  it('GIVEN a duplicate path THEN it throws', () => {
    expect(() => computeDigest([file('a', '1'), file('a', '2')])).toThrow(/duplicate artifact path "a"/);
  });
});
