/**
 * The controller's webhook flags and what they start: the HTTPS conversion and admission
 * webhooks (src/webhooks/) and, behind the StorageMigration gate, the storage migration.
 * Kept out of controller.ts so that file only wires.
 */
import { kindInfo } from '../../api/crds.js';
import { migrateStorage } from '../../api/storage-migration.js';
import type { FeatureGates } from '../../features.js';
import type { ClusterClient } from '../../kube/clients.js';
import type { Logger } from '../../log.js';
import { DEFAULT_V1ALPHA1_PROMETHEUS } from '../../webhooks/conversion.js';
import type { WebhookEndpoint } from '../../webhooks/registration.js';
import { Webhooks, type CertificateSource, type WebhooksOptions } from '../../webhooks/webhooks.js';
import { parseDurationFlag, UsageError } from '../usage.js';

export const webhookFlags = {
  'webhook-port': { type: 'string' },
  'webhook-host': { type: 'string' },
  'webhook-service': { type: 'string' },
  'webhook-cert-secret': { type: 'string' },
  'webhook-cert-validity': { type: 'string', default: '8760h' },
  'webhook-ca-propagation': { type: 'string', default: '2s' },
  'v1alpha1-prometheus-address': { type: 'string', default: DEFAULT_V1ALPHA1_PROMETHEUS },
} as const;

export const webhookFlagsUsage = `  --webhook-port PORT              serve the conversion and admission webhooks (HTTPS) on PORT
                                   (0: a free port); unset: no webhooks
  --webhook-host HOST              listen host; also the URL host the apiserver calls when
                                   --webhook-service is unset (default 127.0.0.1)
  --webhook-service NS/NAME[:PORT] in cluster: the Service the apiserver calls (port 443)
  --webhook-cert-secret NS/NAME    serve the kubernetes.io/tls Secret's tls.crt/tls.key and
                                   trust its ca.crt (re-read every minute); unset: Sluice makes
                                   a CA and a certificate and rotates them
  --webhook-cert-validity D        lifetime of a generated certificate (default 8760h); it is
                                   rotated after two thirds of it
  --webhook-ca-propagation D       wait between publishing a new caBundle and serving the new
                                   certificate (default 2s)
  --v1alpha1-prometheus-address U  Prometheus of v1alpha1 CanaryReleases without a v1 spec
                                   (default ${DEFAULT_V1ALPHA1_PROMETHEUS})
`;

type Values = { [K in keyof typeof webhookFlags]?: string };

function nsName(
  flag: string,
  value: string,
  usage: string,
): { namespace: string; name: string; port?: number } {
  const m = /^([a-z0-9-]+)\/([a-z0-9.-]+)(?::(\d+))?$/.exec(value);
  if (!m) throw new UsageError(`--${flag} must be NAMESPACE/NAME, got "${value}"`, usage);
  return { namespace: m[1]!, name: m[2]!, ...(m[3] ? { port: Number(m[3]) } : {}) };
}

/** The webhook settings from the flags, checked; `undefined` when `--webhook-port` is unset. */
export type WebhookSettings = Omit<WebhooksOptions, 'client' | 'gates' | 'logger'>;

/** Checks the webhook flags (a mistake is a `UsageError`, exit 2) before anything connects. */
export function parseWebhookFlags(values: Values, usage: string): WebhookSettings | undefined {
  if (values['webhook-port'] === undefined) return undefined;
  const port = Number(values['webhook-port']);
  if (!/^[0-9]+$/.test(values['webhook-port']) || port > 65535)
    throw new UsageError(
      `--webhook-port must be a port number (0-65535), got "${values['webhook-port']}"`,
      usage,
    );
  const service = values['webhook-service']
    ? nsName('webhook-service', values['webhook-service'], usage)
    : undefined;
  const host = values['webhook-host'] ?? (service ? undefined : '127.0.0.1');
  const certificate: CertificateSource = values['webhook-cert-secret']
    ? {
        kind: 'secret',
        ...nsName('webhook-cert-secret', values['webhook-cert-secret'], usage),
        pollMs: 60_000,
      }
    : {
        kind: 'generated',
        validityMs: parseDurationFlag(
          'webhook-cert-validity',
          values['webhook-cert-validity'] ?? '8760h',
          usage,
        ),
      };
  const urlHost = host && host !== '0.0.0.0' && host !== '::' ? host : '127.0.0.1';
  const prometheusAddress = values['v1alpha1-prometheus-address'] ?? DEFAULT_V1ALPHA1_PROMETHEUS;
  if (!/^https?:\/\/\S+$/.test(prometheusAddress))
    throw new UsageError(
      `--v1alpha1-prometheus-address must be an http(s) URL, got "${prometheusAddress}"`,
      usage,
    );
  return {
    host,
    port,
    endpoint: (p: number): WebhookEndpoint =>
      service
        ? { service: { namespace: service.namespace, name: service.name, port: service.port ?? 443 } }
        : { url: `https://${urlHost.includes(':') ? `[${urlHost}]` : urlHost}:${p}` },
    hosts: {
      dnsNames: service
        ? [
            `${service.name}.${service.namespace}.svc`,
            `${service.name}.${service.namespace}.svc.cluster.local`,
          ]
        : ['localhost'],
      ipAddresses: /^[0-9.]+$/.test(urlHost) ? [urlHost] : ['127.0.0.1'],
    },
    certificate,
    conversion: { prometheusAddress },
    propagationMs: parseDurationFlag(
      'webhook-ca-propagation',
      values['webhook-ca-propagation'] ?? '2s',
      usage,
    ),
  };
}

/**
 * Starts the webhooks (when configured), then — StorageMigration gate — migrates CanaryRelease
 * storage: the migration reads v1alpha1-stored objects through the conversion webhook, so it
 * must come after. A failed migration is logged, not fatal: it is retried at the next start,
 * and nothing is lost while storedVersions still lists v1alpha1.
 */
export async function startWebhooks(
  settings: WebhookSettings | undefined,
  ctx: { client: ClusterClient; gates: FeatureGates; logger: Logger },
): Promise<(Webhooks & { close(): Promise<void> }) | undefined> {
  if (!settings) {
    if (ctx.gates.enabled('StorageMigration'))
      ctx.logger.warn('StorageMigration needs the conversion webhook (--webhook-port); not migrating');
    return undefined;
  }
  const webhooks = await Webhooks.start({
    ...settings,
    client: ctx.client,
    gates: ctx.gates,
    logger: ctx.logger,
  });
  if (ctx.gates.enabled('StorageMigration')) {
    try {
      await migrateStorage(ctx.client, kindInfo('CanaryRelease').crdName, { logger: ctx.logger });
    } catch (err) {
      ctx.logger.error('storage migration failed; retried at the next start', { error: String(err) });
    }
  }
  return Object.assign(webhooks, { close: () => webhooks.stop() });
}
