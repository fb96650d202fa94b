import { describe, expect, it } from '@jest/globals';
import type { ReleaseNames } from '../rollout/names.js';
import {
  desiredVirtualService,
  destinationRuleProblems,
  hostIs,
  istioTargets,
  virtualServiceProblems,
  virtualServiceSplit,
  type VirtualService,
} from './istio.js';

const names: ReleaseNames = {
  namespace: 'shop',
  target: 'web',
  primary: 'web-primary',
  apexService: 'web',
  primaryService: 'web-primary',
  canaryService: 'web-canary',
};

function vs(primaryHost = 'web-primary', canaryHost = 'web-canary.shop.svc.cluster.local'): VirtualService {
  return {
    apiVersion: 'networking.istio.io/v1',
    kind: 'VirtualService',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      hosts: ['web'],
      http: [
        {
          name: 'admin',
          match: [{ uri: { prefix: '/admin' } }],
          route: [{ destination: { host: 'admin' } }],
        },
        {
          name: 'main',
          retries: { attempts: 3 },
          route: [
            { destination: { host: primaryHost, port: { number: 80 } }, weight: 100 },
            { destination: { host: canaryHost, port: { number: 80 } }, weight: 0 },
          ],
        },
      ],
    },
  };
}

describe('desiredVirtualService', () => {
  it('GIVEN destinations by Service host (short and FQDN) WHEN 10/90 THEN only their weights change', () => {
    expect(desiredVirtualService({ primary: 90, canary: 10 }, names, vs())).toMatchSnapshot();
  });

  it('GIVEN a DestinationRule WHEN 50/50 THEN the primary and canary subsets of the apex host are weighted', () => {
    const v = vs();
    v.spec!.http![1] = {
      route: [
        { destination: { host: 'web', subset: 'primary' }, weight: 100 },
        { destination: { host: 'web', subset: 'canary' } },
      ],
    };
    expect(
      desiredVirtualService({ primary: 50, canary: 50 }, names, v, istioTargets(names, true)),
    ).toMatchSnapshot();
  });

  it('GIVEN a VirtualService already at 100/0 THEN there is nothing to write', () => {
    expect(desiredVirtualService({ primary: 100, canary: 0 }, names, vs())).toBeUndefined();
  });
});

describe('virtualServiceSplit and problems', () => {
  it('GIVEN weights 80/20 THEN get reads 80/20', () => {
    const v = desiredVirtualService({ primary: 80, canary: 20 }, names, vs())!;
    expect(virtualServiceSplit(v, names, istioTargets(names, false))).toEqual({ primary: 80, canary: 20 });
  });

  it('GIVEN the canary host in another namespace THEN the route is reported with its field path', () => {
    expect(
      virtualServiceProblems(vs('web-primary', 'web-canary.other'), names, istioTargets(names, false)),
    ).toEqual([
      'VirtualService shop/web spec.http: no route has destinations web-primary and web-canary',
      'VirtualService shop/web spec.http[1].route: routes to web-primary but not web-canary',
    ]);
  });

  it('GIVEN a DestinationRule without the canary subset THEN verify names spec.subsets', () => {
    const dr = { metadata: { name: 'web' }, spec: { host: 'web', subsets: [{ name: 'primary' }] } };
    expect(destinationRuleProblems(dr, names)).toEqual([
      'DestinationRule shop/web spec.subsets: no subset named "canary"',
    ]);
  });

  it.each([
    ['web-primary', true],
    ['web-primary.shop', true],
    ['web-primary.shop.svc', true],
    ['web-primary.shop.svc.cluster.local', true],
    ['web-primary.other.svc.cluster.local', false],
    ['web-primary.shop.example.com', false],
    ['web-primary-x', false],
  ])('hostIs(%p) is %p', (host, want) => {
    expect(hostIs(host, 'web-primary', 'shop')).toBe(want);
  });
});
