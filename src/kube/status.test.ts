import { describe, expect, it } from '@jest/globals';
import { mergePatchFor } from './status.js';

describe('mergePatchFor', () => {
  it.each<[string, unknown, unknown, unknown]>([
    ['no current status', undefined, { a: 1 }, { a: 1 }],
    ['a changed scalar', { a: 1, b: 2 }, { a: 1, b: 3 }, { b: 3 }],
    ['a removed key becomes null', { a: 1, b: 2 }, { a: 1 }, { b: null }],
    [
      'a nested change only sends the nested key',
      { artifact: { revision: 'r1', digest: 'd1' } },
      { artifact: { revision: 'r2', digest: 'd1' } },
      { artifact: { revision: 'r2' } },
    ],
    [
      'arrays are replaced whole',
      { conditions: [{ type: 'Ready' }, { type: 'Stalled' }] },
      { conditions: [{ type: 'Ready' }] },
      { conditions: [{ type: 'Ready' }] },
    ],
    ['an object replacing a scalar', { a: 'x' }, { a: { b: 1 } }, { a: { b: 1 } }],
    ['equal values give an empty patch', { a: [1, 2], b: { c: true } }, { a: [1, 2], b: { c: true } }, {}],
  ])('GIVEN %s THEN the merge patch is minimal and correct', (_name, current, desired, patch) => {
    expect(mergePatchFor(current, desired)).toEqual(patch);
  });

  it('GIVEN any patch THEN applying it (RFC 7386) to current gives desired', () => {
    const apply = (target: unknown, patch: unknown): unknown => {
      if (typeof patch !== 'object' || patch === null || Array.isArray(patch)) return patch;
      const out: Record<string, unknown> =
        typeof target === 'object' && target !== null && !Array.isArray(target)
          ? { ...(target as object) }
          : {};
      for (const [k, v] of Object.entries(patch)) {
        if (v === null) delete out[k];
        else out[k] = apply(out[k], v);
      }
      return out;
    };
    const current = {
      observedGeneration: 1,
      conditions: [{ type: 'Ready', status: 'False' }],
      inventory: { entries: ['a', 'b'] },
      old: 1,
    };
    const desired = {
      observedGeneration: 2,
      conditions: [{ type: 'Ready', status: 'True' }],
      inventory: { entries: ['a'] },
      decisions: [],
    };
    expect(apply(current, mergePatchFor(current, desired))).toEqual(desired);
  });
});
