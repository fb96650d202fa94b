import { describe, expect, it } from '@jest/globals';
import { KubeError } from '../kube/errors.js';
import { retryOnConflict } from './kube.js';
import { TrafficRouteError } from './errors.js';

const conflict = () => new KubeError('the object has been modified', { status: 409, reason: 'Conflict' });

describe('retryOnConflict', () => {
  it('GIVEN two lost races THEN the read-modify-write runs a third time and succeeds', async () => {
    let calls = 0;
    const out = await retryOnConflict(async () => {
      calls += 1;
      if (calls < 3) throw conflict();
      return 'ok';
    });
    expect([out, calls]).toEqual(['ok', 3]);
  });

  it('GIVEN a busy object that always conflicts THEN it gives up after 4 attempts with the Conflict', async () => {
    let calls = 0;
    const run = retryOnConflict(async () => {
      calls += 1;
      throw conflict();
    });
    await expect(run).rejects.toThrow(/has been modified/);
    expect(calls).toBe(4);
  });

  it('GIVEN a route problem THEN it is thrown at once, unchanged', async () => {
    let calls = 0;
    const run = retryOnConflict(async () => {
      calls += 1;
      throw new TrafficRouteError(['HTTPRoute a/b spec.rules: no rule']);
    });
    await expect(run).rejects.toThrow(TrafficRouteError);
    expect(calls).toBe(1);
  });
});
