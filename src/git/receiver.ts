import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { V1Secret } from '@kubernetes/client-node';
import type { GitSource } from '../api/git-source.js';
import type { Informer } from '../kube/informer.js';
import type { Logger } from '../log.js';
import type { HttpServer } from '../server/http.js';
import { redact } from './errors.js';
import { describeRef, parseRefSpec } from './ref.js';
import { verifyHmacSignature, verifyToken, type SignatureCheck } from './webhook-signature.js';

/** Path prefix of the push receiver: a GitSource's hook is `/hooks/<namespace>/<name>`. */
export const RECEIVER_PREFIX = '/hooks/';
/** Default cap on a webhook body (GitHub caps its payloads at 25 MB, but pushes are far smaller). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** The key of the webhook Secret (`spec.webhook.secretRef`) that holds the shared secret (Flux's Receiver uses the same). */
export const WEBHOOK_SECRET_KEY = 'token';

/** The URL path of GitSource `namespace/name`'s push hook. */
export function receiverPath(namespace: string, name: string): string {
  return `${RECEIVER_PREFIX}${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
}

/** Who sent a webhook, told by its headers. */
export type WebhookProvider = 'github' | 'gitlab' | 'generic';

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * The provider of a request: GitHub when `X-GitHub-Event` is present, GitLab when
 * `X-Gitlab-Event` or `X-Gitlab-Token` is, generic when `X-Signature` is; undefined otherwise.
 */
export function detectProvider(headers: IncomingHttpHeaders): WebhookProvider | undefined {
  if (header(headers, 'x-github-event') !== undefined) return 'github';
  if (header(headers, 'x-gitlab-event') !== undefined || header(headers, 'x-gitlab-token') !== undefined)
    return 'gitlab';
  if (header(headers, 'x-signature') !== undefined) return 'generic';
  return undefined;
}

/** Checks a request's credentials for `provider` against the webhook secret. Pure. */
export function verifyWebhook(
  provider: WebhookProvider,
  headers: IncomingHttpHeaders,
  body: Uint8Array,
  secret: string,
): SignatureCheck {
  switch (provider) {
    case 'github':
      return verifyHmacSignature('X-Hub-Signature-256', header(headers, 'x-hub-signature-256'), body, secret);
    case 'gitlab':
      return verifyToken('X-Gitlab-Token', header(headers, 'x-gitlab-token'), secret);
    case 'generic':
      return verifyHmacSignature('X-Signature', header(headers, 'x-signature'), body, secret);
  }
}

/** What a push payload says: the ref pushed and the URLs naming the repository. */
export interface PushInfo {
  /** `refs/heads/main`, `refs/tags/v1.2.3`; undefined when a generic payload names none. */
  readonly ref: string | undefined;
  /** Every URL (or `owner/repo` path) the payload gives for the repository; may be empty. */
  readonly repositories: readonly string[];
}

function field(obj: unknown, ...path: string[]): unknown {
  let cur = obj;
  for (const p of path) {
    if (!cur || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

const REPO_FIELDS: Record<WebhookProvider, string[][]> = {
  github: [
    ['repository', 'clone_url'],
    ['repository', 'html_url'],
    ['repository', 'ssh_url'],
    ['repository', 'git_url'],
    ['repository', 'url'],
    ['repository', 'full_name'],
  ],
  gitlab: [
    ['project', 'git_http_url'],
    ['project', 'git_ssh_url'],
    ['project', 'web_url'],
    ['project', 'path_with_namespace'],
    ['repository', 'git_http_url'],
    ['repository', 'homepage'],
  ],
  generic: [['repository', 'url'], ['repository'], ['url']],
};

/** Reads the ref and repository URLs of a push payload (already parsed JSON). Pure. */
export function pushInfo(provider: WebhookProvider, payload: unknown): PushInfo {
  const ref = field(payload, 'ref');
  const repositories = REPO_FIELDS[provider]
    .map((path) => field(payload, ...path))
    .filter((v): v is string => typeof v === 'string' && v !== '');
  return { ref: typeof ref === 'string' && ref !== '' ? ref : undefined, repositories };
}

/**
 * `host/path` of a repository URL, lower-cased, without scheme, credentials, port, trailing
 * `/` or `.git` — so `https://GitHub.com/Org/App.git`, `git@github.com:org/app` and
 * `http://github.com:443/org/app/` compare equal. A bare `owner/repo` path is returned as is
 * (lower-cased); {@link sameRepository} then matches it against the path's end.
 */
export function repositoryKey(url: string): string {
  let s = url.trim().toLowerCase();
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.+)$/.exec(s);
  if (scp && !/^[a-z][a-z0-9+.-]*:\/\//.test(s)) s = `${scp[1]}/${scp[2]}`;
  else s = s.replace(/^[a-z][a-z0-9+.-]*:\/\//, '').replace(/^[^@/]*@/, '');
  s = s.replace(/^([^/]+):\d+(?=\/|$)/, '$1');
  return s
    .replace(/\/+$/, '')
    .replace(/\.git$/, '')
    .replace(/\/+$/, '');
}

/**
 * True when one of `candidates` names the repository at `url` (loosely, see
 * {@link repositoryKey}); also true when there are no candidates, since a payload that names
 * no repository cannot contradict the source and the signature already proved the sender.
 */
export function sameRepository(url: string, candidates: readonly string[]): boolean {
  if (candidates.length === 0) return true;
  const want = repositoryKey(url);
  return candidates.some((c) => {
    const key = repositoryKey(c);
    return key === want || (!key.includes('.') && want.endsWith(`/${key}`));
  });
}

/** Whether a push is for what a GitSource follows; when not, why (for the 202). */
export type PushMatch = { readonly match: true } | { readonly match: false; readonly message: string };

/**
 * Decides whether a push of `push.ref` to a repository concerns `source`. Pure.
 * A branch source matches `refs/heads/<branch>`, a tag source `refs/tags/<tag>`, a semver
 * source any tag, a source following the default branch any branch; a pinned commit never
 * moves, so no push matches it; nor does any push match a suspended source. A push with no
 * ref (generic payloads) matches.
 */
export function matchPush(source: GitSource, push: PushInfo): PushMatch {
  const id = `GitSource ${source.metadata?.namespace}/${source.metadata?.name}`;
  if (source.spec.suspend) return { match: false, message: `ignored: ${id} is suspended` };
  if (!sameRepository(source.spec.url, push.repositories)) {
    return {
      match: false,
      message: `ignored: push for repository ${redact(push.repositories[0] ?? '')}; ${id} follows ${redact(source.spec.url)}`,
    };
  }
  let ref;
  try {
    ref = parseRefSpec(source.spec.ref);
  } catch (err) {
    return { match: false, message: `ignored: ${id} has an invalid ref: ${(err as Error).message}` };
  }
  const pushed = push.ref;
  if (pushed === undefined) return { match: true };
  const follows = `${id} follows ${describeRef(ref)}`;
  let ok: boolean;
  switch (ref.kind) {
    case 'head':
      ok = pushed.startsWith('refs/heads/');
      break;
    case 'branch':
      ok = pushed === `refs/heads/${ref.branch}`;
      break;
    case 'tag':
      ok = pushed === `refs/tags/${ref.tag}`;
      break;
    case 'semver':
      ok = pushed.startsWith('refs/tags/');
      break;
    case 'commit':
      return { match: false, message: `ignored: ${follows}, which a push cannot move` };
  }
  return ok ? { match: true } : { match: false, message: `ignored: push to ${pushed}; ${follows}` };
}

/** What a {@link PushReceiver} needs. */
export interface PushReceiverOptions {
  sources: Informer<GitSource>;
  /** Secrets on the hub: the webhook secret is read from this cache. */
  secrets: Informer<V1Secret>;
  /** Asks for an immediate reconcile of the source (e.g. `requestReconcile`, which sets the annotation). */
  requestReconcile: (namespace: string, name: string) => Promise<unknown>;
  logger: Logger;
  /** Body size cap; larger requests get 413. Default {@link DEFAULT_MAX_BODY_BYTES}. */
  maxBodyBytes?: number;
}

class BodyTooLarge extends Error {}

/** An answer: the status code and a one-line message (sent as text, and logged). */
interface Answer {
  status: number;
  message: string;
}

/**
 * The push receiver: `POST /hooks/<namespace>/<name>` for every GitSource with `spec.webhook`.
 *
 * Configuration: `spec.webhook.secretRef` names a Secret in the source's namespace whose key
 * `token` is the shared secret. The sender is told by its headers:
 *
 * - GitHub: `X-Hub-Signature-256: sha256=<HMAC-SHA256(secret, body)>`, `X-GitHub-Event`
 *   (`push` triggers; `ping` answers 200; other events 202); JSON or form-encoded payloads;
 * - GitLab: `X-Gitlab-Token: <secret>`, `X-Gitlab-Event` (`Push Hook`, `Tag Push Hook`);
 * - generic: `X-Signature: sha256=<HMAC-SHA256(secret, body)>`, a JSON body whose optional
 *   `ref` and `repository.url` are matched like GitHub's.
 *
 * A matching push sets the `sluice.dev/reconcile-requested-at` annotation (through
 * `requestReconcile`), so any replica — leader or standby — can serve the hook, and the
 * request is recorded on the hub rather than in one process's queue.
 *
 * Answers: 200 when the reconcile was requested; 202 for a valid request that concerns
 * something else (another branch or repository, another event, a suspended source); 400 for
 * a body that is not JSON; 401 for missing or wrong credentials; 404 for an unknown source or
 * one without `spec.webhook`; 413 over the size cap; 503 before the caches synced, when the
 * webhook Secret is unusable, or when the request could not be recorded on the hub.
 * Credentials are compared in constant time; no secret, signature or token is ever logged or
 * echoed. Polling continues whatever arrives here (webhooks get lost).
 */
export class PushReceiver {
  readonly #o: PushReceiverOptions;
  readonly #logger: Logger;
  readonly #max: number;

  constructor(opts: PushReceiverOptions) {
    this.#o = opts;
    this.#logger = opts.logger.child({ component: 'push-receiver' });
    this.#max = opts.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  }

  /** Adds the `POST /hooks/*` route to `server`. */
  mount(server: HttpServer): void {
    server.route('POST', `${RECEIVER_PREFIX}*`, (req, res) => this.handle(req, res));
  }

  /** Handles one request (exposed for servers other than `HttpServer`). */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const context: Record<string, unknown> = { path };
    let answer: Answer;
    try {
      answer = await this.#answer(req, path, context);
    } catch (err) {
      answer = { status: 500, message: 'internal error' };
      context.error = err instanceof Error ? err.message : String(err);
    }
    if (answer.status >= 400 && !req.readableEnded) {
      // Unread body: close the connection rather than read (possibly a lot) more.
      res.setHeader('Connection', 'close');
      req.resume();
    }
    const body = `${answer.message}\n`;
    res.writeHead(answer.status, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
    const line = { ...context, status: answer.status, result: answer.message };
    if (answer.status >= 500) this.#logger.error('webhook', line);
    else if (answer.status >= 400) this.#logger.warn('webhook', line);
    else this.#logger.info('webhook', line);
  }

  async #answer(req: IncomingMessage, path: string, context: Record<string, unknown>): Promise<Answer> {
    const target = hookTarget(path);
    if (!target) {
      return {
        status: 404,
        message: `not found: the push hook of a GitSource is ${RECEIVER_PREFIX}<namespace>/<name>`,
      };
    }
    const { namespace, name } = target;
    const id = `GitSource ${namespace}/${name}`;
    context.source = `${namespace}/${name}`;
    if (!this.#o.sources.hasSynced || !this.#o.secrets.hasSynced) {
      return { status: 503, message: 'not ready: the controller is still loading GitSources' };
    }
    const source = this.#o.sources.get(namespace, name);
    const hook = source?.spec.webhook;
    if (!source || !hook) return { status: 404, message: `not found: no ${id} with spec.webhook` };

    const declared = Number(header(req.headers, 'content-length'));
    if (Number.isFinite(declared) && declared > this.#max) return this.#tooLarge();
    let body: Buffer;
    try {
      body = await readBody(req, this.#max);
    } catch (err) {
      if (err instanceof BodyTooLarge) return this.#tooLarge();
      throw err;
    }

    const secret = this.#webhookSecret(namespace, hook.secretRef.name, context);
    if (secret === undefined) {
      return { status: 503, message: `${id}: its webhook Secret is not usable; see the controller log` };
    }
    const provider = detectProvider(req.headers);
    context.provider = provider;
    if (!provider) {
      return {
        status: 401,
        message:
          'unauthorized: send X-Hub-Signature-256 (GitHub), X-Gitlab-Token (GitLab) or X-Signature: sha256=<HMAC of the body> (generic)',
      };
    }
    const check = verifyWebhook(provider, req.headers, body, secret);
    if (!check.ok) return { status: 401, message: `unauthorized: ${check.message}` };

    const event =
      provider === 'github'
        ? header(req.headers, 'x-github-event')
        : provider === 'gitlab'
          ? header(req.headers, 'x-gitlab-event')
          : undefined;
    context.event = event;
    if (provider === 'github' && event === 'ping') return { status: 200, message: `pong: ${id}` };
    if (provider === 'github' && event !== 'push') {
      return { status: 202, message: `ignored: GitHub event ${JSON.stringify(event)} is not a push` };
    }
    if (provider === 'gitlab' && event !== 'Push Hook' && event !== 'Tag Push Hook') {
      return { status: 202, message: `ignored: GitLab event ${JSON.stringify(event)} is not a push` };
    }

    const payload = parsePayload(body, header(req.headers, 'content-type'));
    if (!payload.ok) return { status: 400, message: `bad request: ${payload.message}` };
    const push = pushInfo(provider, payload.value);
    if (provider !== 'generic' && push.ref === undefined) {
      return { status: 400, message: 'bad request: the push payload has no "ref"' };
    }
    context.ref = push.ref;
    const match = matchPush(source, push);
    if (!match.match) return { status: 202, message: match.message };
    try {
      await this.#o.requestReconcile(namespace, name);
    } catch (err) {
      context.error = err instanceof Error ? err.message : String(err);
      return { status: 503, message: `${id}: the reconcile could not be requested; try again` };
    }
    return {
      status: 200,
      message: `reconcile of ${id} requested${push.ref ? ` for a push to ${push.ref}` : ''}`,
    };
  }

  #tooLarge(): Answer {
    return { status: 413, message: `payload too large: the limit is ${this.#max} bytes` };
  }

  /** The shared secret, or undefined (logged, by name only) when the Secret is missing or lacks the key. */
  #webhookSecret(namespace: string, name: string, context: Record<string, unknown>): string | undefined {
    const secret = this.#o.secrets.get(namespace, name);
    const raw = secret?.data?.[WEBHOOK_SECRET_KEY];
    const value = raw === undefined ? '' : Buffer.from(raw, 'base64').toString('utf8');
    if (value === '') {
      context.error = secret
        ? `Secret ${namespace}/${name} has no non-empty key "${WEBHOOK_SECRET_KEY}"`
        : `Secret ${namespace}/${name} (spec.webhook.secretRef) not found`;
      return undefined;
    }
    return value;
  }
}

/** The namespace and name in a hook path `/hooks/<namespace>/<name>`; undefined for any other path. */
export function hookTarget(path: string): { namespace: string; name: string } | undefined {
  if (!path.startsWith(RECEIVER_PREFIX)) return undefined;
  const parts = path.slice(RECEIVER_PREFIX.length).split('/');
  if (parts.length !== 2) return undefined;
  try {
    const [namespace, name] = parts.map((p) => decodeURIComponent(p));
    return namespace && name ? { namespace, name } : undefined;
  } catch {
    return undefined; // malformed percent-encoding
  }
}

/** Reads the whole body, up to `max` bytes; rejects with `BodyTooLarge` beyond (and stops buffering). */
function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.off('data', onData);
        reject(new BodyTooLarge());
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    req.once('end', () => resolve(Buffer.concat(chunks)));
    req.once('error', reject);
  });
}

/** The JSON payload of a body: plain JSON, or GitHub's form encoding (`payload=<json>`). */
export function parsePayload(
  body: Uint8Array,
  contentType: string | undefined,
): { ok: true; value: Record<string, unknown> } | { ok: false; message: string } {
  let text = Buffer.from(body).toString('utf8');
  if (/^application\/x-www-form-urlencoded/i.test(contentType ?? '')) {
    const payload = new URLSearchParams(text).get('payload');
    if (payload === null) return { ok: false, message: 'form-encoded body has no "payload" field' };
    text = payload;
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `malformed JSON body: ${(err as Error).message}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, message: 'the JSON body must be an object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
