import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { WorkQueue, backoffDelay } from './workqueue.js';

/** Resolves with what get() gave, or 'pending' if it has not resolved after the microtasks ran. */
async function peek(p: Promise<string | undefined>): Promise<string | undefined | 'pending'> {
  return Promise.race([p, new Promise<'pending'>((r) => setImmediate(() => r('pending')))]);
}

describe('WorkQueue', () => {
  it('GIVEN a key added three times WHEN a worker gets THEN it is handed out once', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    q.add('a');
    q.add('a');
    expect(q.length).toBe(1);
    expect(await q.get()).toBe('a');
    expect(q.length).toBe(0);
    expect(await peek(q.get())).toBe('pending');
    q.shutDown();
  });

  it('GIVEN several keys WHEN they are taken THEN they come out in the order they were added', async () => {
    const q = new WorkQueue('t');
    for (const k of ['c', 'a', 'b', 'a']) q.add(k);
    expect([await q.get(), await q.get(), await q.get()]).toEqual(['c', 'a', 'b']);
  });

  it('GIVEN a key being processed WHEN it is added again THEN no worker gets it until done(), then one does', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    const first = await q.get();
    expect(first).toBe('a');

    q.add('a');
    q.add('a');
    const second = q.get();
    expect(await peek(second)).toBe('pending');
    expect(q.length).toBe(0);

    q.done('a');
    expect(await second).toBe('a');
    q.done('a');
    expect(await peek(q.get())).toBe('pending');
    q.shutDown();
  });

  it('GIVEN a key processed and not re-added WHEN done THEN it is not queued again', async () => {
    const q = new WorkQueue('t');
    q.add('a');
    await q.get();
    q.done('a');
    expect(q.length).toBe(0);
  });

  it('GIVEN a waiting worker WHEN a key is added THEN that worker gets it', async () => {
    const q = new WorkQueue('t');
    const waiting = q.get();
    q.add('x');
    expect(await waiting).toBe('x');
  });

  describe('backoffDelay', () => {
    it.each([
      [0, 5],
      [1, 10],
      [2, 20],
      [10, 5120],
      [16, 300_000],
      [2000, 300_000],
    ])('GIVEN %i failures (base 5 ms, cap 5 min) THEN the next delay is %i ms', (failures, delay) => {
      expect(backoffDelay(failures, 5, 300_000)).toBe(delay);
    });
  });

  describe('with fake timers', () => {
    beforeEach(() => {
      jest.useFakeTimers();
    });
    afterEach(() => {
      jest.useRealTimers();
    });

    it('GIVEN repeated failures WHEN rate-limited THEN the delay doubles up to the cap, and forget resets it', async () => {
      const q = new WorkQueue('t', { baseDelayMs: 10, maxDelayMs: 40 });
      const delays: number[] = [];
      for (let i = 0; i < 5; i++) {
        q.addRateLimited('k');
        let waited = 0;
        while (q.length === 0) {
          await jest.advanceTimersByTimeAsync(1);
          waited++;
        }
        delays.push(waited);
        expect(await q.get()).toBe('k');
        q.done('k');
      }
      expect(delays).toEqual([10, 20, 40, 40, 40]);
      expect(q.numRequeues('k')).toBe(5);

      q.forget('k');
      expect(q.numRequeues('k')).toBe(0);
      q.addRateLimited('k');
      await jest.advanceTimersByTimeAsync(9);
      expect(q.length).toBe(0);
      await jest.advanceTimersByTimeAsync(1);
      expect(q.length).toBe(1);
      q.shutDown();
    });

    it('GIVEN addAfter WHEN the delay passes THEN the key is added; an earlier addAfter for the same key wins', async () => {
      const q = new WorkQueue('t');
      q.addAfter('a', 1000);
      q.addAfter('a', 5000); // later: ignored, the key already waits for an earlier time
      q.addAfter('b', 2000);
      q.addAfter('b', 500); // earlier: replaces
      await jest.advanceTimersByTimeAsync(499);
      expect(q.length).toBe(0);
      await jest.advanceTimersByTimeAsync(1);
      expect(await q.get()).toBe('b');
      await jest.advanceTimersByTimeAsync(500);
      expect(await q.get()).toBe('a');
      await jest.advanceTimersByTimeAsync(10_000);
      expect(q.length).toBe(0);
      q.shutDown();
    });

    it('GIVEN addAfter with no delay THEN the key is added at once', () => {
      const q = new WorkQueue('t');
      q.addAfter('a', 0);
      expect(q.length).toBe(1);
    });

    it('GIVEN a key waiting for its delay WHEN it is added directly THEN it is handed out once now and once after the delay', async () => {
      const q = new WorkQueue('t');
      q.addAfter('a', 100);
      q.add('a');
      expect(await q.get()).toBe('a');
      q.done('a');
      await jest.advanceTimersByTimeAsync(100);
      expect(q.length).toBe(1);
      q.shutDown();
    });

    it('GIVEN a queue with waiting workers, queued and delayed keys WHEN shut down THEN get() resolves undefined and nothing comes back', async () => {
      const q = new WorkQueue('t');
      const w1 = q.get();
      const w2 = q.get();
      q.shutDown();
      expect(await w1).toBeUndefined();
      expect(await w2).toBeUndefined();

      const q2 = new WorkQueue('t2');
      q2.add('a');
      q2.addAfter('b', 100);
      q2.shutDown();
      expect(q2.shuttingDown).toBe(true);
      expect(await q2.get()).toBeUndefined();
      q2.add('c');
      q2.addRateLimited('d');
      await jest.advanceTimersByTimeAsync(1000);
      expect(q2.length).toBe(0);
      expect(jest.getTimerCount()).toBe(0);
    });
  });

  it('GIVEN a base delay above the cap THEN construction fails', () => {
    expect(() => new WorkQueue('bad', { baseDelayMs: 10, maxDelayMs: 5 })).toThrow(RangeError);
  });
});
