import { describe, expect, it } from '@jest/globals';
import type { ReleaseNames } from '../rollout/names.js';
import { TrafficRouteError } from './errors.js';
import { canaryIngressSplit, desiredCanaryIngress, ingressProblems, type Ingress } from './nginx.js';

const names: ReleaseNames = {
  namespace: 'shop',
  target: 'web',
  primary: 'web-primary',
  apexService: 'web',
  primaryService: 'web-primary',
  canaryService: 'web-canary',
};

function ingress(): Ingress {
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'Ingress',
    metadata: {
      name: 'web',
      namespace: 'shop',
      labels: { 'sluice.dev/delivery': 'shop.web' },
      annotations: {
        'nginx.ingress.kubernetes.io/proxy-body-size': '8m',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
      },
    },
    spec: {
      ingressClassName: 'nginx',
      tls: [{ hosts: ['web.example'], secretName: 'web-tls' }],
      rules: [
        {
          host: 'web.example',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'web', port: { number: 80 } } } },
              {
                path: '/docs',
                pathType: 'Prefix',
                backend: { service: { name: 'docs', port: { number: 80 } } },
              },
            ],
          },
        },
        {
          host: 'docs.example',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'docs', port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  };
}

describe('desiredCanaryIngress', () => {
  it('GIVEN an Ingress to the apex Service WHEN 10/90 THEN the canary copy routes only its paths to the canary Service, weight "10"', () => {
    expect(desiredCanaryIngress({ primary: 90, canary: 10 }, names, ingress(), undefined)).toMatchSnapshot();
  });

  it('GIVEN the canary Ingress already at 0 WHEN 0/100 THEN nothing is written (kept at weight 0, never deleted)', () => {
    const current = desiredCanaryIngress({ primary: 100, canary: 0 }, names, ingress(), undefined)!;
    expect(current.metadata?.annotations?.['nginx.ingress.kubernetes.io/canary-weight']).toBe('0');
    expect(desiredCanaryIngress({ primary: 100, canary: 0 }, names, ingress(), current)).toBeUndefined();
    expect(canaryIngressSplit(current)).toEqual({ primary: 100, canary: 0 });
  });

  it('GIVEN a same-named Ingress Sluice did not make THEN it is refused, not overwritten', () => {
    const foreign: Ingress = { ...ingress(), metadata: { name: 'web-canary', namespace: 'shop' } };
    expect(() => desiredCanaryIngress({ primary: 50, canary: 50 }, names, ingress(), foreign)).toThrow(
      TrafficRouteError,
    );
  });
});

describe('ingressProblems', () => {
  it('GIVEN an Ingress that routes to neither apex nor primary THEN spec.rules is reported', () => {
    const i = ingress();
    i.spec!.rules = i.spec!.rules!.slice(1);
    expect(ingressProblems(i, names)).toEqual([
      'Ingress shop/web spec.rules: no backend routes to Service web or web-primary',
    ]);
  });

  it('GIVEN canary-weight 30 of a total 200 THEN get reads 15%', () => {
    const c: Ingress = {
      metadata: {
        annotations: {
          'nginx.ingress.kubernetes.io/canary': 'true',
          'nginx.ingress.kubernetes.io/canary-weight': '30',
          'nginx.ingress.kubernetes.io/canary-weight-total': '200',
        },
      },
    };
    expect(canaryIngressSplit(c)).toEqual({ primary: 85, canary: 15 });
  });
});
