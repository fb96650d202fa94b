import type { Logger } from '../log.js';
import type { ArtifactStore } from './artifact.js';

/** How an {@link ArtifactCollector} decides what to keep. */
export interface ArtifactCollectorOptions {
  store: ArtifactStore;
  /** The digests something still points at (every GitSource's `status.artifact.digest`): never removed. */
  inUse: () => Iterable<string>;
  /**
   * Artifacts kept beyond those in use, most recently stored or used first: a consumer may
   * still be applying a revision its source has moved past. Keep it above the number of
   * concurrent fetches. Default 16.
   */
  keep?: number;
  /** A scheduled collection runs this long after the first `schedule()` call. Default 60 s. */
  delayMs?: number;
  logger: Logger;
}

/**
 * Bounds the disk the artifact store uses: removes artifacts no GitSource points at, beyond
 * the `keep` most recent. `ArtifactStore.gc` is not safe against a concurrent `put` or
 * `has`+`touch` of the digest it removes, so every fetch runs inside `use()` and a collection
 * waits until none runs (and holds new ones back while it runs): a fetch never returns the
 * path of an artifact a collection is removing. In-process only, like the store's other locks.
 */
export class ArtifactCollector {
  readonly #o: ArtifactCollectorOptions;
  #active = 0;
  #idle: Array<() => void> = [];
  #collecting: Promise<unknown> | undefined;
  #timer: NodeJS.Timeout | undefined;

  constructor(opts: ArtifactCollectorOptions) {
    this.#o = opts;
  }

  /** Runs `fn` (a fetch, or anything that reads or writes artifacts) while no collection runs. */
  async use<T>(fn: () => Promise<T>): Promise<T> {
    while (this.#collecting) await this.#collecting.catch(() => undefined);
    this.#active++;
    try {
      return await fn();
    } finally {
      this.#active--;
      if (this.#active === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  /** Collects now, once in-flight `use()` calls finished. Resolves with the digests removed. */
  async collect(): Promise<string[]> {
    while (this.#collecting) await this.#collecting.catch(() => undefined);
    const run = (async () => {
      if (this.#active > 0) await new Promise<void>((wake) => this.#idle.push(wake));
      return this.#o.store.gc({ keep: Math.max(1, this.#o.keep ?? 16), inUse: this.#o.inUse() });
    })();
    this.#collecting = run;
    try {
      const removed = await run;
      if (removed.length > 0) this.#o.logger.info('artifacts collected', { removed: removed.length });
      return removed;
    } finally {
      this.#collecting = undefined;
    }
  }

  /** Asks for a collection soon; calls before it runs are folded into one. Never throws. */
  schedule(): void {
    if (this.#timer) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.collect().catch((err: unknown) =>
        this.#o.logger.warn('artifact collection failed', {
          error: err instanceof Error ? err.message : String(err),
        }),
      );
    }, this.#o.delayMs ?? 60_000);
    this.#timer.unref();
  }

  /** Cancels a scheduled collection (one already running finishes). */
  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
