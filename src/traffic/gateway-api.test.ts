import { describe, expect, it } from '@jest/globals';
import type { ReleaseNames } from '../rollout/names.js';
import { TrafficRouteError } from './errors.js';
import { desiredHttpRoute, httpRouteProblems, httpRouteSplit, type HttpRoute } from './gateway-api.js';

const names: ReleaseNames = {
  namespace: 'shop',
  target: 'web',
  primary: 'web-primary',
  apexService: 'web',
  primaryService: 'web-primary',
  canaryService: 'web-canary',
};

/** An HTTPRoute as the API server returns it (defaults filled in), with an unrelated rule. */
function route(primaryWeight = 100, canaryWeight = 0): HttpRoute {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: {
      name: 'web',
      namespace: 'shop',
      resourceVersion: '7',
      labels: { 'sluice.dev/delivery': 'a.b' },
    },
    spec: {
      parentRefs: [{ name: 'gw' }],
      hostnames: ['web.example'],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: [
            { group: '', kind: 'Service', name: 'web-primary', port: 80, weight: primaryWeight },
            { group: '', kind: 'Service', name: 'web-canary', port: 80, weight: canaryWeight },
          ],
        },
        {
          matches: [{ path: { type: 'PathPrefix', value: '/static' } }],
          filters: [
            { type: 'RequestHeaderModifier', requestHeaderModifier: { add: [{ name: 'x', value: 'y' }] } },
          ],
          backendRefs: [{ group: '', kind: 'Service', name: 'static', port: 8080, weight: 1 }],
        },
      ],
    },
  };
}

describe('desiredHttpRoute', () => {
  it('GIVEN a route at 100/0 WHEN 10/90 is asked for THEN only the two weights change, the rest of spec.rules is carried through', () => {
    expect(desiredHttpRoute({ primary: 90, canary: 10 }, names, route())).toMatchSnapshot();
  });

  it('GIVEN a route already at 50/50 WHEN 50/50 is asked for THEN there is nothing to write', () => {
    expect(desiredHttpRoute({ primary: 50, canary: 50 }, names, route(50, 50))).toBeUndefined();
  });

  it('GIVEN backendRefs without weight, kind or group (the defaults) WHEN 0/100 is asked for THEN they are matched and weighted', () => {
    const r = route();
    r.spec!.rules![0] = {
      backendRefs: [
        { name: 'web-primary', port: 80 },
        { name: 'web-canary', port: 80 },
      ],
    };
    const body = desiredHttpRoute({ primary: 100, canary: 0 }, names, r);
    expect(body?.spec?.rules?.[0]?.backendRefs).toEqual([
      { name: 'web-primary', port: 80, weight: 100 },
      { name: 'web-canary', port: 80, weight: 0 },
    ]);
  });

  it('GIVEN a backendRef to a same-named Service in another namespace THEN it is not one of ours', () => {
    const r = route();
    r.spec!.rules![0] = {
      backendRefs: [
        { name: 'web-primary', port: 80 },
        { name: 'web-canary', namespace: 'other', port: 80 },
      ],
    };
    expect(() => desiredHttpRoute({ primary: 90, canary: 10 }, names, r)).toThrow(TrafficRouteError);
  });

  it('GIVEN a split that does not add up to 100 THEN it throws before building anything', () => {
    expect(() => desiredHttpRoute({ primary: 90, canary: 20 }, names, route())).toThrow(/adding up to 100/);
  });
});

describe('httpRouteSplit', () => {
  it.each([
    [90, 10, { primary: 90, canary: 10 }],
    [1, 1, { primary: 50, canary: 50 }],
    [100, 0, { primary: 100, canary: 0 }],
    [0, 0, undefined],
  ])('GIVEN weights %p/%p THEN the split is %p', (p, c, want) => {
    expect(httpRouteSplit(route(p, c), names)).toEqual(want);
  });
});

describe('httpRouteProblems', () => {
  it('GIVEN a route whose rule lost the canary backendRef THEN the problem names the rule and field', () => {
    const r = route();
    r.spec!.rules![0] = { backendRefs: [{ name: 'web-primary', port: 80 }] };
    expect(httpRouteProblems(r, names)).toEqual([
      'HTTPRoute shop/web spec.rules: no rule has backendRefs to both Service web-primary and Service web-canary',
      'HTTPRoute shop/web spec.rules[0].backendRefs: references web-primary but not web-canary',
    ]);
  });

  it('GIVEN a good route THEN no problems', () => {
    expect(httpRouteProblems(route(), names)).toEqual([]);
  });
});
