import { describe, expect, it } from '@jest/globals';
import type { CanaryRelease } from '../api/canary-release.js';
import type { ClusterClient } from '../kube/clients.js';
import { FieldError } from '../placement/field-error.js';
import { releaseNames } from '../rollout/names.js';
import { RouterConfigError, UnknownTrafficProviderError } from './errors.js';
import { routerFor } from './index.js';

const client = { name: 'hub' } as ClusterClient;

function release(trafficRouting: Record<string, unknown>): CanaryRelease {
  return {
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { name: 'web', namespace: 'shop' },
    spec: {
      targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
      service: { port: 80, primarySuffix: '-primary', canarySuffix: '-canary' },
      trafficRouting,
    },
  } as unknown as CanaryRelease;
}

const ctx = (routing: Record<string, unknown>) => {
  const r = release(routing);
  return { client, release: r, names: releaseNames(r) };
};

describe('routerFor', () => {
  it.each([
    [{ provider: 'gatewayAPI', gatewayAPI: { httpRoute: { name: 'web' } } }, 'gatewayAPI'],
    [{ provider: 'istio', istio: { virtualService: { name: 'web' } } }, 'istio'],
    [{ provider: 'smi', smi: { trafficSplit: { name: 'web' } } }, 'smi'],
    [{ provider: 'nginx', nginx: { ingress: { name: 'web' } } }, 'nginx'],
    [{ provider: 'replicas' }, 'replicas'],
  ])('GIVEN %p THEN the %p router', (routing, provider) => {
    expect(routerFor(ctx(routing)).provider).toBe(provider);
  });

  it.each([['linkerd'], ['toString'], [undefined]])(
    'GIVEN the unknown provider %p THEN a typed error naming the field, never a default router',
    (provider) => {
      const call = () => routerFor(ctx({ provider }));
      expect(call).toThrow(UnknownTrafficProviderError);
      expect(call).toThrow(FieldError);
      expect(call).toThrow(
        /^spec\.trafficRouting\.provider: Unsupported value: .*supported values: "gatewayAPI"/,
      );
    },
  );

  it('GIVEN gatewayAPI without its block THEN the missing field is named', () => {
    const call = () => routerFor(ctx({ provider: 'gatewayAPI' }));
    expect(call).toThrow(RouterConfigError);
    expect(call).toThrow(/^spec\.trafficRouting\.gatewayAPI\.httpRoute\.name: Required value/);
  });
});
