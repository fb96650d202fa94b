/**
 * The HTTPS server the apiserver calls: `POST /convert` (ConversionReview), `POST
 * /validate/canaryreleases` and `POST /validate/deliveries` (AdmissionReview). Its certificate
 * can be swapped while it runs (`setCertificate`): connections already open keep their
 * session, new handshakes get the new certificate, so a rotation drops no request.
 */
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSecureContext } from 'node:tls';
import { silentLogger, type Logger } from '../log.js';
import type { FieldError } from '../placement/field-error.js';
import type { KeyPair } from './certs.js';
import type { ConversionOptions } from './conversion.js';
import {
  admissionRequest,
  admissionResponse,
  handleConversionReview,
  MalformedReviewError,
  type AdmissionRequest,
} from './reviews.js';

/** Paths the webhook configurations point at. */
export const WEBHOOK_PATHS = {
  convert: '/convert',
  canaryReleases: '/validate/canaryreleases',
  deliveries: '/validate/deliveries',
} as const;

/** Checks one admission request; resolves with the field errors (none: allowed). */
export type AdmissionValidator = (req: AdmissionRequest) => Promise<FieldError[]>;

export interface WebhookServerOptions {
  tls: KeyPair;
  /** Serve `/convert` (the ConversionWebhook gate); unset: 404. */
  conversion?: ConversionOptions;
  /** Validators by path (the AdmissionWebhook gate); a path without one answers 404. */
  validators?: Partial<Record<(typeof WEBHOOK_PATHS)['canaryReleases' | 'deliveries'], AdmissionValidator>>;
  logger?: Logger;
}

/** The apiserver sends at most 3 MiB objects; a bigger body is not a review. */
const MAX_BODY = 6 * 1024 * 1024;

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body + '\n' : JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new MalformedReviewError(`body larger than ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new MalformedReviewError(`body is not JSON: ${(err as Error).message}`);
  }
}

/** The webhook HTTPS server. */
export class WebhookServer {
  readonly #server: Server;
  readonly #logger: Logger;
  readonly #opts: WebhookServerOptions;

  constructor(opts: WebhookServerOptions) {
    this.#opts = opts;
    this.#logger = opts.logger ?? silentLogger();
    this.#server = createServer({ key: opts.tls.keyPem, cert: opts.tls.certPem }, (req, res) => {
      void this.#handle(req, res);
    });
    // The apiserver keeps connections alive; a short keep-alive would make it re-handshake often.
    this.#server.keepAliveTimeout = 60_000;
  }

  /** Replaces the serving certificate for new TLS handshakes. */
  setCertificate(tls: KeyPair): void {
    // Validate first: setSecureContext on a bad key would leave the server unable to handshake.
    createSecureContext({ key: tls.keyPem, cert: tls.certPem });
    this.#server.setSecureContext({ key: tls.keyPem, cert: tls.certPem });
  }

  /** Listens on `host:port` (0: a free port) and resolves with the port. */
  listen(host: string | undefined, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(port, host, () => {
        this.#server.off('error', reject);
        resolve((this.#server.address() as AddressInfo).port);
      });
    });
  }

  /**
   * Stops accepting, closes idle connections, and gives requests in flight `graceMs` to finish
   * before closing what is left: the apiserver keeps connections open for reuse, and waiting
   * for it to close them could take minutes.
   */
  close(graceMs = 2_000): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.#server.closeAllConnections(), graceMs);
      this.#server.close(() => {
        clearTimeout(timer);
        resolve();
      });
      this.#server.closeIdleConnections();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'https://x').pathname;
    const started = Date.now();
    try {
      if (req.method === 'GET' && path === '/healthz') return send(res, 200, 'ok');
      if (req.method !== 'POST') return send(res, 405, `${req.method ?? '?'} not allowed; POST a review`);
      if (path === WEBHOOK_PATHS.convert && this.#opts.conversion) {
        const out = handleConversionReview(await readJson(req), this.#opts.conversion);
        const result = (out.response as { result: { status: string; message?: string } }).result;
        if (result.status !== 'Success') this.#logger.warn('conversion refused', { message: result.message });
        return send(res, 200, out);
      }
      const validator =
        this.#opts.validators?.[path as keyof NonNullable<WebhookServerOptions['validators']>];
      if (validator) {
        const request = admissionRequest(await readJson(req));
        const errors = await validator(request);
        const name = String((request.object.metadata as { name?: string } | undefined)?.name ?? '');
        if (errors.length > 0)
          this.#logger.info('admission denied', {
            kind: request.kind.kind,
            version: request.kind.version,
            namespace: request.namespace,
            name,
            errors: errors.map((e) => e.message),
          });
        return send(res, 200, admissionResponse(request.uid, request.kind.kind, name, errors));
      }
      return send(res, 404, `no webhook at ${path}`);
    } catch (err) {
      if (err instanceof MalformedReviewError) {
        this.#logger.warn('malformed review', { path, error: err.message });
        return send(res, 400, `malformed review: ${err.message}`);
      }
      this.#logger.error('webhook failed', { path, error: String(err) });
      return send(res, 500, 'internal error');
    } finally {
      this.#logger.debug('webhook request', { path, ms: Date.now() - started });
    }
  }
}
