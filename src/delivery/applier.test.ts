import { mapBounded } from './applier.js';

describe('mapBounded', () => {
  it('GIVEN more items than the limit THEN at most `limit` run at once and results keep input order', async () => {
    let running = 0;
    let peak = 0;
    const out = await mapBounded([5, 1, 4, 2, 3, 0], 2, async (n) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, n));
      running -= 1;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0]);
    expect(peak).toBe(2);
  });

  it('GIVEN no items THEN an empty result', async () => {
    expect(await mapBounded([], 4, async () => 1)).toEqual([]);
  });

  it('GIVEN a failing item THEN the whole call rejects with its error', async () => {
    await expect(
      mapBounded([1, 2], 2, async (n) => {
        if (n === 2) throw new Error('boom');
        return n;
      }),
    ).rejects.toThrow('boom');
  });
});
