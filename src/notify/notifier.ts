import { silentLogger, type Logger } from '../log.js';
import type { NotifyTarget } from './flags.js';
import { genericPayload, slackPayload, type Notification } from './payload.js';

/** Knobs for {@link Notifier}; the defaults are for production. */
export interface NotifierOptions {
  logger?: Logger;
  /** Calls per notification and receiver, first included. Default 5. */
  maxAttempts?: number;
  /** Wait before retry `i` (1-based). Default 1 s × 2^(i-1), at most 30 s. */
  backoffMs?: (retry: number) => number;
  /** Bound on one call. Default 10 s. */
  timeoutMs?: number;
  /** Deliveries in flight (retries included) beyond which new notifications are dropped. Default 1000. */
  maxPending?: number;
  now?: () => Date;
}

/** How one delivery ended, for logs and tests. */
export interface DeliveryResult {
  readonly target: NotifyTarget;
  readonly delivered: boolean;
  readonly attempts: number;
  readonly message: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Posts notifications to Slack-compatible and generic JSON webhooks.
 *
 * Guarantees: `notify` never blocks and never throws — a rollback must not wait on a chat
 * server; each receiver gets its own delivery, retried with backoff on network errors,
 * timeouts, 429 and 5xx up to `maxAttempts`, given up at once on other 4xx (the receiver
 * has answered; asking again will not change it); every give-up is one `warn` log line
 * naming the receiver's origin only (a Slack webhook's path is its secret); at most
 * `maxPending` deliveries are in flight, later ones are dropped with a warning rather than
 * growing memory while a receiver is down. Best effort, in memory: a restart loses what is
 * in flight (status and Events keep the record).
 */
export class Notifier {
  readonly #targets: readonly NotifyTarget[];
  readonly #log: Logger;
  readonly #maxAttempts: number;
  readonly #backoff: (retry: number) => number;
  readonly #timeoutMs: number;
  readonly #maxPending: number;
  readonly #now: () => Date;
  readonly #pending = new Set<Promise<DeliveryResult>>();
  readonly #results: DeliveryResult[] = [];

  constructor(targets: readonly NotifyTarget[], opts: NotifierOptions = {}) {
    this.#targets = targets;
    this.#log = opts.logger ?? silentLogger();
    this.#maxAttempts = Math.max(1, opts.maxAttempts ?? 5);
    this.#backoff = opts.backoffMs ?? ((i) => Math.min(30_000, 1000 * 2 ** (i - 1)));
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    this.#maxPending = opts.maxPending ?? 1000;
    this.#now = opts.now ?? (() => new Date());
  }

  /** True when there is at least one receiver (callers may skip building messages otherwise). */
  get enabled(): boolean {
    return this.#targets.length > 0;
  }

  /** Queues `n` for every receiver and returns at once. */
  notify(n: Notification): void {
    const at = this.#now();
    for (const target of this.#targets) {
      if (this.#pending.size >= this.#maxPending) {
        this.#log.warn('notification dropped: too many deliveries pending', {
          receiver: origin(target.url),
          release: `${n.namespace}/${n.name}`,
          reason: n.reason,
        });
        continue;
      }
      const body = target.kind === 'slack' ? slackPayload(n) : genericPayload(n, at);
      const delivery = this.#deliver(target, JSON.stringify(body)).then((result) => {
        this.#pending.delete(delivery);
        this.#results.push(result);
        if (this.#results.length > 100) this.#results.shift();
        if (!result.delivered) {
          this.#log.warn('notification not delivered', {
            receiver: origin(target.url),
            kind: target.kind,
            release: `${n.namespace}/${n.name}`,
            reason: n.reason,
            attempts: result.attempts,
            error: result.message,
          });
        }
        return result;
      });
      this.#pending.add(delivery);
    }
  }

  /** Resolves when every delivery queued so far has ended (tests; a graceful shutdown). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** The newest results (at most 100), oldest first. */
  results(): readonly DeliveryResult[] {
    return [...this.#results];
  }

  async #deliver(target: NotifyTarget, body: string): Promise<DeliveryResult> {
    let message = '';
    for (let attempt = 1; attempt <= this.#maxAttempts; attempt++) {
      if (attempt > 1) await sleep(this.#backoff(attempt - 1));
      let retry: boolean;
      try {
        const res = await fetch(target.url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json', 'User-Agent': 'sluice' },
          body,
          signal: AbortSignal.timeout(this.#timeoutMs),
        });
        await res.arrayBuffer().catch(() => undefined);
        if (res.ok) return { target, delivered: true, attempts: attempt, message: `HTTP ${res.status}` };
        message = `HTTP ${res.status}`;
        retry = res.status >= 500 || res.status === 429;
      } catch (err) {
        const e = err as { name?: string; message?: string; cause?: { code?: string } };
        message =
          e.name === 'TimeoutError'
            ? `no answer within ${this.#timeoutMs} ms`
            : `call failed: ${e.cause?.code ?? e.message ?? String(err)}`;
        retry = true;
      }
      if (!retry) return { target, delivered: false, attempts: attempt, message };
    }
    return { target, delivered: false, attempts: this.#maxAttempts, message };
  }
}

function origin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '<invalid URL>';
  }
}
