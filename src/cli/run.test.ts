import { runCli } from './run.js';
import { captureOutput } from '../../test/support/capture-output.js';

describe('sluice CLI', () => {
  let io: ReturnType<typeof captureOutput>;
  beforeEach(() => (io = captureOutput()));
  afterEach(() => io.restore());

  it.each([
    [['bogus'], 'unknown command "bogus"'],
    [['version', '--bogus'], "sluice version: Unknown option '--bogus'"],
    [['version', '-o', 'yaml'], '-o must be text or json, got "yaml"'],
    [['version', 'extra'], 'unexpected argument "extra"'],
    [
      ['controller', '--lease-duration', '5x'],
      '--lease-duration must be a duration such as 30s, 5m or 1h, got "5x"',
    ],
    [['controller', '--cluster-probe-interval', 'soon'], '--cluster-probe-interval must be a duration'],
    [['controller', '--leader-elect=maybe'], '--leader-elect must be true or false, got "maybe"'],
    [['controller', '--log-level', 'loud'], 'unknown log level "loud": use one of error, warn, info, debug'],
    [
      ['controller', '--metrics-bind-address', 'nope'],
      '--metrics-bind-address: listen address "nope" is not HOST:PORT',
    ],
    [['controller', '--kubeconfig'], "Option '--kubeconfig <value>' argument missing"],
    [['install-crds', '--context'], "Option '--context <value>' argument missing"],
  ])('GIVEN %j THEN a usage error (exit 2) saying %s, with the usage text', async (argv, message) => {
    expect(await runCli(argv)).toBe(2);
    expect(io.err()).toContain(message);
    expect(io.err()).toContain('Usage: sluice');
  });

  it('GIVEN --help anywhere THEN usage on stdout and exit 0', async () => {
    for (const argv of [
      [],
      ['--help'],
      ['controller', '--help'],
      ['install-crds', '-h'],
      ['version', '--help'],
    ]) {
      expect(await runCli(argv)).toBe(0);
    }
    expect(io.out()).toContain('Usage: sluice controller [flags]');
    expect(io.err()).toBe('');
  });

  it('GIVEN version -o json THEN the package version as JSON', async () => {
    expect(await runCli(['version', '-o', 'json'])).toBe(0);
    expect(JSON.parse(io.out())).toEqual({
      sluice: expect.stringMatching(/^\d+\.\d+\.\d+/),
      node: process.version,
      platform: expect.any(String),
    });
  });

  it('GIVEN a kubeconfig that does not exist THEN a runtime error (exit 1) naming the file', async () => {
    expect(await runCli(['install-crds', '--kubeconfig', '/nonexistent/kubeconfig'])).toBe(1);
    expect(io.err()).toContain('cannot load kubeconfig /nonexistent/kubeconfig');
  });
});
