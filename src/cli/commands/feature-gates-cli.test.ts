import { runCli } from '../run.js';
import { captureOutput } from '../../../test/support/capture-output.js';

async function run(argv: string[]) {
  const out = captureOutput();
  try {
    const code = await runCli(argv);
    return { code, stdout: out.out(), stderr: out.err() };
  } finally {
    out.restore();
  }
}

describe('feature gates on the command line', () => {
  it('GIVEN sluice version --features THEN every gate is listed with its default and stage', async () => {
    const r = await run(['version', '--features']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^NAME\s+DEFAULT\s+STAGE\s+DESCRIPTION$/);
    expect(r.stdout).toMatch(/^ConversionWebhook\s+true\s+Beta\s/m);
    expect(r.stdout).toMatch(/^StorageMigration\s+false\s+Alpha\s/m);
    const json = await run(['version', '--features', '-o', 'json']);
    expect(JSON.parse(json.stdout)).toContainEqual(
      expect.objectContaining({ name: 'GitWriteBack', default: true, stage: 'Beta' }),
    );
  });

  it.each([
    [
      ['--feature-gates', 'Nope=true'],
      /--feature-gates: unknown feature gate "Nope"; known: ConversionWebhook/,
    ],
    [
      ['--feature-gates=GitWriteBack=maybe'],
      /--feature-gates: GitWriteBack: value must be true or false, got "maybe"/,
    ],
    [['--webhook-port', 'x'], /--webhook-port must be a port number/],
  ])(
    'GIVEN sluice controller %j THEN it exits 2 naming the flag, before touching a cluster',
    async (args, message) => {
      const r = await run(['controller', '--kubeconfig', '/nonexistent', ...args]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    },
  );
});
