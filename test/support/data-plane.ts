// The test bed's gateway: bin/traefik (built from its Go module by test/traefik/build.sh) run
// outside the cluster against one kube-local cluster, implementing the Gateway API. HTTPRoutes
// attached to the Gateway it serves route real requests, by backendRef weight, to the real
// pod processes behind each Service's EndpointSlices (test/cluster/podexec.go).
//
//   const gw = await startGateway({ kubeconfig, namespace: 'demo' });
//   apply an HTTPRoute with parentRefs: [{ name: gw.gatewayName, namespace: gw.namespace }]
//   fetch(gw.url) … ; await gw.stop();
//
// Each call gets its own GatewayClass (labelled, and selected by Traefik's labelSelector), so
// several gateways on one cluster never program each other's Gateways. Traefik matches a
// Gateway listener to the entry point with the same port, so the listener's port is the free
// loopback port the entry point listens on.
//
// No jest imports here.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { serverSideApply } from '../../src/kube/apply.js';
import { clusterClient, loadKubeConfig, type ClusterClient } from '../../src/kube/clients.js';
import { isNotFound } from '../../src/kube/errors.js';
import { installGatewayApiCrds } from './gateway-api.js';
import { REPO_ROOT } from './kube-local.mjs';
import { freePort } from './prometheus-basic.js';
import { startClusterPrometheus, type ClusterPrometheus } from './prometheus.js';

export const TRAEFIK_BIN = process.env.SLUICE_TRAEFIK_BIN ?? join(REPO_ROOT, 'bin', 'traefik');
/** The controllerName Traefik's Gateway provider handles. */
export const TRAEFIK_CONTROLLER = 'traefik.io/gateway-controller';
const FIELD_MANAGER = 'sluice-test-bed';

export interface GatewayOptions {
  /** Path of the cluster's kubeconfig (kube-local's DIR/<name>/kubeconfig). */
  kubeconfig: string;
  /** Namespace of the Gateway (created if missing). */
  namespace: string;
  /** Gateway name (default `gateway`); the GatewayClass is `sluice-<namespace>-<name>`. */
  name?: string;
  /** Namespaces Traefik watches (default: all). */
  watchNamespaces?: string[];
  /** Traefik's providers.providersThrottleDuration (default `100ms`): how soon route edits apply. */
  throttle?: string;
  /** Traefik's log level (default `WARN`). */
  logLevel?: string;
  timeoutMs?: number;
}

/** A running gateway. */
export interface Gateway {
  /** `http://127.0.0.1:<port>`: the Gateway's HTTP listener. */
  readonly url: string;
  readonly port: number;
  /** Traefik's own Prometheus metrics (`traefik_service_requests_total{code,service}` …). */
  readonly metricsUrl: string;
  readonly namespace: string;
  readonly gatewayName: string;
  readonly className: string;
  /** A parentRef for HTTPRoutes. */
  readonly parentRef: { name: string; namespace: string };
  /** Traefik's output so far (the last 20 kB). */
  log(): string;
  /** Deletes the Gateway and GatewayClass, stops Traefik. Idempotent. */
  stop(): Promise<void>;
}

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/** The GatewayClass and Gateway for one gateway instance. Pure. */
export function gatewayObjects(opts: {
  namespace: string;
  name: string;
  className: string;
  port: number;
}): KubernetesObject[] {
  return [
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'GatewayClass',
      metadata: { name: opts.className, labels: { 'sluice.dev/gateway-class': opts.className } },
      spec: { controllerName: TRAEFIK_CONTROLLER },
    } as KubernetesObject,
    {
      apiVersion: 'gateway.networking.k8s.io/v1',
      kind: 'Gateway',
      metadata: { name: opts.name, namespace: opts.namespace },
      spec: {
        gatewayClassName: opts.className,
        listeners: [
          {
            name: 'web',
            port: opts.port,
            protocol: 'HTTP',
            allowedRoutes: { namespaces: { from: 'All' } },
          },
        ],
      },
    } as KubernetesObject,
  ];
}

/**
 * Installs the Gateway API CRDs, creates this instance's GatewayClass and Gateway, starts
 * Traefik on free loopback ports and resolves once the Gateway is Programmed.
 */
export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  if (!existsSync(TRAEFIK_BIN))
    throw new Error(`${TRAEFIK_BIN} is missing: run "make traefik" (test/traefik/build.sh) first`);
  const timeoutMs = opts.timeoutMs ?? 60_000;
  const name = opts.name ?? 'gateway';
  const className = `sluice-${opts.namespace}-${name}`.slice(0, 63).replace(/-+$/, '');
  const client = clusterClient(`gateway-${opts.namespace}`, loadKubeConfig({ kubeconfig: opts.kubeconfig }));
  await installGatewayApiCrds(client);
  await serverSideApply(
    client,
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: opts.namespace } },
    { fieldManager: FIELD_MANAGER },
  );
  const [port, adminPort] = [await freePort(), await freePort()];
  const objects = gatewayObjects({ namespace: opts.namespace, name, className, port });
  for (const obj of objects) await serverSideApply(client, obj, { fieldManager: FIELD_MANAGER, force: true });

  const args = [
    '--global.checkNewVersion=false',
    '--global.sendAnonymousUsage=false',
    `--log.level=${opts.logLevel ?? 'WARN'}`,
    '--log.nocolor=true',
    `--entryPoints.web.address=127.0.0.1:${port}`,
    `--entryPoints.traefik.address=127.0.0.1:${adminPort}`,
    // Tests stop and start gateways often: no graceful drain.
    '--entryPoints.web.transport.lifeCycle.graceTimeOut=0s',
    '--entryPoints.traefik.transport.lifeCycle.graceTimeOut=0s',
    '--ping=true',
    '--metrics.prometheus=true',
    `--providers.providersThrottleDuration=${opts.throttle ?? '100ms'}`,
    '--providers.kubernetesgateway=true',
    `--providers.kubernetesgateway.labelselector=sluice.dev/gateway-class=${className}`,
    '--providers.kubernetesgateway.statusaddress.ip=127.0.0.1',
  ];
  if (opts.watchNamespaces?.length)
    args.push(`--providers.kubernetesgateway.namespaces=${opts.watchNamespaces.join(',')}`);
  let output = '';
  const child = spawn(TRAEFIK_BIN, args, {
    env: { ...process.env, KUBECONFIG: opts.kubeconfig },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let stopped = false;

  const gw: Gateway = {
    url: `http://127.0.0.1:${port}`,
    port,
    metricsUrl: `http://127.0.0.1:${adminPort}/metrics`,
    namespace: opts.namespace,
    gatewayName: name,
    className,
    parentRef: { name, namespace: opts.namespace },
    log: () => output,
    async stop() {
      if (stopped) return;
      stopped = true;
      for (const obj of [...objects].reverse()) {
        try {
          await client.raw.deleteRaw(obj);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
    },
  };

  try {
    await waitProgrammed(client, gw, child, timeoutMs);
  } catch (err) {
    await gw.stop().catch(() => undefined);
    throw err;
  }
  return gw;
}

/** Waits for Traefik's /ping and for the Gateway's Programmed=True condition. */
async function waitProgrammed(
  client: ClusterClient,
  gw: Gateway,
  child: { exitCode: number | null; signalCode: NodeJS.Signals | null },
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'not started';
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`traefik exited (${child.exitCode ?? child.signalCode}):\n${gw.log()}`);
    try {
      const ping = await fetch(gw.metricsUrl.replace('/metrics', '/ping'), {
        signal: AbortSignal.timeout(1000),
      });
      if (ping.ok) {
        const live = await client.raw.getRaw<KubernetesObject & { status?: { conditions?: Condition[] } }>({
          apiVersion: 'gateway.networking.k8s.io/v1',
          kind: 'Gateway',
          metadata: { name: gw.gatewayName, namespace: gw.namespace },
        });
        const programmed = live.status?.conditions?.find((c) => c.type === 'Programmed');
        if (programmed?.status === 'True') return;
        last = programmed
          ? `Programmed=${programmed.status} (${programmed.reason}: ${programmed.message})`
          : 'no Programmed condition yet';
      } else last = `/ping answered ${ping.status}`;
    } catch (err) {
      last = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline)
      throw new Error(
        `gateway ${gw.namespace}/${gw.gatewayName} not ready within ${timeoutMs} ms: ${last}\n${gw.log()}`,
      );
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** The image kube-local runs as a real process (test/demo-app/server.mjs); the tag is the version. */
export const DEMO_IMAGE = 'sluice.dev/demo-app';

/**
 * A Deployment of the demo app at `version` (e.g. `v1`, `v2-erroring`, `v3-slow`): pod labels
 * `app: demo-app`, `version`, and `release: <name>`; ports `http` 8080 (readiness /healthz)
 * and `metrics` 9464 (what test/support/prometheus.ts scrapes). Pure.
 */
export function demoDeployment(
  name: string,
  version: string,
  opts: { namespace?: string; replicas?: number } = {},
): KubernetesObject {
  const labels = { app: 'demo-app', release: name, version };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, ...(opts.namespace ? { namespace: opts.namespace } : {}), labels },
    spec: {
      replicas: opts.replicas ?? 1,
      selector: { matchLabels: { app: 'demo-app', release: name } },
      template: {
        metadata: { labels },
        spec: {
          containers: [
            {
              name: 'app',
              image: `${DEMO_IMAGE}:${version}`,
              ports: [
                { name: 'http', containerPort: 8080 },
                { name: 'metrics', containerPort: 9464 },
              ],
              readinessProbe: { httpGet: { path: '/healthz', port: 'http' }, periodSeconds: 1 },
            },
          ],
        },
      },
    },
  } as KubernetesObject;
}

/** A Service `name` on port 80 (named `http`) selecting the pods of `demoDeployment(release)`. Pure. */
export function demoService(
  name: string,
  release: string,
  opts: { namespace?: string } = {},
): KubernetesObject {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, ...(opts.namespace ? { namespace: opts.namespace } : {}) },
    spec: {
      selector: { app: 'demo-app', release },
      ports: [{ name: 'http', port: 80, targetPort: 'http' }],
    },
  } as KubernetesObject;
}

/** An HTTPRoute on `gw` splitting `/` between Services by weight (`[[service, weight], …]`). Pure. */
export function weightedRoute(
  name: string,
  namespace: string,
  parentRef: { name: string; namespace: string },
  backends: [service: string, weight: number][],
): KubernetesObject {
  return {
    apiVersion: 'gateway.networking.k8s.io/v1',
    kind: 'HTTPRoute',
    metadata: { name, namespace },
    spec: {
      parentRefs: [parentRef],
      rules: [
        {
          matches: [{ path: { type: 'PathPrefix', value: '/' } }],
          backendRefs: backends.map(([svc, weight]) => ({ name: svc, port: 80, weight })),
        },
      ],
    },
  } as KubernetesObject;
}

/** A gateway and a Prometheus for one cluster: what a canary test or the demo needs. */
export interface DataPlane {
  readonly gateway: Gateway;
  readonly prometheus: ClusterPrometheus;
  /** Stops both (the cluster's workloads stay). */
  stop(): Promise<void>;
}

/**
 * Starts {@link startGateway} and {@link startClusterPrometheus} for one cluster together.
 * `namespaces` limits what both watch (default: all).
 */
export async function startDataPlane(opts: {
  kubeconfig: string;
  namespace: string;
  namespaces?: string[];
}): Promise<DataPlane> {
  const [gw, prom] = await Promise.allSettled([
    startGateway({
      kubeconfig: opts.kubeconfig,
      namespace: opts.namespace,
      watchNamespaces: opts.namespaces,
    }),
    startClusterPrometheus({ kubeconfig: opts.kubeconfig, namespaces: opts.namespaces }),
  ]);
  if (gw.status === 'rejected' || prom.status === 'rejected') {
    if (gw.status === 'fulfilled') await gw.value.stop();
    if (prom.status === 'fulfilled') await prom.value.stop();
    throw gw.status === 'rejected' ? gw.reason : (prom as PromiseRejectedResult).reason;
  }
  return {
    gateway: gw.value,
    prometheus: prom.value,
    async stop() {
      await Promise.all([gw.value.stop(), prom.value.stop()]);
    },
  };
}
