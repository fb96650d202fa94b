// Pure parts of the test bed's data-plane helpers: the load generator's CLI and counts, the
// Prometheus discovery and scrape config, and the Gateway API objects.
import { describe, expect, it } from '@jest/globals';
import type { V1Pod } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { demoDeployment, gatewayObjects, weightedRoute } from '../support/data-plane.js';
import { parseDuration, parseLoadArgs, versionShare, type LoadCounts } from '../support/load.js';
import { podTargetGroups, scrapeConfig } from '../support/prometheus.js';

const counts = (byVersion: Record<string, number>): LoadCounts => ({
  total: 0,
  byVersion,
  byStatus: {},
  byVersionStatus: {},
  errors: 0,
  dropped: 0,
  lastErrors: [],
});

describe('load generator', () => {
  it('GIVEN CLI arguments THEN URL, rate, duration and host header are parsed', () => {
    expect(
      parseLoadArgs(['http://127.0.0.1:8000/', '--rps', '25', '--duration', '2m', '--host', 'demo']),
    ).toEqual({
      url: 'http://127.0.0.1:8000/',
      opts: { rps: 25, durationMs: 120_000, headers: { host: 'demo' } },
    });
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('3')).toBe(3000);
  });

  it.each([
    [[], 'missing URL'],
    [['u', '--rps'], '--rps needs a value'],
    [['u', '--rps', '0'], '--rps must be a positive number'],
    [['u', '--rps', 'x'], '--rps must be a positive number'],
    [['u', '--duration', '5h'], '--duration 5h: want e.g. 30s, 2m or 500ms'],
    [['u', '--bogus'], 'unknown option --bogus'],
    [['u', 'v'], 'unexpected argument v'],
  ])('GIVEN bad arguments %j THEN the error names the argument', (argv, message) => {
    expect(() => parseLoadArgs(argv)).toThrow(message);
  });

  it('GIVEN counts by version THEN the share is of answered requests', () => {
    expect(versionShare(counts({ v1: 80, v2: 20 }), 'v1')).toBeCloseTo(0.8);
    expect(versionShare(counts({ v2: 5 }), 'v1')).toBe(0);
    expect(versionShare(counts({}), 'v1')).toBe(0);
  });
});

describe('prometheus discovery', () => {
  const pod = (name: string, ip: string | undefined, labels: Record<string, string>): V1Pod => ({
    metadata: { name, namespace: 'ns', uid: 'u-1', labels },
    spec: {
      nodeName: 'n',
      containers: [
        {
          name: 'app',
          image: 'sluice.dev/demo-app:v1',
          ports: [
            { name: 'http', containerPort: 8080 },
            { name: 'metrics', containerPort: 9464 },
          ],
        },
      ],
    },
    status: { phase: 'Running', podIP: ip, conditions: [{ type: 'Ready', status: 'True' }] },
  });

  it("GIVEN pods THEN one target group per port with kubernetes_sd's meta labels; pods without an address are skipped", () => {
    const groups = podTargetGroups([
      pod('a', '10.250.1.2', { app: 'demo-app', 'app.kubernetes.io/part-of': 'x' }),
      pod('b', undefined, {}),
    ]);
    expect(groups.map((g) => g.targets[0])).toEqual(['10.250.1.2:8080', '10.250.1.2:9464']);
    expect(groups[1]!.labels).toMatchObject({
      __meta_kubernetes_namespace: 'ns',
      __meta_kubernetes_pod_name: 'a',
      __meta_kubernetes_pod_phase: 'Running',
      __meta_kubernetes_pod_ready: 'true',
      __meta_kubernetes_pod_label_app: 'demo-app',
      __meta_kubernetes_pod_label_app_kubernetes_io_part_of: 'x',
      __meta_kubernetes_pod_container_port_name: 'metrics',
    });
  });

  it('GIVEN options THEN the scrape config keeps the metrics port and relabels namespace, pod, app, version', () => {
    const cfg = parse(scrapeConfig({ kubeconfig: '/k' }, 'http://127.0.0.1:1/targets')) as {
      global: { scrape_interval: string };
      scrape_configs: { http_sd_configs: { url: string }[]; relabel_configs: Record<string, unknown>[] }[];
    };
    expect(cfg.global.scrape_interval).toBe('1s');
    const job = cfg.scrape_configs[0]!;
    expect(job.http_sd_configs[0]!.url).toBe('http://127.0.0.1:1/targets');
    expect(job.relabel_configs.filter((r) => r.action === 'keep').map((r) => r.regex)).toEqual([
      'metrics',
      'Running',
      'demo-app',
    ]);
    expect(job.relabel_configs.map((r) => r.target_label).filter(Boolean)).toEqual([
      'namespace',
      'pod',
      'app',
      'version',
    ]);
  });
});

describe('gateway objects', () => {
  it('GIVEN a gateway instance THEN its GatewayClass is Traefik-controlled and labelled for its selector, and the listener uses the entry point port', () => {
    const [cls, gw] = gatewayObjects({
      namespace: 'ns',
      name: 'gw',
      className: 'sluice-ns-gw',
      port: 41000,
    }) as [
      { spec: { controllerName: string }; metadata: { labels: Record<string, string> } },
      { spec: { gatewayClassName: string; listeners: { port: number }[] } },
    ];
    expect(cls.spec.controllerName).toBe('traefik.io/gateway-controller');
    expect(cls.metadata.labels['sluice.dev/gateway-class']).toBe('sluice-ns-gw');
    expect(gw.spec.gatewayClassName).toBe('sluice-ns-gw');
    expect(gw.spec.listeners[0]!.port).toBe(41000);
  });

  it('GIVEN weights THEN the HTTPRoute carries them on its backendRefs, zero kept', () => {
    const route = weightedRoute('r', 'ns', { name: 'gw', namespace: 'ns' }, [
      ['primary', 100],
      ['canary', 0],
    ]) as unknown as { spec: { rules: { backendRefs: unknown[] }[] } };
    expect(route.spec.rules[0]!.backendRefs).toEqual([
      { name: 'primary', port: 80, weight: 100 },
      { name: 'canary', port: 80, weight: 0 },
    ]);
  });

  it('GIVEN a demo version THEN the Deployment runs the demo image at that tag with http and metrics ports', () => {
    const d = demoDeployment('web', 'v2-slow') as unknown as {
      spec: {
        template: {
          metadata: { labels: Record<string, string> };
          spec: { containers: { image: string; ports: { name: string }[] }[] };
        };
      };
    };
    expect(d.spec.template.metadata.labels).toEqual({ app: 'demo-app', release: 'web', version: 'v2-slow' });
    expect(d.spec.template.spec.containers[0]!.image).toBe('sluice.dev/demo-app:v2-slow');
    expect(d.spec.template.spec.containers[0]!.ports.map((p) => p.name)).toEqual(['http', 'metrics']);
  });
});
