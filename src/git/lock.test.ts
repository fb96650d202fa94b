import { withPathLock } from './lock.js';

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe('withPathLock', () => {
  it('GIVEN three calls on one directory THEN they never overlap and run in call order', async () => {
    const events: string[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const gates = [deferred(), deferred(), deferred()];
    const runs = gates.map((gate, i) =>
      withPathLock('/tmp/repo-a', async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        events.push(`start ${i}`);
        await gate.promise;
        events.push(`end ${i}`);
        inFlight--;
        return i;
      }),
    );
    // Release out of order: the lock, not the release order, decides who runs.
    gates[2]!.resolve();
    gates[1]!.resolve();
    gates[0]!.resolve();
    await expect(Promise.all(runs)).resolves.toEqual([0, 1, 2]);
    expect(maxInFlight).toBe(1);
    expect(events).toEqual(['start 0', 'end 0', 'start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('GIVEN paths that resolve to the same directory THEN they share one lock', async () => {
    const gate = deferred();
    const events: string[] = [];
    const first = withPathLock('/tmp/x/../repo-b', async () => {
      events.push('first');
      await gate.promise;
    });
    const second = withPathLock('/tmp/repo-b/', async () => {
      events.push('second');
    });
    await Promise.resolve();
    expect(events).toEqual(['first']);
    gate.resolve();
    await Promise.all([first, second]);
    expect(events).toEqual(['first', 'second']);
  });

  it('GIVEN a failing call THEN the error propagates and the next call still runs', async () => {
    const failing = withPathLock('/tmp/repo-c', async () => {
      throw new Error('boom');
    });
    const next = withPathLock('/tmp/repo-c', async () => 'ran');
    await expect(failing).rejects.toThrow('boom');
    await expect(next).resolves.toBe('ran');
  });

  it('GIVEN different directories THEN one does not wait for the other', async () => {
    const gate = deferred();
    const blocked = withPathLock('/tmp/repo-d', () => gate.promise);
    await expect(withPathLock('/tmp/repo-e', async () => 'free')).resolves.toBe('free');
    gate.resolve();
    await blocked;
  });
});
