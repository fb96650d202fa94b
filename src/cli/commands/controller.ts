import { hostname, tmpdir } from 'node:os';
import { collectDefaultMetrics } from 'prom-client';
import { join } from 'node:path';
import { registerSourceControllers } from '../../git/register.js';
import { kubectlKustomize } from '../../delivery/kustomize.js';
import { registerDeliveryControllers } from '../../delivery/register.js';
import { createLogger, parseLogLevel } from '../../log.js';
import { Manager } from '../../kube/manager.js';
import { registerPlacementControllers } from '../../placement/register.js';
import { registerRolloutControllers } from '../../rollout/register.js';
import { Notifier } from '../../notify/notifier.js';
import { notifyFlag, notifyFlagUsage, parseNotifyFlags } from '../../notify/flags.js';
import { HttpServer, parseListenAddress } from '../../server/http.js';
import { parseCommandArgs, parseDurationFlag, UsageError } from '../usage.js';
import type { Command } from './command.js';
import { FeatureGateError, FeatureGates } from '../../features.js';
import { parseWebhookFlags, startWebhooks, webhookFlags, webhookFlagsUsage } from './webhook-flags.js';
import { hubClient, kubeFlags, kubeFlagsUsage } from './kube-flags.js';

const usage = `Usage: sluice controller [flags]

Runs the Sluice controllers against the hub cluster of the kubeconfig. With leader
election (the default) several replicas may run; only the holder of the Lease reconciles.

Flags:
${kubeFlagsUsage}  --metrics-bind-address ADDR      where /metrics is served (default :8080; 0 disables)
  --health-probe-bind-address ADDR where /healthz and /readyz are served (default :8081)
  --leader-elect[=true|false]      campaign for the Lease before reconciling (default true)
  --leader-election-namespace NS   namespace of the Lease (default $POD_NAMESPACE or default)
  --leader-election-id NAME        name of the Lease (default sluice-controller-leader)
  --lease-duration DURATION        how long a Lease is held without renewal (default 15s)
  --cluster-probe-interval D       how often each Cluster is probed (default 30s)
  --storage-path DIR               where fetched Git artifacts are kept (default $TMPDIR/sluice)
  --webhook-bind-address ADDR      where Git push webhooks are received, POST /hooks/<ns>/<name>
                                   (default :9292; 0 disables)
  --placement-debounce D           how long a placed Cluster may fail clusterConditions before
                                   it loses its placement (default 30s)
  --log-level LEVEL                error, warn, info or debug (default info)
  --feature-gates NAME=BOOL,...    switch features (sluice version --features lists them)
${notifyFlagUsage}${webhookFlagsUsage}`;

/** `--leader-elect=false` → `--no-leader-elect` (node:util has no negated booleans on Node 20). */
function normaliseBooleans(argv: string[]): string[] {
  return argv.map((a) => {
    const m = /^--leader-elect=(.*)$/.exec(a);
    if (!m) return a;
    if (m[1] === 'true') return '--leader-elect';
    if (m[1] === 'false') return '--no-leader-elect';
    throw new UsageError(`--leader-elect must be true or false, got "${m[1]}"`, usage);
  });
}

export const controllerCommand: Command = {
  name: 'controller',
  summary: 'Run the controllers (the manager) against a hub cluster',
  async run(argv) {
    const { values } = parseCommandArgs(
      normaliseBooleans(argv),
      {
        ...kubeFlags,
        'metrics-bind-address': { type: 'string', default: ':8080' },
        'health-probe-bind-address': { type: 'string', default: ':8081' },
        'leader-elect': { type: 'boolean' },
        'no-leader-elect': { type: 'boolean' },
        'leader-election-namespace': { type: 'string' },
        'leader-election-id': { type: 'string', default: 'sluice-controller-leader' },
        'lease-duration': { type: 'string', default: '15s' },
        'cluster-probe-interval': { type: 'string', default: '30s' },
        'placement-debounce': { type: 'string', default: '30s' },
        'storage-path': { type: 'string', default: join(tmpdir(), 'sluice') },
        'webhook-bind-address': { type: 'string', default: ':9292' },
        'log-level': { type: 'string', default: 'info' },
        'feature-gates': { type: 'string', default: '' },
        ...webhookFlags,
        ...notifyFlag,
      },
      usage,
    );
    let notifyTargets;
    try {
      notifyTargets = parseNotifyFlags(values.notify);
    } catch (err) {
      throw new UsageError((err as Error).message, usage);
    }
    let level;
    try {
      level = parseLogLevel(values['log-level']);
    } catch (err) {
      throw new UsageError((err as Error).message, usage);
    }
    const addresses: Record<string, string> = {
      'metrics-bind-address': values['metrics-bind-address'],
      'health-probe-bind-address': values['health-probe-bind-address'],
      'webhook-bind-address': values['webhook-bind-address'],
    };
    for (const [flag, addr] of Object.entries(addresses)) {
      if (addr === '0') continue;
      try {
        parseListenAddress(addr);
      } catch (err) {
        throw new UsageError(`--${flag}: ${(err as Error).message}`, usage);
      }
    }
    const leaseMs = parseDurationFlag('lease-duration', values['lease-duration'], usage);
    const probeIntervalMs = parseDurationFlag(
      'cluster-probe-interval',
      values['cluster-probe-interval'],
      usage,
    );
    const placementDebounceMs = parseDurationFlag('placement-debounce', values['placement-debounce'], usage);
    const leaderElect = !values['no-leader-elect'];
    let gates: FeatureGates;
    try {
      gates = FeatureGates.parse(values['feature-gates']);
    } catch (err) {
      if (err instanceof FeatureGateError) throw new UsageError(`--feature-gates: ${err.message}`, usage);
      throw err;
    }
    const webhookSettings = parseWebhookFlags(values, usage);

    const logger = createLogger({ level });
    const notifier = new Notifier(notifyTargets, { logger: logger.child({ component: 'notifier' }) });
    const client = hubClient(values);
    const identity = `${hostname()}_${process.pid}`;
    let exiting = false;
    const manager = new Manager({
      client,
      logger,
      leaderElection: leaderElect
        ? {
            namespace: values['leader-election-namespace'] ?? (process.env.POD_NAMESPACE || 'default'),
            name: values['leader-election-id'],
            identity,
            leaseDurationSeconds: Math.max(1, Math.round(leaseMs / 1000)),
            renewDeadlineSeconds: Math.max(1, Math.round((leaseMs * 2) / 3000)),
            retryPeriodSeconds: Math.max(1, Math.round(leaseMs / 7500)),
          }
        : false,
      // As controller-runtime: a replica that lost its Lease exits and is restarted fresh.
      onLeadershipLost: () => {
        if (!exiting) process.exit(1);
      },
    });
    // process_* and nodejs_* (RSS, heap, event-loop lag), as controller-runtime exposes process_* and go_*.
    collectDefaultMetrics({ register: manager.registry });
    const { members } = registerPlacementControllers(manager, { probeIntervalMs, placementDebounceMs });
    const webhookAddr = addresses['webhook-bind-address']!;
    // Receivers run on every replica: a push only sets an annotation the leader acts on.
    const receiver =
      webhookAddr === '0'
        ? undefined
        : new HttpServer({ registry: manager.registry, ready: () => manager.ready(), logger });
    const { artifacts } = registerSourceControllers(manager, {
      storagePath: values['storage-path'],
      receiver,
    });
    const { deliveries } = registerDeliveryControllers(manager, {
      members,
      artifacts,
      kustomize: kubectlKustomize(),
    });
    registerRolloutControllers(manager, {
      members,
      deliveries,
      storagePath: values['storage-path'],
      notifier,
      features: gates,
    });

    const servers: Array<Pick<HttpServer, 'close'>> = [];
    const metricsAddr = addresses['metrics-bind-address']!;
    const healthAddr = addresses['health-probe-bind-address']!;
    const health = new HttpServer({ registry: manager.registry, ready: () => manager.ready(), logger });
    if (healthAddr !== '0') servers.push(health);
    const port = healthAddr !== '0' ? await health.listen(healthAddr) : undefined;
    let metricsPort = port;
    if (metricsAddr !== '0' && metricsAddr !== healthAddr) {
      const metrics = new HttpServer({ registry: manager.registry, ready: () => manager.ready(), logger });
      metricsPort = await metrics.listen(metricsAddr);
      servers.push(metrics);
    }
    const webhookPort = receiver ? await receiver.listen(webhookAddr) : undefined;
    if (receiver) servers.push(receiver);
    // Conversion and admission webhooks (HTTPS), only with --webhook-port; StorageMigration after them.
    const webhooks = await startWebhooks(webhookSettings, { client, gates, logger });
    if (webhooks) servers.push(webhooks);
    logger.info('controller starting', {
      identity,
      leaderElect,
      healthPort: port,
      metricsPort,
      webhookPort,
      admissionWebhookPort: webhooks?.port,
      featureGates: Object.fromEntries(gates.list().map((g) => [g.name, g.enabled])),
      storagePath: values['storage-path'],
      hub: client.kubeConfig.getCurrentCluster()?.server,
    });

    const done = new Promise<number>((resolve) => {
      const shutdown = (signal: string) => {
        if (exiting) return;
        exiting = true;
        logger.info('shutting down', { signal });
        void manager
          .stop()
          .then(() => Promise.all(servers.map((s) => s.close())))
          .then(
            () => resolve(0),
            (err: unknown) => {
              logger.error('shutdown failed', { error: String(err) });
              resolve(1);
            },
          );
      };
      process.once('SIGTERM', () => shutdown('SIGTERM'));
      process.once('SIGINT', () => shutdown('SIGINT'));
    });
    await manager.start();
    logger.info('caches synced', { leader: manager.isLeader });
    return done;
  },
};
