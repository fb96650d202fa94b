import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureOutput } from '../../../test/support/capture-output.js';
import { runCli } from '../run.js';

describe('sluice fix: flags and exit codes', () => {
  let out: ReturnType<typeof captureOutput>;
  let dir: string;
  beforeEach(async () => {
    out = captureOutput();
    dir = await mkdtemp(join(tmpdir(), 'sluice-fix-cli-'));
  });
  afterEach(async () => {
    out.restore();
    await rm(dir, { recursive: true, force: true });
  });

  it.each([
    [['fix'], 'missing argument'],
    [['fix', '.'], '--target-version is required'],
    [['fix', '.', '--target-version', 'latest'], 'invalid Kubernetes version "latest"'],
    [['fix', '.', '--target-version', '1.29', '--bundle-out', 'x'], '--bundle-out needs --write'],
  ])('GIVEN %j THEN exit 2 saying %s', async (argv, message) => {
    expect(await runCli(argv)).toBe(2);
    expect(out.err()).toContain(message);
    expect(out.err()).toContain('Usage: sluice fix PATH');
  });

  it('GIVEN nothing to fix THEN exit 0', async () => {
    await writeFile(join(dir, 'a.yaml'), 'apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: a}\n');
    expect(await runCli(['fix', dir, '--target-version', '1.29'])).toBe(0);
    expect(out.out()).toContain('0 fixed, 0 flagged, 1 file(s) read, target 1.29');
  });

  it('GIVEN a path that does not exist THEN exit 2 naming it', async () => {
    expect(await runCli(['fix', join(dir, 'missing'), '--target-version', '1.29'])).toBe(2);
    expect(out.err()).toContain('missing: no such file or directory');
  });
});
