// examples/canary is what the demo's third chapter and the canary e2e test ship: these checks
// keep the example consistent with the API (validation), with the names Sluice derives for
// the release (the HTTPRoute must reference its primary and canary Services) and with the
// version substitution both rely on.
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import type { CanaryRelease } from '../../src/api/canary-release.js';
import { validateCanaryRelease } from '../../src/api/validation.js';
import { releaseNames } from '../../src/rollout/names.js';
import { httpRouteProblems, type HttpRoute } from '../../src/traffic/gateway-api.js';
import { canaryDeployFiles, canaryHubObjects } from '../support/canary-example.js';

const wiring = {
  namespace: 'team-a',
  gitUrl: 'http://127.0.0.1:1/demo-app.git',
  gitInterval: '1s',
  cluster: 'member-9',
  prometheusUrl: 'http://127.0.0.1:2',
};

describe('examples/canary', () => {
  it('GIVEN a version WHEN the deploy files are rendered THEN only the image tag and the version label change', () => {
    const v1 = canaryDeployFiles('v1')['deploy/deployment.yaml']!;
    const v9 = canaryDeployFiles('v9-slow')['deploy/deployment.yaml']!;
    const d = parse(v9) as {
      apiVersion: string;
      spec: {
        template: {
          metadata: { labels: Record<string, string> };
          spec: { containers: Array<{ image: string }> };
        };
      };
    };
    expect(d.apiVersion).toBe('apps/v1');
    expect(d.spec.template.spec.containers[0]!.image).toBe('sluice.dev/demo-app:v9-slow');
    expect(d.spec.template.metadata.labels.version).toBe('v9-slow');
    expect(v9.replace(/v9-slow/g, 'v1')).toBe(v1);
  });

  it('GIVEN the hub objects WHEN wired to a test bed THEN every object is in its namespace and points at it', () => {
    const objs = canaryHubObjects(wiring);
    expect(objs.map((o) => o.kind)).toEqual(['GitSource', 'PlacementRule', 'Delivery', 'CanaryRelease']);
    expect(new Set(objs.map((o) => o.metadata?.namespace))).toEqual(new Set(['team-a']));
    const by = (kind: string) => objs.find((o) => o.kind === kind)!.spec;
    expect(by('GitSource')).toMatchObject({ url: wiring.gitUrl, interval: '1s' });
    expect(by('PlacementRule')).toEqual({ clusters: [{ name: 'member-9' }] });
    expect(by('Delivery')).toMatchObject({ targetNamespace: 'team-a', path: './deploy' });
    expect(by('CanaryRelease')).toMatchObject({ analysis: { provider: { address: wiring.prometheusUrl } } });
  });

  it('GIVEN the example CanaryRelease THEN it validates and its HTTPRoute splits between its primary and canary Services', () => {
    const release = canaryHubObjects(wiring).find(
      (o) => o.kind === 'CanaryRelease',
    ) as unknown as CanaryRelease;
    expect(validateCanaryRelease(release)).toEqual([]);
    const route = parse(canaryDeployFiles('v1')['deploy/httproute.yaml']!) as HttpRoute;
    route.metadata = { ...route.metadata, namespace: 'team-a' };
    expect(route.metadata.name).toBe(release.spec.trafficRouting.gatewayAPI?.httpRoute.name);
    expect(httpRouteProblems(route, releaseNames(release))).toEqual([]);
  });
});
