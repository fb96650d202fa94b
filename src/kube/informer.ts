import { Watch, type KubernetesObject } from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../log.js';
import type { ClusterClient } from './clients.js';
import { KubeError, normalizeKubeError } from './errors.js';

/** Which objects an informer mirrors. */
export interface InformerResource {
  /** `v1`, `apps/v1`, `sluice.dev/v1`, … */
  apiVersion: string;
  kind: string;
  /** The resource's plural (`deployments`); found by discovery when left out. */
  plural?: string;
  /** Only this namespace; all namespaces (or a cluster-scoped kind) when left out. */
  namespace?: string;
  labelSelector?: string;
}

/** Tuning of an `Informer`; the defaults suit production, tests shorten the periods. */
export interface InformerOptions {
  logger?: Logger;
  /** Full relist, diffed against the cache, every `resyncMs`; 0 turns it off. Default 10 minutes. */
  resyncMs?: number;
  /**
   * Restart the watch when it delivered no event or bookmark for this long. Default 3 minutes:
   * the API server sends a bookmark about once a minute (seen: every 60 s on kube-local).
   */
  staleAfterMs?: number;
  /** Restart backoff: first delay, doubled per failed attempt up to `backoffMaxMs`. Default 500 ms. */
  backoffInitialMs?: number;
  /** Default 30 s. */
  backoffMaxMs?: number;
  /** Items per list page. Default 500. */
  pageSize?: number;
  /** Server-side watch timeout; default a random 5–10 minutes (as client-go), so that watches of many informers do not all end together. */
  watchTimeoutSeconds?: number;
}

/** The informer events and their handler signatures. Handlers must be synchronous and cheap: enqueue a key, nothing else. */
export interface InformerHandlers<T> {
  add: (obj: T) => void;
  update: (obj: T, old: T) => void;
  delete: (obj: T) => void;
}

/** What changed between two snapshots of a cache. */
export type CacheChange<T> =
  { type: 'add'; obj: T } | { type: 'update'; obj: T; old: T } | { type: 'delete'; obj: T };

/** The cache key of an object: `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(obj: KubernetesObject): string {
  const name = obj.metadata?.name ?? '';
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/**
 * The changes that turn `prev` into `next` (both keyed by `objectKey`): adds, updates (the
 * `resourceVersion` differs) and deletes. Pure.
 */
export function diffCache<T extends KubernetesObject>(
  prev: ReadonlyMap<string, T>,
  next: ReadonlyMap<string, T>,
): CacheChange<T>[] {
  const changes: CacheChange<T>[] = [];
  for (const [key, obj] of next) {
    const old = prev.get(key);
    if (!old) changes.push({ type: 'add', obj });
    else if (old.metadata?.resourceVersion !== obj.metadata?.resourceVersion)
      changes.push({ type: 'update', obj, old });
  }
  for (const [key, old] of prev) {
    if (!next.has(key)) changes.push({ type: 'delete', obj: old });
  }
  return changes;
}

/** A list response as the server sends it (client-node's `V1ListMeta` calls `continue` `_continue`). */
interface RawList<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

type WatchEnd =
  | { reason: 'stopped' | 'resync' | 'stale' | 'closed' | 'gone'; healthy: boolean }
  | { reason: 'error'; error: unknown; healthy: boolean };

// A watch that ran this long, or delivered anything, was healthy: its end resets the backoff.
const HEALTHY_WATCH_MS = 10_000;
const LIST_TIMEOUT_MS = 60_000;

/**
 * A list + watch mirror of one kind, with a local cache, that keeps running whatever the
 * API server does (the client-node informer stops on errors other than 410: notes on
 * client-node, #364 #596 #958):
 *
 * - lists (paged) into the cache, then watches from the list's `resourceVersion` with
 *   bookmarks;
 * - on 410 Gone (from the watch or its `ERROR` event) relists;
 * - on any other error, or when the watch ends, restarts with capped exponential backoff
 *   (reset after a healthy watch), resuming from the last seen `resourceVersion`;
 * - restarts a watch that was silent (no event, no bookmark) for `staleAfterMs`;
 * - relists every `resyncMs` and emits add/update/delete for what differs from the cache
 *   (the watch is stopped meanwhile, so list and watch never race on the cache).
 *
 * Events are emitted in the order the cache changes; handlers run synchronously and should
 * only enqueue keys. Cached objects are the server's JSON and are shared: treat them as
 * read-only. Works for built-in kinds, custom resources and cluster-scoped kinds.
 */
export class Informer<T extends KubernetesObject = KubernetesObject> {
  readonly client: ClusterClient;
  readonly resource: Readonly<InformerResource>;
  readonly #logger: Logger;
  readonly #resyncMs: number;
  readonly #staleAfterMs: number;
  readonly #backoffInitialMs: number;
  readonly #backoffMaxMs: number;
  readonly #pageSize: number;
  readonly #watchTimeoutSeconds: number;
  readonly #watch: Watch;
  readonly #abort = new AbortController();
  readonly #handlers: { [E in keyof InformerHandlers<T>]: Array<InformerHandlers<T>[E]> } = {
    add: [],
    update: [],
    delete: [],
  };
  #cache = new Map<string, T>();
  #resourceVersion: string | undefined;
  #path: string | undefined;
  #loop: Promise<void> | undefined;
  #synced = false;
  readonly #syncedPromise: Promise<void>;
  #settleSynced!: (err?: Error) => void;
  #stopped = false;
  #backoffMs: number;
  #resyncDue = false;
  #resyncTimer: NodeJS.Timeout | undefined;
  #endWatch: ((reason: 'stopped' | 'resync') => void) | undefined;
  #wake: (() => void) | undefined;

  constructor(client: ClusterClient, resource: InformerResource, opts: InformerOptions = {}) {
    this.client = client;
    this.resource = { ...resource };
    this.#logger = (opts.logger ?? silentLogger()).child({
      informer: `${resource.apiVersion}/${resource.kind}`,
      cluster: client.name,
      ...(resource.namespace ? { namespace: resource.namespace } : {}),
    });
    this.#resyncMs = opts.resyncMs ?? 600_000;
    this.#staleAfterMs = opts.staleAfterMs ?? 180_000;
    this.#backoffInitialMs = opts.backoffInitialMs ?? 500;
    this.#backoffMaxMs = Math.max(opts.backoffMaxMs ?? 30_000, this.#backoffInitialMs);
    this.#backoffMs = this.#backoffInitialMs;
    this.#pageSize = opts.pageSize ?? 500;
    this.#watchTimeoutSeconds = opts.watchTimeoutSeconds ?? 300 + Math.floor(Math.random() * 300);
    this.#watch = new Watch(client.kubeConfig);
    this.#syncedPromise = new Promise<void>((resolve, reject) => {
      this.#settleSynced = (err) => (err ? reject(err) : resolve());
    });
    // start() hands this promise out; a caller that does not await it must not cause an
    // unhandled rejection when the informer is stopped before it synced.
    this.#syncedPromise.catch(() => undefined);
  }

  /** True once the first list is in the cache. */
  get hasSynced(): boolean {
    return this.#synced;
  }

  /**
   * Registers a handler. An `add` handler registered after the first list is called at once
   * for every cached object, as client-go does, so late registrations miss nothing.
   */
  on<E extends keyof InformerHandlers<T>>(event: E, handler: InformerHandlers<T>[E]): this {
    this.#handlers[event].push(handler);
    if (event === 'add' && this.#synced) {
      for (const obj of this.#cache.values())
        this.#call('add', () => (handler as InformerHandlers<T>['add'])(obj));
    }
    return this;
  }

  onAdd(handler: InformerHandlers<T>['add']): this {
    return this.on('add', handler);
  }

  onUpdate(handler: InformerHandlers<T>['update']): this {
    return this.on('update', handler);
  }

  onDelete(handler: InformerHandlers<T>['delete']): this {
    return this.on('delete', handler);
  }

  /**
   * Starts listing and watching (idempotent). Resolves once the first list is in the cache;
   * until then failed lists are retried with backoff. Rejects only if `stop()` comes first.
   */
  start(): Promise<void> {
    if (this.#stopped) return Promise.reject(new Error(`informer ${this.#name()} is stopped`));
    this.#loop ??= this.#run().catch((err: unknown) => {
      // #run handles its own errors; reaching here is a bug, and must not go unnoticed.
      this.#logger.error('informer loop crashed', { error: normalizeKubeError(err).message });
    });
    return this.#syncedPromise;
  }

  /** Stops the watch and any retry; resolves when the informer is idle. The cache is kept. */
  async stop(): Promise<void> {
    if (!this.#stopped) {
      this.#stopped = true;
      this.#abort.abort();
      clearTimeout(this.#resyncTimer);
      this.#endWatch?.('stopped');
      this.#wake?.();
      if (!this.#synced) this.#settleSynced(new Error(`informer ${this.#name()} stopped before it synced`));
    }
    await this.#loop;
  }

  /** Every cached object. */
  list(): T[] {
    return [...this.#cache.values()];
  }

  /** The cached object with key `namespace/name` (or `name`), or by namespace and name. */
  get(key: string): T | undefined;
  get(namespace: string | undefined, name: string): T | undefined;
  get(a: string | undefined, b?: string): T | undefined {
    const key = b === undefined ? (a ?? '') : a ? `${a}/${b}` : b;
    return this.#cache.get(key);
  }

  #name(): string {
    return `${this.client.name}/${this.resource.apiVersion}/${this.resource.kind}`;
  }

  async #run(): Promise<void> {
    let needList = true;
    while (!this.#stopped) {
      if (needList || this.#resyncDue) {
        try {
          await this.#relist();
          needList = false;
        } catch (err) {
          if (this.#stopped) return;
          const e = normalizeKubeError(err, 'list');
          const delayMs = this.#nextBackoff();
          this.#logger.warn('list failed; retrying', {
            error: e.message,
            reason: e.reason,
            retryInMs: delayMs,
          });
          await this.#sleep(delayMs);
          continue;
        }
      }
      const end = await this.#watchOnce();
      if (end.reason === 'stopped') return;
      if (end.healthy) this.#backoffMs = this.#backoffInitialMs;
      if (end.reason === 'resync') continue;
      if (end.reason === 'gone') needList = true;
      const delayMs = this.#nextBackoff();
      if (end.reason === 'error') {
        const e = watchError(end.error);
        this.#logger.warn('watch failed; restarting', {
          error: e.message,
          reason: e.reason,
          retryInMs: delayMs,
        });
      } else {
        const level = end.reason === 'closed' ? 'debug' : 'info';
        this.#logger.log(level, 'watch ended; restarting', {
          why: end.reason,
          relist: needList,
          retryInMs: delayMs,
        });
      }
      await this.#sleep(delayMs);
    }
  }

  async #listPath(): Promise<string> {
    if (this.#path) return this.#path;
    const { apiVersion, kind, plural, namespace } = this.resource;
    if (plural) {
      const root = apiVersion.includes('/') ? '/apis' : '/api';
      const ns = namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
      this.#path = `${root}/${apiVersion}${ns}/${plural}`;
    } else {
      // Discovery (cached per client). Raw JSON throughout: watch events are raw, so the cache
      // must be too (typed models drop fields and turn timestamps into Dates, client-node #2483).
      this.#path = await this.client.raw.pathFor({ apiVersion, kind, metadata: { namespace } }, 'list');
    }
    return this.#path;
  }

  async #relist(): Promise<void> {
    clearTimeout(this.#resyncTimer);
    const path = await this.#listPath();
    const next = new Map<string, T>();
    let resourceVersion: string | undefined;
    let cont: string | undefined;
    do {
      const page = await this.#abortable(
        this.client.raw.request<RawList<T>>({
          method: 'GET',
          path,
          query: { labelSelector: this.resource.labelSelector, limit: this.#pageSize, continue: cont },
        }),
      );
      for (const item of page.items ?? []) {
        // List items of built-in kinds come without apiVersion and kind; watch events have them.
        item.apiVersion ??= this.resource.apiVersion;
        item.kind ??= this.resource.kind;
        next.set(objectKey(item), item);
      }
      resourceVersion ??= page.metadata?.resourceVersion;
      cont = page.metadata?.continue || undefined;
    } while (cont);
    if (this.#stopped) return;

    // Only now: a failed resync must be retried, not forgotten until the next period.
    this.#resyncDue = false;
    const changes = diffCache(this.#cache, next);
    this.#cache = next;
    this.#resourceVersion = resourceVersion;
    for (const change of changes) this.#emit(change);
    this.#logger.debug('listed', { objects: next.size, changes: changes.length, resourceVersion });
    if (!this.#synced) {
      this.#synced = true;
      this.#settleSynced();
    }
    if (this.#resyncMs > 0) {
      this.#resyncTimer = setTimeout(() => {
        this.#resyncDue = true;
        this.#endWatch?.('resync');
      }, this.#resyncMs);
    }
  }

  /**
   * `request` until `stop()` or the list timeout. The raw client takes no signal, so a hung
   * request is abandoned (its socket times out on its own) rather than cancelled.
   */
  #abortable<R>(request: Promise<R>): Promise<R> {
    request.catch(() => undefined); // an abandoned request must not become an unhandled rejection
    const signal = this.#abort.signal;
    let timer: NodeJS.Timeout | undefined;
    let onAbort: (() => void) | undefined;
    const cut = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`list timed out after ${LIST_TIMEOUT_MS} ms`)),
        LIST_TIMEOUT_MS,
      );
      onAbort = () => reject(new Error('informer stopped'));
      signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([request, cut]).finally(() => {
      clearTimeout(timer);
      if (onAbort) signal.removeEventListener('abort', onAbort);
    });
  }

  #watchOnce(): Promise<WatchEnd> {
    return new Promise<WatchEnd>((resolve) => {
      const started = Date.now();
      let delivered = false;
      let settled = false;
      let controller: AbortController | undefined;
      let watchdog: NodeJS.Timeout | undefined;
      const finish = (
        end:
          | { reason: 'stopped' | 'resync' | 'stale' | 'closed' | 'gone' }
          | { reason: 'error'; error: unknown },
      ) => {
        if (settled) return;
        settled = true;
        clearTimeout(watchdog);
        this.#endWatch = undefined;
        controller?.abort();
        resolve({ ...end, healthy: delivered || Date.now() - started >= HEALTHY_WATCH_MS });
      };
      const kick = () => {
        clearTimeout(watchdog);
        watchdog = setTimeout(() => finish({ reason: 'stale' }), this.#staleAfterMs);
      };
      this.#endWatch = (reason) => finish({ reason });
      if (this.#stopped) return finish({ reason: 'stopped' });
      if (this.#resyncDue) return finish({ reason: 'resync' });
      kick();

      const onEvent = (phase: string, obj: unknown) => {
        if (settled) return;
        if (phase === 'ERROR') {
          const status = obj as { code?: number; message?: string; reason?: string };
          if (status?.code === 410) return finish({ reason: 'gone' });
          return finish({ reason: 'error', error: { code: status?.code ?? 500, body: status } });
        }
        // Only real events count as health: a server answering each watch with an ERROR
        // must not reset the backoff.
        delivered = true;
        kick();
        this.#apply(phase, obj as T);
      };
      const onDone = (err: unknown) => {
        if (settled) return;
        if (err && statusCodeOf(err) === 410) return finish({ reason: 'gone' });
        finish(err ? { reason: 'error', error: err } : { reason: 'closed' });
      };

      this.#listPath()
        .then((path) =>
          this.#watch.watch(
            path,
            {
              allowWatchBookmarks: true,
              resourceVersion: this.#resourceVersion,
              timeoutSeconds: this.#watchTimeoutSeconds,
              labelSelector: this.resource.labelSelector,
            },
            onEvent,
            onDone,
          ),
        )
        .then((c) => {
          controller = c;
          // The watch may have been ended (stop, stale) while it was still connecting.
          if (settled) c.abort();
        })
        .catch((err: unknown) => finish({ reason: 'error', error: err }));
    });
  }

  #apply(phase: string, obj: T): void {
    const rv = obj?.metadata?.resourceVersion;
    if (phase === 'BOOKMARK') {
      if (rv) this.#resourceVersion = rv;
      return;
    }
    if (!obj?.metadata?.name) return;
    const key = objectKey(obj);
    const old = this.#cache.get(key);
    switch (phase) {
      case 'ADDED':
      case 'MODIFIED':
        this.#cache.set(key, obj);
        if (!old) this.#emit({ type: 'add', obj });
        else if (old.metadata?.resourceVersion !== rv) this.#emit({ type: 'update', obj, old });
        break;
      case 'DELETED':
        // Nothing to tell about an object the cache never had.
        if (!old) break;
        this.#cache.delete(key);
        this.#emit({ type: 'delete', obj });
        break;
      default:
        return;
    }
    if (rv) this.#resourceVersion = rv;
  }

  #emit(change: CacheChange<T>): void {
    switch (change.type) {
      case 'add':
        for (const h of this.#handlers.add) this.#call('add', () => h(change.obj));
        return;
      case 'update':
        for (const h of this.#handlers.update) this.#call('update', () => h(change.obj, change.old));
        return;
      case 'delete':
        for (const h of this.#handlers.delete) this.#call('delete', () => h(change.obj));
        return;
    }
  }

  #call(event: string, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      // A throwing handler must not stop the informer or the other handlers.
      this.#logger.error('informer handler threw', {
        event,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  #nextBackoff(): number {
    const base = this.#backoffMs;
    this.#backoffMs = Math.min(this.#backoffMs * 2, this.#backoffMaxMs);
    // Up to 20% jitter, so that informers of one cluster do not reconnect in lockstep.
    return Math.round(base * (1 + Math.random() * 0.2));
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.#stopped) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }
}

/** The HTTP status of a failed watch request: client-node's `Watch` reports it as `statusCode`. */
function statusCodeOf(err: unknown): number | undefined {
  const code = (err as { statusCode?: unknown } | undefined)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

function watchError(err: unknown): KubeError {
  // normalizeKubeError knows `code` (ApiException, Status objects) but not the `statusCode`
  // of the Error that Watch throws for a non-200 answer.
  const status = statusCodeOf(err);
  const message = err instanceof Error ? err.message : undefined;
  return normalizeKubeError(status !== undefined ? { code: status, body: message ?? '' } : err, 'watch');
}
