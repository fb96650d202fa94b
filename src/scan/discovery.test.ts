import type { ClusterClient } from '../kube/clients.js';
import { DiscoveryCache, serves, servedVersionsOf, type ServedApis } from './discovery.js';

const apis = (tag: string): ServedApis => ({
  gitVersion: tag,
  groupVersions: new Map([
    ['apps/v1', [{ kind: 'Deployment', plural: 'deployments', namespaced: true, verbs: ['list'] }]],
    [
      'flowcontrol.apiserver.k8s.io/v1',
      [{ kind: 'FlowSchema', plural: 'flowschemas', namespaced: false, verbs: [] }],
    ],
  ]),
});

describe('DiscoveryCache', () => {
  const client = { name: 'member-1' } as ClusterClient;

  it('GIVEN a fresh entry WHEN asked again within the TTL THEN one fetch; after it THEN a new fetch', async () => {
    let now = 0;
    let fetches = 0;
    const cache = new DiscoveryCache({ ttlMs: 1000, now: () => now });
    const fetch = async () => apis(`v${++fetches}`);
    expect((await cache.get(client, fetch)).gitVersion).toBe('v1');
    now = 999;
    expect((await cache.get(client, fetch)).gitVersion).toBe('v1');
    now = 1000;
    expect((await cache.get(client, fetch)).gitVersion).toBe('v2');
    expect(fetches).toBe(2);
  });

  it('GIVEN a failed fetch THEN it is not cached', async () => {
    const cache = new DiscoveryCache();
    await expect(cache.get(client, async () => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect((await cache.get(client, async () => apis('up'))).gitVersion).toBe('up');
  });
});

describe('serves / servedVersionsOf', () => {
  it('GIVEN served APIs THEN exact apiVersion+kind matches, and the versions of a group kind', () => {
    const a = apis('x');
    expect(serves(a, 'apps/v1', 'Deployment')).toBe(true);
    expect(serves(a, 'apps/v1beta1', 'Deployment')).toBe(false);
    expect(servedVersionsOf(a, 'apps', 'Deployment')).toEqual(['apps/v1']);
    expect(servedVersionsOf(a, '', 'Deployment')).toEqual([]);
  });
});
