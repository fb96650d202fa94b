import { ApiException } from '@kubernetes/client-node';
import type { Registry } from 'prom-client';
import type { Logger } from '../log.js';
import { controllerMetrics, type ControllerMetrics, type ReconcileOutcome } from '../server/metrics.js';
import { KubeError, normalizeKubeError } from './errors.js';
import { WorkQueue, type BackoffOptions } from './workqueue.js';

/** What a reconcile asks for when it succeeds: nothing, or to run again after a delay. */
export type ReconcileResult = { requeueAfterMs?: number } | void;

/**
 * The reconcile contract (as controller-runtime's `Reconciler`).
 *
 * `reconcile` gets only the object's key and must read everything else fresh. It is
 * level-triggered — it must not care why it was called — and idempotent. The controller
 * guarantees that one key is never reconciled twice at once.
 *
 * - resolve (optionally with `requeueAfterMs`): done; the key's backoff is reset, and it is
 *   reconciled again after `requeueAfterMs` if given;
 * - throw a `TerminalError`: retrying cannot help (e.g. an invalid spec); not retried until
 *   the key is enqueued again by a change;
 * - throw anything else: retried with per-key exponential backoff.
 *
 * `signal` aborts when the controller stops and the grace period ran out: pass it to I/O.
 */
export interface Reconciler {
  reconcile(key: string, signal: AbortSignal): Promise<ReconcileResult>;
}

/** An error that retrying cannot fix; the controller logs it and does not retry the key. */
export class TerminalError extends Error {
  override readonly name = 'TerminalError';

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** How a `Controller` is built; only `name`, `reconciler`, `logger` and `registry` are required. */
export interface ControllerOptions {
  /** Names the controller in logs and metrics (`controller` label) and its queue. */
  name: string;
  reconciler: Reconciler;
  logger: Logger;
  /** Registry the controller metrics go to (see `server/metrics.ts`). */
  registry: Registry;
  /** Concurrent reconciles (distinct keys). Default 1. */
  workers?: number;
  /** Retry backoff per key. Default 5 ms doubling up to 5 minutes. */
  backoff?: BackoffOptions;
  /** How long `stop()` lets in-flight reconciles finish before aborting their signal. Default 30 s. */
  stopGraceMs?: number;
}

/** How one reconcile ended, as logged and counted. */
type Outcome =
  | { result: 'success' }
  | { result: 'requeue'; requeueAfterMs: number }
  | { result: 'error'; error: unknown }
  | { result: 'terminal'; error: unknown };

/**
 * Runs a `Reconciler` over a `WorkQueue` with N workers. Each reconcile produces exactly one
 * log line `{controller, key, durationMs, result, error?}` and one count in
 * `sluice_reconcile_total{controller,result}`. Single use: after `stop()` it cannot start again.
 */
export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  readonly #reconciler: Reconciler;
  readonly #logger: Logger;
  readonly #metrics: ControllerMetrics;
  readonly #workers: number;
  readonly #stopGraceMs: number;
  readonly #abort = new AbortController();
  #running: Promise<void>[] = [];
  #untrackQueue: (() => void) | undefined;
  #state: 'new' | 'running' | 'stopped' = 'new';

  constructor(opts: ControllerOptions) {
    this.name = opts.name;
    this.queue = new WorkQueue(opts.name, opts.backoff);
    this.#reconciler = opts.reconciler;
    this.#logger = opts.logger.child({ controller: opts.name });
    this.#metrics = controllerMetrics(opts.registry);
    this.#workers = Math.max(1, opts.workers ?? 1);
    this.#stopGraceMs = opts.stopGraceMs ?? 30_000;
    this.#untrackQueue = this.#metrics.trackQueue(opts.name, () => this.queue.length);
    // Series exist from the start at 0, so that rate() and alerts see the first failure.
    for (const result of ['success', 'requeue', 'error', 'terminal'] as const) {
      this.#metrics.reconcileTotal.inc({ controller: this.name, result }, 0);
    }
    this.#metrics.reconcileErrors.inc({ controller: this.name }, 0);
  }

  /** Asks for `key` to be reconciled. Safe before `start()` (keys wait); ignored after `stop()`. */
  enqueue(key: string): void {
    this.queue.add(key);
  }

  /** Starts the workers. Idempotent while running; throws after `stop()`. */
  start(): void {
    if (this.#state === 'running') return;
    if (this.#state === 'stopped')
      throw new Error(`controller ${this.name} was stopped and cannot start again`);
    this.#state = 'running';
    this.#running = Array.from({ length: this.#workers }, () => this.#work());
  }

  /**
   * Stops taking keys, waits for in-flight reconciles, and after `stopGraceMs` aborts their
   * signal and waits for them to return. Idempotent.
   */
  async stop(): Promise<void> {
    if (this.#state !== 'stopped') {
      this.#state = 'stopped';
      this.queue.shutDown();
      this.#untrackQueue?.();
      this.#untrackQueue = undefined;
    }
    const all = Promise.all(this.#running);
    let timer: NodeJS.Timeout | undefined;
    const graceOver = new Promise<'grace'>((resolve) => {
      timer = setTimeout(() => resolve('grace'), this.#stopGraceMs);
    });
    const first = await Promise.race([all, graceOver]);
    clearTimeout(timer);
    if (first === 'grace') {
      this.#logger.warn('stop grace period over: aborting in-flight reconciles', {
        graceMs: this.#stopGraceMs,
      });
      this.#abort.abort(new Error(`controller ${this.name} stopping`));
      await all;
    }
  }

  async #work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.#reconcileOne(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  async #reconcileOne(key: string): Promise<void> {
    const started = performance.now();
    let outcome: Outcome;
    try {
      // Promise.resolve().then(): a reconciler that throws synchronously is handled the same way.
      const res = await Promise.resolve().then(() => this.#reconciler.reconcile(key, this.#abort.signal));
      const after = res?.requeueAfterMs;
      outcome =
        after !== undefined && after > 0
          ? { result: 'requeue', requeueAfterMs: after }
          : { result: 'success' };
    } catch (error) {
      outcome = error instanceof TerminalError ? { result: 'terminal', error } : { result: 'error', error };
    }
    const seconds = (performance.now() - started) / 1000;

    switch (outcome.result) {
      case 'success':
        this.queue.forget(key);
        break;
      case 'requeue':
        this.queue.forget(key);
        this.queue.addAfter(key, outcome.requeueAfterMs);
        break;
      case 'terminal':
        this.queue.forget(key);
        break;
      case 'error':
        this.queue.addRateLimited(key);
        break;
    }
    this.#record(key, outcome, seconds);
  }

  #record(key: string, outcome: Outcome, seconds: number): void {
    const result: ReconcileOutcome = outcome.result;
    this.#metrics.reconcileTotal.inc({ controller: this.name, result });
    this.#metrics.reconcileDuration.observe({ controller: this.name }, seconds);
    const line: Record<string, unknown> = { key, durationMs: Math.round(seconds * 1000), result };
    switch (outcome.result) {
      case 'success':
        this.#logger.info('reconciled', line);
        return;
      case 'requeue':
        this.#logger.info('reconciled', { ...line, requeueAfterMs: outcome.requeueAfterMs });
        return;
      case 'error':
      case 'terminal':
        this.#metrics.reconcileErrors.inc({ controller: this.name });
        this.#logger.error('reconcile failed', {
          ...line,
          error: describeError(outcome.error),
          ...(outcome.result === 'error' ? { retries: this.queue.numRequeues(key) } : {}),
        });
        return;
    }
  }
}

/**
 * One line of text for a thrown value and its direct cause. Kubernetes errors go through the
 * normaliser, whose messages never carry response headers (a raw `ApiException` message does).
 */
function describeError(err: unknown): string {
  const head = errorText(err);
  if (
    !(err instanceof Error) ||
    err instanceof KubeError ||
    err instanceof ApiException ||
    err.cause === undefined
  ) {
    return head;
  }
  const cause = errorText(err.cause);
  return head.includes(cause) ? head : `${head}: ${cause}`;
}

function errorText(err: unknown): string {
  const e = err instanceof ApiException ? normalizeKubeError(err) : err;
  if (e instanceof KubeError) return `${e.reason}: ${e.message}`;
  if (e instanceof Error) return e.message;
  return String(e);
}
