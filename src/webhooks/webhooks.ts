/**
 * The webhooks as the controller runs them: the HTTPS server, its certificate (generated, or
 * read from a Secret), the caBundle published to the apiserver, and rotation.
 *
 * Rotation without dropping a request, in this order:
 *   1. publish a caBundle holding the old CA *and* the new one;
 *   2. wait `propagationMs` for the apiserver to load it;
 *   3. swap the server's certificate in place (`setSecureContext`): new handshakes get the
 *      new certificate, open connections keep theirs;
 *   4. after `overlapMs`, publish a caBundle with the new CA only.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { validateCanaryRelease, validateCanaryReleaseV1alpha1, validateDelivery } from '../api/validation.js';
import type { FeatureGates } from '../features.js';
import type { ClusterClient } from '../kube/clients.js';
import { normalizeKubeError } from '../kube/errors.js';
import { silentLogger, type Logger } from '../log.js';
import {
  caBundleOf,
  certificateValidity,
  createServingMaterial,
  pemBlocks,
  rotationDue,
  type KeyPair,
  type ServingHosts,
} from './certs.js';
import type { ConversionOptions } from './conversion.js';
import {
  registerConversionWebhook,
  registerValidatingWebhooks,
  type WebhookEndpoint,
} from './registration.js';
import { WEBHOOK_PATHS, WebhookServer, type AdmissionValidator } from './server.js';

/** Where the serving certificate comes from. */
export type CertificateSource =
  /** Sluice makes a CA and a certificate and rotates both after two thirds of `validityMs`. */
  | { kind: 'generated'; validityMs: number }
  /**
   * A `kubernetes.io/tls` Secret with `tls.crt`, `tls.key` and `ca.crt` (cert-manager's
   * layout), re-read every `pollMs`; a changed certificate is rotated in as above.
   */
  | { kind: 'secret'; namespace: string; name: string; pollMs: number };

export interface WebhooksOptions {
  client: ClusterClient;
  gates: FeatureGates;
  /** Listen host (undefined: all interfaces) and port (0: a free one). */
  host: string | undefined;
  port: number;
  /** How the apiserver reaches the server, given the port it listens on. */
  endpoint: (port: number) => WebhookEndpoint;
  hosts: ServingHosts;
  certificate: CertificateSource;
  conversion: ConversionOptions;
  /** Time for the apiserver to load a new caBundle before the certificate is swapped (default 2 s). */
  propagationMs?: number;
  /** How long the old CA stays trusted after a swap (default 60 s). */
  overlapMs?: number;
  logger?: Logger;
}

/** What is served and trusted. `caKey` only for a generated CA (it cross-signs the next one). */
interface Material {
  ca: string;
  caKey?: string;
  serving: KeyPair;
  /** The serving certificate with the new CA cross-signed by the previous one, during a rotation. */
  chain?: string;
  notBefore: Date;
  notAfter: Date;
}

/** Node's setTimeout limit (~24.8 days); longer waits are re-armed. */
const MAX_TIMER = 2 ** 31 - 1;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The running webhooks. */
export class Webhooks {
  readonly #opts: WebhooksOptions;
  readonly #logger: Logger;
  #server: WebhookServer | undefined;
  #port = 0;
  /** CAs the apiserver is told to trust, oldest first. */
  #trusted: string[] = [];
  #current: Material | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #rotating: Promise<void> | undefined;
  /** Rotations completed, for logs and tests. */
  rotations = 0;

  private constructor(opts: WebhooksOptions) {
    this.#opts = opts;
    this.#logger = opts.logger ?? silentLogger();
  }

  /** Starts the server, publishes the caBundle, and schedules rotation; resolves when the apiserver can call it. */
  static async start(opts: WebhooksOptions): Promise<Webhooks> {
    const w = new Webhooks(opts);
    await w.#start();
    return w;
  }

  get port(): number {
    return this.#port;
  }

  /** The PEM of the CA(s) currently published. */
  get trustedCas(): readonly string[] {
    return this.#trusted;
  }

  /** The certificate being served. */
  get servingCertificate(): string {
    return this.#current!.serving.certPem;
  }

  async #start(): Promise<void> {
    const material = await this.#load();
    this.#current = material;
    this.#server = new WebhookServer({
      tls: material.serving,
      conversion: this.#opts.gates.enabled('ConversionWebhook') ? this.#opts.conversion : undefined,
      validators: this.#opts.gates.enabled('AdmissionWebhook') ? this.#validators() : undefined,
      logger: this.#logger,
    });
    this.#port = await this.#server.listen(this.#opts.host, this.#opts.port);
    this.#trusted = [material.ca];
    try {
      await this.#publish();
    } catch (err) {
      await this.#server.close();
      throw err;
    }
    this.#schedule();
    this.#logger.info('webhooks serving', {
      port: this.#port,
      conversion: this.#opts.gates.enabled('ConversionWebhook'),
      admission: this.#opts.gates.enabled('AdmissionWebhook'),
      certificateNotAfter: material.notAfter.toISOString(),
    });
  }

  /** Rotates now (what the timer does); concurrent calls share one rotation. */
  rotate(): Promise<void> {
    this.#rotating ??= this.#rotate().finally(() => (this.#rotating = undefined));
    return this.#rotating;
  }

  async #rotate(): Promise<void> {
    const next = await this.#load();
    if (this.#current && next.serving.certPem === this.#current.serving.certPem) return;
    const old = this.#current!;
    this.#trusted = [...new Set([...this.#trusted, next.ca])];
    await this.#publish();
    // A generated certificate comes with a chain the old CA verifies too: no wait needed for
    // correctness, only to let the bundle settle. A Secret's certificate has no such chain.
    await sleep(this.#opts.propagationMs ?? 2_000);
    if (this.#stopped) return;
    this.#server!.setCertificate(
      next.chain ? { certPem: next.chain, keyPem: next.serving.keyPem } : next.serving,
    );
    this.#current = next;
    this.rotations++;
    this.#logger.info('webhook certificate rotated', {
      notAfter: next.notAfter.toISOString(),
      previousNotAfter: old.notAfter.toISOString(),
    });
    this.#schedule();
    setTimeout(() => {
      if (this.#stopped || this.#current !== next) return;
      this.#trusted = [next.ca];
      this.#publish()
        .then(() => {
          // Every client trusts the new CA now: the cross-signed intermediate can go.
          if (!this.#stopped && this.#current === next) this.#server!.setCertificate(next.serving);
        })
        .catch((err: unknown) =>
          this.#logger.warn('dropping the old webhook CA failed; retried at the next rotation', {
            error: String(err),
          }),
        );
    }, this.#opts.overlapMs ?? 60_000).unref();
  }

  #schedule(): void {
    clearTimeout(this.#timer);
    if (this.#stopped) return;
    const src = this.#opts.certificate;
    const due =
      src.kind === 'secret'
        ? Date.now() + src.pollMs
        : rotationDue(this.#current!.notBefore, this.#current!.notAfter).getTime();
    const wait = Math.max(0, due - Date.now());
    this.#timer = setTimeout(
      () => {
        if (wait > MAX_TIMER) return this.#schedule();
        this.rotate().catch((err: unknown) => {
          // Retry soon: the current certificate is still valid for a third of its life.
          this.#logger.error('webhook certificate rotation failed', { error: String(err) });
          this.#timer = setTimeout(() => void this.rotate().catch(() => undefined), 10_000).unref();
        });
      },
      Math.min(wait, MAX_TIMER),
    );
    this.#timer.unref();
  }

  async #load(): Promise<Material> {
    const src = this.#opts.certificate;
    if (src.kind === 'generated') {
      const prev = this.#current?.caKey
        ? { certPem: this.#current.ca, keyPem: this.#current.caKey }
        : undefined;
      const m = createServingMaterial(this.#opts.hosts, src.validityMs, new Date(), prev);
      return {
        ca: m.ca.certPem,
        caKey: m.ca.keyPem,
        serving: m.serving,
        chain: m.servingChainPem,
        notBefore: m.notBefore,
        notAfter: m.notAfter,
      };
    }
    let secret: { data?: Record<string, string> };
    try {
      secret = await this.#opts.client.raw.getRaw<KubernetesObject & { data?: Record<string, string> }>({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { namespace: src.namespace, name: src.name },
      });
    } catch (err) {
      throw normalizeKubeError(err, `read webhook certificate Secret ${src.namespace}/${src.name}`);
    }
    const get = (k: string) => {
      const v = secret.data?.[k];
      if (!v)
        throw new Error(`Secret ${src.namespace}/${src.name} has no ${k} (want tls.crt, tls.key, ca.crt)`);
      return Buffer.from(v, 'base64').toString('utf8');
    };
    const serving = { certPem: get('tls.crt'), keyPem: get('tls.key') };
    const ca = pemBlocks(get('ca.crt')).join('');
    return { ca, serving, ...certificateValidity(serving.certPem) };
  }

  /**
   * Writes the current caBundle and client config again, e.g. after the CRD was replaced by an
   * install that does not carry them.
   */
  publish(): Promise<void> {
    return this.#publish();
  }

  async #publish(): Promise<void> {
    const bundle = caBundleOf(this.#trusted);
    const endpoint = this.#opts.endpoint(this.#port);
    if (this.#opts.gates.enabled('ConversionWebhook'))
      await registerConversionWebhook(this.#opts.client, endpoint, bundle);
    if (this.#opts.gates.enabled('AdmissionWebhook'))
      await registerValidatingWebhooks(this.#opts.client, endpoint, bundle);
  }

  #validators(): Record<string, AdmissionValidator> {
    const client = this.#opts.client;
    const features = this.#opts.gates;
    const templateNames = async (namespace: string | undefined): Promise<Set<string> | undefined> => {
      if (!namespace) return undefined;
      try {
        const list = await client.raw.listRaw('sluice.dev/v1', 'MetricTemplate', { namespace });
        return new Set(list.items.map((t) => t.metadata?.name ?? ''));
      } catch (err) {
        // Unknown is not "missing": skip the reference check rather than refuse a valid release.
        this.#logger.warn('cannot list MetricTemplates; templateRef not checked', {
          namespace,
          error: normalizeKubeError(err).message,
        });
        return undefined;
      }
    };
    return {
      [WEBHOOK_PATHS.canaryReleases]: async (req) =>
        req.kind.version === 'v1alpha1'
          ? validateCanaryReleaseV1alpha1(req.object)
          : validateCanaryRelease(req.object, {
              metricTemplates: await templateNames(req.namespace),
              features,
            }),
      [WEBHOOK_PATHS.deliveries]: (req) => Promise.resolve(validateDelivery(req.object, { features })),
    };
  }

  /** Stops rotation and the server. The registrations stay (other replicas serve them). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#rotating?.catch(() => undefined);
    await this.#server?.close();
  }
}
