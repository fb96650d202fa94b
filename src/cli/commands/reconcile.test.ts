import { runCli } from '../run.js';
import {
  RECONCILE_REQUESTED_ANNOTATION as RECONCILE_REQUESTED_AT_ANNOTATION,
  reconcileRequestPatch,
} from '../../api/reconcile-request.js';
import { captureOutput } from '../../../test/support/capture-output.js';

describe('sluice reconcile', () => {
  let io: ReturnType<typeof captureOutput>;
  beforeEach(() => (io = captureOutput()));
  afterEach(() => io.restore());

  it.each([
    [['reconcile'], 'missing argument'],
    [['reconcile', 'source'], 'missing argument'],
    [['reconcile', 'cluster', 'x'], 'unknown resource type "cluster": use one of source, delivery'],
    [
      ['reconcile', 'delivery', 'x', '--timeout', 'soon'],
      '--timeout must be a duration such as 30s, 5m or 1h, got "soon"',
    ],
    [['reconcile', 'delivery', 'x', 'y'], 'unexpected argument "y"'],
    [['reconcile', 'delivery', 'x', '--wait=yes'], "Option '--wait' does not take an argument"],
  ])('GIVEN %j THEN exit 2 saying %s, with the usage text', async (argv, message) => {
    expect(await runCli(argv)).toBe(2);
    expect(io.err()).toContain(message);
    expect(io.err()).toContain('Usage: sluice reconcile');
  });

  it('GIVEN a request time THEN a merge patch of the annotation, in RFC 3339 UTC with milliseconds', () => {
    expect(reconcileRequestPatch(new Date('2026-11-30T12:00:01.234Z'))).toEqual({
      metadata: { annotations: { [RECONCILE_REQUESTED_AT_ANNOTATION]: '2026-11-30T12:00:01.234Z' } },
    });
    expect(RECONCILE_REQUESTED_AT_ANNOTATION).toBe('sluice.dev/reconcile-requested-at');
  });
});
