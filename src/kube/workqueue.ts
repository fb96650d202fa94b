/** Per-key exponential backoff of a `WorkQueue`. */
export interface BackoffOptions {
  /** Delay after the first failure; doubles with each further one. Default 5 ms (client-go). */
  baseDelayMs?: number;
  /** Upper bound of the delay. Default 5 minutes. */
  maxDelayMs?: number;
}

/**
 * The delay before retry number `failures + 1`: `base * 2^failures`, capped at `max`.
 * Pure, so the growth and the cap can be checked without timers.
 */
export function backoffDelay(failures: number, baseDelayMs: number, maxDelayMs: number): number {
  // 2^failures overflows to Infinity long before it matters; min() still caps it.
  return Math.min(baseDelayMs * 2 ** failures, maxDelayMs);
}

/**
 * A keyed work queue with client-go's semantics, for level-triggered controllers:
 *
 * - **dedup**: a key added several times before a worker takes it is handed out once;
 * - **one at a time per key**: a key is never handed out while it is being processed; a key
 *   added during processing is handed out again after `done(key)`;
 * - **backoff**: `addRateLimited(key)` re-adds after `base * 2^n` (capped) where `n` counts the
 *   key's failures since its last `forget(key)`;
 * - **delayed add**: `addAfter(key, ms)` (a key already waiting keeps its earlier time);
 * - **shutdown**: after `shutDown()`, pending and future `get()` calls resolve `undefined`,
 *   adds are ignored and queued keys are dropped (level-triggered: the next start relists).
 *
 * FIFO among ready keys. Keys are opaque strings (`namespace/name` by convention).
 */
export class WorkQueue {
  readonly name: string;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  /** Ready keys in hand-out order; every key here is also in `#dirty`. */
  #queue: string[] = [];
  /** Keys that need processing (queued, or added again while processing). */
  readonly #dirty = new Set<string>();
  readonly #processing = new Set<string>();
  readonly #failures = new Map<string, number>();
  readonly #waiting = new Map<string, { readyAt: number; timer: NodeJS.Timeout }>();
  #getters: Array<(key: string | undefined) => void> = [];
  #shuttingDown = false;

  constructor(name = 'queue', backoff: BackoffOptions = {}) {
    this.name = name;
    this.#baseDelayMs = backoff.baseDelayMs ?? 5;
    this.#maxDelayMs = backoff.maxDelayMs ?? 300_000;
    if (!(this.#baseDelayMs > 0) || !(this.#maxDelayMs >= this.#baseDelayMs)) {
      throw new RangeError(`work queue ${name}: need 0 < baseDelayMs <= maxDelayMs`);
    }
  }

  /** Keys ready to be handed out now (neither processing nor waiting for a delay). */
  get length(): number {
    return this.#queue.length;
  }

  get shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Marks `key` as needing processing. No-op after `shutDown()`. */
  add(key: string): void {
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.add(key);
    // A key being processed goes back in the queue on done(), not now.
    if (this.#processing.has(key)) return;
    const getter = this.#getters.shift();
    if (getter) {
      this.#handOut(key, getter);
    } else {
      this.#queue.push(key);
    }
  }

  /**
   * The next key to process; waits until one is ready. Resolves `undefined` once the queue
   * is shut down. The caller must call `done(key)` when finished with it.
   */
  get(): Promise<string | undefined> {
    if (this.#shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const key = this.#queue.shift();
      if (key === undefined) {
        this.#getters.push(resolve);
      } else {
        this.#handOut(key, resolve);
      }
    });
  }

  /** Ends processing of `key`; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.#processing.delete(key);
    if (this.#dirty.has(key) && !this.#shuttingDown) {
      this.#dirty.delete(key);
      this.add(key);
    }
  }

  /** Adds `key` after `delayMs` (at once when `delayMs <= 0`). A key already waiting keeps the earlier time. */
  addAfter(key: string, delayMs: number): void {
    if (this.#shuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(key);
      return;
    }
    const readyAt = Date.now() + delayMs;
    const waiting = this.#waiting.get(key);
    if (waiting && waiting.readyAt <= readyAt) return;
    if (waiting) clearTimeout(waiting.timer);
    const timer = setTimeout(() => {
      this.#waiting.delete(key);
      this.add(key);
    }, delayMs);
    this.#waiting.set(key, { readyAt, timer });
  }

  /** Adds `key` after its backoff delay and counts one more failure for it. */
  addRateLimited(key: string): void {
    if (this.#shuttingDown) return;
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    this.addAfter(key, backoffDelay(failures, this.#baseDelayMs, this.#maxDelayMs));
  }

  /** Resets `key`'s failure count (call after a success or a terminal error). */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  /** Failures counted for `key` since its last `forget`. */
  numRequeues(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** Stops the queue: waiting `get()` calls resolve `undefined`, timers are cleared, keys dropped. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const { timer } of this.#waiting.values()) clearTimeout(timer);
    this.#waiting.clear();
    this.#queue = [];
    this.#dirty.clear();
    const getters = this.#getters;
    this.#getters = [];
    for (const getter of getters) getter(undefined);
  }

  #handOut(key: string, resolve: (key: string) => void): void {
    this.#dirty.delete(key);
    this.#processing.add(key);
    resolve(key);
  }
}
