import { runCli } from '../run.js';
import { captureOutput } from '../../../test/support/capture-output.js';

const F = new URL('../../../test/fixtures/scan/', import.meta.url).pathname;

async function run(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const c = captureOutput();
  try {
    const code = await runCli(args);
    return { code, out: c.out(), err: c.err() };
  } finally {
    c.restore();
  }
}

describe('sluice scan', () => {
  it('GIVEN removed APIs at the target THEN exit 4 and text findings', async () => {
    const r = await run(['scan', `${F}manifests/multi.yaml`, '--target-version', '1.29']);
    expect(r.code).toBe(4);
    expect(r.out).toContain(
      'multi.yaml:8: REMOVED batch/v1beta1 CronJob nightly (removed in 1.25); use batch/v1 CronJob',
    );
  });

  it('GIVEN only deprecated APIs THEN exit 3; nothing THEN exit 0', async () => {
    expect((await run(['scan', `${F}manifests/multi.yaml`, '--target-version', '1.21'])).code).toBe(3);
    expect(
      (await run(['scan', `${F}rows/batch-v1beta1-CronJob.yaml`, '--target-version', '1.20'])).code,
    ).toBe(0);
    // multi.yaml's policy/v1 PodDisruptionBudget is not served before 1.21.
    expect((await run(['scan', `${F}manifests/multi.yaml`, '--target-version', '1.20'])).code).toBe(4);
  });

  it('GIVEN -o json or sarif THEN machine output on stdout', async () => {
    const j = await run(['scan', `${F}manifests/multi.yaml`, '--target-version', '1.29', '-o', 'json']);
    expect(JSON.parse(j.out).findings[0].apiVersion).toBe('batch/v1beta1');
    const s = await run(['scan', `${F}manifests/multi.yaml`, '--target-version', '1.29', '-o', 'sarif']);
    expect(JSON.parse(s.out).runs[0].results[0].ruleId).toBe('batch-v1beta1-CronJob');
  });

  it('GIVEN no target version THEN the newest the table knows (1.36) is used', async () => {
    const j = await run(['scan', `${F}manifests/multi.yaml`, '-o', 'json']);
    expect(JSON.parse(j.out).targetVersion).toBe('1.36');
  });

  it.each([
    [['scan'], /give at least one PATH or --kubeconfig/],
    [['scan', '.', '--target-version', 'latest'], /--target-version: invalid Kubernetes version "latest"/],
    [['scan', '.', '-o', 'yaml'], /-o must be text, json or sarif/],
  ])('GIVEN %j THEN a usage error, exit 2', async (args, message) => {
    const r = await run(args as string[]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message as RegExp);
  });

  it('GIVEN an unreadable kubeconfig THEN exit 2 with the reason', async () => {
    const r = await run(['scan', '--kubeconfig', '/nonexistent/kubeconfig']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('sluice scan:');
  });
});
