import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { silentLogger, type Logger } from '../log.js';

/** Handles one request; may be async. A throw becomes a 500 (logged, message not sent). */
export type RouteHandler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;

/** What the built-in endpoints serve. */
export interface HttpServerOptions {
  /** Served at `GET /metrics`. */
  registry: Registry;
  /** `GET /readyz` answers 200 when this returns true, else 503. Default: always ready. */
  ready?: () => boolean | Promise<boolean>;
  logger?: Logger;
}

/**
 * `:8080` (all interfaces), `127.0.0.1:0`, `[::1]:9090`, `localhost:8080` → host and port.
 * Throws an `Error` naming the address when it is not of that form.
 */
export function parseListenAddress(addr: string): { host: string | undefined; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(addr.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new Error(`listen address "${addr}" is not HOST:PORT or :PORT (port 0-65535)`);
  }
  const host = m[1] ?? m[2];
  return { host: host === '' ? undefined : host, port };
}

function send(
  res: ServerResponse,
  status: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  res.writeHead(status, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The process's one HTTP server: `/metrics`, `/healthz`, `/readyz`, plus routes other modules
 * add with `route()` (before or after `listen`), e.g. Git push receivers. Routes match the
 * exact path, or every path under a prefix when registered as `/prefix/*`.
 */
export class HttpServer {
  readonly #routes = new Map<string, Map<string, RouteHandler>>();
  readonly #prefixes: Array<{ prefix: string; methods: Map<string, RouteHandler> }> = [];
  readonly #logger: Logger;
  #server: Server | undefined;

  constructor(opts: HttpServerOptions) {
    this.#logger = opts.logger ?? silentLogger();
    const ready = opts.ready ?? (() => true);
    this.route('GET', '/healthz', (_req, res) => send(res, 200, 'ok\n'));
    this.route('GET', '/readyz', async (_req, res) => {
      const ok = await ready();
      send(res, ok ? 200 : 503, ok ? 'ok\n' : 'not ready\n');
    });
    this.route('GET', '/metrics', async (_req, res) => {
      send(res, 200, await opts.registry.metrics(), opts.registry.contentType);
    });
  }

  /** Adds a route. Throws when the same method and path is taken (two owners of one URL is a bug). */
  route(method: string, path: string, handler: RouteHandler): this {
    const verb = method.toUpperCase();
    let methods: Map<string, RouteHandler> | undefined;
    if (path.endsWith('/*')) {
      const prefix = path.slice(0, -1);
      methods = this.#prefixes.find((p) => p.prefix === prefix)?.methods;
      if (!methods) {
        methods = new Map();
        this.#prefixes.push({ prefix, methods });
        // Longest prefix first, so that the most specific route wins.
        this.#prefixes.sort((a, b) => b.prefix.length - a.prefix.length);
      }
    } else {
      methods = this.#routes.get(path);
      if (!methods) this.#routes.set(path, (methods = new Map()));
    }
    if (methods.has(verb)) throw new Error(`route ${verb} ${path} is already registered`);
    methods.set(verb, handler);
    return this;
  }

  /** Starts listening on `addr` (see `parseListenAddress`); resolves with the bound port. */
  listen(addr: string): Promise<number> {
    if (this.#server) return Promise.reject(new Error('HTTP server is already listening'));
    const { host, port } = parseListenAddress(addr);
    const server = createServer((req, res) => void this.#handle(req, res));
    this.#server = server;
    return new Promise((resolve, reject) => {
      server.once('error', (err) => {
        this.#server = undefined;
        reject(new Error(`cannot listen on ${addr}: ${err.message}`, { cause: err }));
      });
      server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
    });
  }

  /** Stops accepting connections, closes idle ones, and resolves when all are closed. */
  close(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return Promise.resolve();
    return new Promise((resolve, reject) => {
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeIdleConnections();
    });
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const methods = this.#routes.get(path) ?? this.#prefixes.find((p) => path.startsWith(p.prefix))?.methods;
    if (!methods) return send(res, 404, 'not found\n');
    const handler =
      methods.get(req.method ?? 'GET') ?? (req.method === 'HEAD' ? methods.get('GET') : undefined);
    if (!handler) {
      res.setHeader('Allow', [...methods.keys()].join(', '));
      return send(res, 405, 'method not allowed\n');
    }
    try {
      await handler(req, res);
    } catch (err) {
      this.#logger.error('HTTP handler failed', {
        method: req.method,
        path,
        error: err instanceof Error ? err.message : String(err),
      });
      if (!res.headersSent) send(res, 500, 'internal error\n');
      else res.destroy();
    }
  }
}
