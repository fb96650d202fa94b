import { describe, expect, it } from '@jest/globals';
import type { CanaryRelease } from '../api/canary-release.js';
import { releaseNames } from './names.js';
import {
  deploymentReady,
  primaryDeployment,
  primaryHpa,
  referencedConfigs,
  services,
  TEMPLATE_HASH_ANNOTATION,
  templateHash,
  type DeploymentLike,
} from './workload.js';

const release = {
  metadata: { name: 'web', namespace: 'team' },
  spec: {
    targetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    service: { port: 80, targetPort: 'http', primarySuffix: '-primary', canarySuffix: '-canary' },
  },
} as unknown as CanaryRelease;
const names = releaseNames(release);

const target: DeploymentLike = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'web', namespace: 'team' },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: 'web' } },
    strategy: { type: 'RollingUpdate' },
    template: {
      metadata: { labels: { app: 'web', tier: 'front' } },
      spec: {
        containers: [
          {
            name: 'web',
            image: 'web:2',
            envFrom: [{ configMapRef: { name: 'settings' } }],
            env: [{ name: 'TOKEN', valueFrom: { secretKeyRef: { name: 'token', key: 't' } } }],
          },
        ],
        volumes: [
          { name: 'c', configMap: { name: 'files' } },
          { name: 'p', projected: { sources: [{ secret: { name: 'certs' } }] } },
        ],
      },
    },
  },
};

describe('workload', () => {
  it('GIVEN a target THEN the primary is its template with every selector label suffixed, stamped, without replicas', () => {
    const p = primaryDeployment(release, names, target, 'abc');
    expect(p.metadata?.name).toBe('web-primary');
    expect(p.spec?.selector).toEqual({ matchLabels: { app: 'web-primary' } });
    expect(p.spec?.template?.metadata?.labels).toEqual({ app: 'web-primary', tier: 'front' });
    expect(p.spec?.template?.spec).toEqual(target.spec?.template?.spec);
    expect(p.spec?.strategy).toEqual({ type: 'RollingUpdate' });
    expect(p.spec?.replicas).toBeUndefined();
    expect(p.metadata?.annotations?.[TEMPLATE_HASH_ANNOTATION]).toBe('abc');
    expect(target.spec?.template?.metadata?.labels).toEqual({ app: 'web', tier: 'front' });
  });

  it('GIVEN a target THEN apex and primary Services select the primary pods, canary the target pods', () => {
    const [apex, primary, canary] = services(release, names, { app: 'web' }) as Array<{
      metadata: { name: string };
      spec: { selector: Record<string, string>; ports: unknown[] };
    }>;
    expect([apex!.metadata.name, primary!.metadata.name, canary!.metadata.name]).toEqual([
      'web',
      'web-primary',
      'web-canary',
    ]);
    expect(apex!.spec.selector).toEqual({ app: 'web-primary' });
    expect(primary!.spec.selector).toEqual({ app: 'web-primary' });
    expect(canary!.spec.selector).toEqual({ app: 'web' });
    expect(apex!.spec.ports).toEqual([{ name: 'http', port: 80, protocol: 'TCP', targetPort: 'http' }]);
  });

  it('GIVEN a pod template THEN every ConfigMap and Secret it references is found', () => {
    expect(referencedConfigs(target.spec?.template)).toEqual({
      configMaps: ['files', 'settings'],
      secrets: ['certs', 'token'],
    });
  });

  it('GIVEN the same template in another key order THEN the same hash; a changed ConfigMap changes it', () => {
    const t1 = { spec: { containers: [{ name: 'a', image: 'x' }] }, metadata: { labels: { a: '1' } } };
    const t2 = { metadata: { labels: { a: '1' } }, spec: { containers: [{ image: 'x', name: 'a' }] } };
    expect(templateHash(t1)).toBe(templateHash(t2));
    expect(templateHash(t1)).toMatch(/^[0-9a-f]{16}$/);
    const cfg = (v: string) => ({ configMaps: { settings: { data: { v } } }, secrets: {} });
    expect(templateHash(t1, cfg('1'))).not.toBe(templateHash(t1, cfg('2')));
    expect(templateHash(t1, { configMaps: {}, secrets: { s: { data: { k: 'YQ==' } } } })).not.toBe(
      templateHash(t1, { configMaps: {}, secrets: { s: { data: { k: 'Yg==' } } } }),
    );
  });

  it.each<[string, DeploymentLike, boolean]>([
    [
      'rolled out',
      {
        metadata: { generation: 2 },
        spec: { replicas: 2 },
        status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 },
      },
      true,
    ],
    [
      'generation not observed yet',
      {
        metadata: { generation: 3 },
        spec: { replicas: 2 },
        status: { observedGeneration: 2, replicas: 2, updatedReplicas: 2, availableReplicas: 2 },
      },
      false,
    ],
    [
      'old pods still there',
      {
        metadata: { generation: 2 },
        spec: { replicas: 2 },
        status: { observedGeneration: 2, replicas: 3, updatedReplicas: 2, availableReplicas: 2 },
      },
      false,
    ],
    [
      'scaled to 0',
      { metadata: { generation: 2 }, spec: { replicas: 0 }, status: { observedGeneration: 2 } },
      true,
    ],
  ])('GIVEN a Deployment %s THEN ready is %s', (_w, d, ready) => {
    expect(deploymentReady({ apiVersion: 'apps/v1', kind: 'Deployment', ...d })).toBe(ready);
  });

  it('GIVEN an HPA on the target THEN its twin scales the primary', () => {
    const twin = primaryHpa(
      {
        apiVersion: 'autoscaling/v2',
        kind: 'HorizontalPodAutoscaler',
        metadata: { name: 'web' },
        spec: { minReplicas: 2, scaleTargetRef: { kind: 'Deployment', name: 'web' } },
      },
      names,
      'web',
    ) as { metadata: { name: string }; spec: Record<string, unknown> };
    expect(twin.metadata.name).toBe('web-primary');
    expect(twin.spec).toEqual({
      minReplicas: 2,
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web-primary' },
    });
  });
});
