import { jest } from '@jest/globals';
import { runCli } from '../run.js';

describe('sluice diff: flags', () => {
  const err: string[] = [];
  let restore: () => void;
  beforeEach(() => {
    err.length = 0;
    const o = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    const e = jest.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    restore = () => (o.mockRestore(), e.mockRestore());
  });
  afterEach(() => restore());

  it.each([
    [['diff'], 'missing argument'],
    [['diff', 'source', 'x'], 'unknown resource type "source": use one of delivery'],
    [['diff', 'delivery', 'x', '--cluster'], "Option '--cluster <value>' argument missing"],
  ])('GIVEN %j THEN exit 2 saying %s', async (argv, message) => {
    expect(await runCli(argv)).toBe(2);
    expect(err.join('')).toContain(message);
    expect(err.join('')).toContain('Usage: sluice diff delivery NAME');
  });
});

describe('sluice diff: exit codes', () => {
  const err: string[] = [];
  const out: string[] = [];
  let restore: () => void;
  beforeEach(() => {
    err.length = 0;
    out.length = 0;
    const o = jest.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
    const e = jest.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
    restore = () => (o.mockRestore(), e.mockRestore());
  });
  afterEach(() => restore());

  it('GIVEN a runtime failure (kubeconfig unreadable) THEN exit 2, not 1: 1 means "differences found"', async () => {
    expect(await runCli(['diff', 'delivery', 'web', '--kubeconfig', '/nonexistent/kubeconfig'])).toBe(2);
    expect(err.join('')).toContain('sluice diff: cannot load kubeconfig /nonexistent/kubeconfig');
  });

  it('GIVEN a bad --timeout THEN a usage error, exit 2', async () => {
    expect(await runCli(['diff', 'delivery', 'web', '--timeout', 'soon'])).toBe(2);
    expect(err.join('')).toContain('--timeout must be a duration such as 30s, 5m or 1h, got "soon"');
  });

  it('GIVEN --help THEN the usage documents the exit status, exit 0', async () => {
    expect(await runCli(['diff', '--help'])).toBe(0);
    expect(out.join('')).toContain(
      'Exit status (as kubectl diff): 0 no differences, 1 differences found, 2 an error',
    );
  });
});
