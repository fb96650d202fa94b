import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { CanaryRelease } from '../../api/canary-release.js';
import { captureOutput } from '../../../test/support/capture-output.js';
import { runCli } from '../run.js';
import { describeRelease, operatorRequestPatch } from './canary.js';

describe('operatorRequestPatch', () => {
  it('GIVEN an action and a time THEN a merge patch of that one annotation, RFC 3339 with ms', () => {
    expect(operatorRequestPatch('pause', new Date('2026-11-30T12:00:00.042Z'))).toEqual({
      metadata: { annotations: { 'sluice.dev/pause': '2026-11-30T12:00:00.042Z' } },
    });
  });
});

describe('describeRelease', () => {
  const with_ = (status: CanaryRelease['status']) => ({ status }) as CanaryRelease;
  it.each([
    [undefined, 'not started yet'],
    [{ phase: 'Paused' as const }, 'phase Paused'],
    [
      { phase: 'Progressing' as const, step: '2/4', canaryWeight: 20 },
      'phase Progressing, step 2/4, canary weight 20%',
    ],
  ])('GIVEN %j THEN %s', (status, want) => expect(describeRelease(with_(status))).toBe(want));
});

describe('sluice promote|abort|pause|resume|retry: usage (exit 2)', () => {
  let io: ReturnType<typeof captureOutput>;
  beforeEach(() => {
    io = captureOutput();
  });
  afterEach(() => io.restore());

  it.each([
    [['promote'], 'missing argument'],
    [['abort', 'a', 'b'], 'unexpected argument "b"'],
    [['pause', 'web', '--timeout', 'soon'], '--timeout must be a duration'],
    [['retry', 'web', '--force'], "Unknown option '--force'"],
  ])('GIVEN %j THEN exit 2 saying %s', async (argv, message) => {
    expect(await runCli(argv)).toBe(2);
    expect(io.err()).toContain(message);
    expect(io.err()).toContain(`Usage: sluice ${argv[0]} NAME`);
  });

  it('GIVEN --help THEN the usage names the annotation and says spec and status are never changed', async () => {
    expect(await runCli(['resume', '--help'])).toBe(0);
    expect(io.out()).toContain('annotation sluice.dev/resume');
    expect(io.out()).toContain('Never changes spec\nor status');
  });

  it('GIVEN sluice --help THEN status and the five operator commands are listed', async () => {
    expect(await runCli(['--help'])).toBe(0);
    for (const c of ['status', 'promote', 'abort', 'pause', 'resume', 'retry'])
      expect(io.out()).toMatch(new RegExp(`^  ${c} `, 'm'));
  });
});
