import { describe, expect, it } from '@jest/globals';
import type { ReleaseNames } from '../rollout/names.js';
import { desiredTrafficSplit, trafficSplitProblems, trafficSplitSplit } from './smi.js';

const names: ReleaseNames = {
  namespace: 'shop',
  target: 'web',
  primary: 'web-primary',
  apexService: 'web',
  primaryService: 'web-primary',
  canaryService: 'web-canary',
};

describe('desiredTrafficSplit', () => {
  it('GIVEN no TrafficSplit WHEN 10/90 THEN the whole object is created, apex as service', () => {
    expect(desiredTrafficSplit({ primary: 90, canary: 10 }, names, 'web', undefined)).toMatchSnapshot();
  });

  it('GIVEN the TrafficSplit at 10/90 WHEN 10/90 again THEN there is nothing to write', () => {
    const current = desiredTrafficSplit({ primary: 90, canary: 10 }, names, 'web', undefined)!;
    expect(desiredTrafficSplit({ primary: 90, canary: 10 }, names, 'web', current)).toBeUndefined();
    expect(trafficSplitSplit(current, names)).toEqual({ primary: 90, canary: 10 });
  });

  it("GIVEN a TrafficSplit someone else made with the same weights THEN it is still written (to mark it as Sluice's)", () => {
    const current = desiredTrafficSplit({ primary: 90, canary: 10 }, names, 'web', undefined)!;
    const foreign = { ...current, metadata: { name: 'web', namespace: 'shop' } };
    expect(desiredTrafficSplit({ primary: 90, canary: 10 }, names, 'web', foreign)).toBeDefined();
  });
});

describe('trafficSplitProblems', () => {
  it('GIVEN backends that route to another Service THEN each missing backend is named', () => {
    const ts = {
      metadata: { name: 'web' },
      spec: {
        service: 'web',
        backends: [
          { service: 'web-primary', weight: 100 },
          { service: 'old', weight: 0 },
        ],
      },
    };
    expect(trafficSplitProblems(ts, names)).toEqual([
      'TrafficSplit shop/web spec.backends: no backend for Service web-canary',
    ]);
  });
});
