import {
  Observable,
  V1MicroTime,
  type ConfigurationOptions,
  type RequestContext,
  type ResponseContext,
  type V1Lease,
  type V1LeaseSpec,
} from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../log.js';
import type { ClusterClient } from './clients.js';
import { isConflict, isAlreadyExists, isNotFound, normalizeKubeError } from './errors.js';

/** One candidate's Lease, identity, timings (client-go's defaults) and callbacks. */
export interface LeaderElectionOptions {
  client: ClusterClient;
  /** The Lease's namespace and name. */
  namespace: string;
  name: string;
  /** This candidate, unique among candidates (e.g. pod name + random suffix). */
  identity: string;
  /** How long a lease holds without renewal. Whole seconds (the Lease field is an integer). Default 15. */
  leaseDurationSeconds?: number;
  /** The leader gives up when it could not renew for this long; must be < the lease duration. Default 10. */
  renewDeadlineSeconds?: number;
  /** Time between attempts to acquire or renew. Default 2. */
  retryPeriodSeconds?: number;
  /** Called once, when this candidate becomes leader. */
  onStartedLeading?: () => void;
  /** Called once, when this candidate loses the lease (renewal failed past the deadline or another holder took it). Not called by `stop()`. */
  onStoppedLeading?: () => void;
  /** Called whenever the observed holder changes (`''` when the lease is free). */
  onNewLeader?: (identity: string) => void;
  logger?: Logger;
}

/** Per-request timeout, so that a hung API call cannot hold the loop past the renew deadline. */
function timeoutOptions(ms: number): ConfigurationOptions {
  return {
    middleware: [
      {
        pre: (ctx: RequestContext) => {
          ctx.setSignal(AbortSignal.timeout(ms));
          return new Observable(Promise.resolve(ctx));
        },
        post: (res: ResponseContext) => new Observable(Promise.resolve(res)),
      },
    ],
    middlewareMergeStrategy: 'append',
  };
}

/** What was last seen in the Lease; compared as a whole to tell whether the holder renewed. */
interface Observed {
  holder: string;
  record: string;
  leaseDurationSeconds: number;
  /** Local clock time of the last change: expiry is judged on the local clock, never on the holder's (no skew). */
  at: number;
}

/**
 * Leader election on a `coordination.k8s.io/v1` Lease, as client-go's `leaderelection`:
 *
 * - a candidate takes the lease when it is free (no holder) or expired — unchanged for
 *   `leaseDurationSeconds` by this process's clock since it was last seen to change;
 * - the leader renews every `retryPeriodSeconds`; when it could not renew for
 *   `renewDeadlineSeconds` (or finds another holder) it stops leading and calls
 *   `onStoppedLeading` — it does not campaign again: like controller-runtime, the process is
 *   expected to stop its controllers (or exit);
 * - every write carries the `resourceVersion` read just before; a 409 means someone else
 *   wrote first, and is retried on the next period;
 * - `stop()` releases a held lease (holder cleared, duration 1 s) so a standby takes over
 *   at its next attempt instead of waiting for expiry.
 */
export class LeaderElector {
  readonly identity: string;
  readonly #opts: LeaderElectionOptions;
  readonly #logger: Logger;
  readonly #leaseDurationSeconds: number;
  readonly #renewDeadlineMs: number;
  readonly #retryPeriodMs: number;
  readonly #requestOptions: ConfigurationOptions;
  #observed: Observed | undefined;
  #leader = false;
  #lastRenew = 0;
  #state: 'new' | 'running' | 'done' = 'new';
  #loop: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #wake: (() => void) | undefined;

  constructor(opts: LeaderElectionOptions) {
    this.#opts = opts;
    this.identity = opts.identity;
    this.#leaseDurationSeconds = opts.leaseDurationSeconds ?? 15;
    this.#renewDeadlineMs = (opts.renewDeadlineSeconds ?? 10) * 1000;
    this.#retryPeriodMs = (opts.retryPeriodSeconds ?? 2) * 1000;
    if (!Number.isInteger(this.#leaseDurationSeconds) || this.#leaseDurationSeconds < 1) {
      throw new RangeError('leaseDurationSeconds must be a whole number of seconds >= 1');
    }
    if (!(this.#renewDeadlineMs < this.#leaseDurationSeconds * 1000)) {
      throw new RangeError('renewDeadlineSeconds must be less than leaseDurationSeconds');
    }
    if (!(this.#retryPeriodMs > 0 && this.#retryPeriodMs < this.#renewDeadlineMs)) {
      throw new RangeError('retryPeriodSeconds must be > 0 and less than renewDeadlineSeconds');
    }
    this.#requestOptions = timeoutOptions(Math.max(1000, Math.floor(this.#renewDeadlineMs / 2)));
    this.#logger = (opts.logger ?? silentLogger()).child({
      lease: `${opts.namespace}/${opts.name}`,
      identity: opts.identity,
    });
  }

  /** True while this candidate holds the lease (and has renewed it within the renew deadline). */
  get isLeader(): boolean {
    return this.#leader;
  }

  /** The holder last seen in the Lease (`''` when free, `undefined` before the first read). */
  get leader(): string | undefined {
    return this.#observed?.holder;
  }

  /** Starts campaigning in the background. Idempotent; a stopped elector does not start again. */
  start(): void {
    if (this.#state !== 'new') return;
    this.#state = 'running';
    this.#loop = this.#run();
  }

  /**
   * Stops campaigning and, when leading and `release` is not false, releases the lease so a
   * standby takes over at once. `release: false` leaves the lease to expire, as a crash would.
   * Does not call `onStoppedLeading`.
   */
  async stop(opts: { release?: boolean } = {}): Promise<void> {
    const wasRunning = this.#state === 'running';
    this.#state = 'done';
    clearTimeout(this.#timer);
    this.#wake?.();
    await this.#loop;
    if (wasRunning && this.#leader && opts.release !== false) await this.#release();
    this.#leader = false;
  }

  async #run(): Promise<void> {
    while (this.#state === 'running') {
      const ok = await this.#tryAcquireOrRenew();
      if (this.#state !== 'running') {
        // stop() came during the attempt: if it won the lease, stop() must release it.
        if (ok) this.#leader = true;
        return;
      }
      const now = Date.now();
      if (this.#leader) {
        if (ok) {
          this.#lastRenew = now;
        } else if (now - this.#lastRenew > this.#renewDeadlineMs || this.#heldByOther()) {
          this.#leader = false;
          this.#state = 'done';
          this.#logger.warn('leadership lost', { holder: this.#observed?.holder ?? '' });
          this.#opts.onStoppedLeading?.();
          return;
        }
      } else if (ok) {
        this.#leader = true;
        this.#lastRenew = now;
        this.#logger.info('became leader');
        this.#opts.onStartedLeading?.();
      }
      // Candidates retry with jitter (as client-go's JitterUntil, factor 1.2) so that standbys
      // do not hit the API server in step; the leader renews on a steady period.
      const delay = this.#leader ? this.#retryPeriodMs : this.#retryPeriodMs * (1 + Math.random() * 1.2);
      await this.#sleep(delay);
    }
  }

  #heldByOther(): boolean {
    const holder = this.#observed?.holder;
    return holder !== undefined && holder !== '' && holder !== this.identity;
  }

  /** One attempt; true when this candidate holds the lease afterwards. Never throws. */
  async #tryAcquireOrRenew(): Promise<boolean> {
    const { client, namespace, name } = this.#opts;
    const now = new V1MicroTime(Date.now());
    let lease: V1Lease;
    try {
      lease = await client.coordination.readNamespacedLease({ name, namespace }, this.#requestOptions);
    } catch (err) {
      if (!isNotFound(err)) return this.#failed('read lease', err);
      return this.#create(now);
    }

    const spec = lease.spec ?? {};
    this.#observe(spec);
    const observed = this.#observed!;
    const mine = observed.holder === this.identity;
    const expired = Date.now() > observed.at + observed.leaseDurationSeconds * 1000;
    if (observed.holder !== '' && !mine && !expired) return false;

    const next: V1LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.#leaseDurationSeconds,
      acquireTime: mine && spec.acquireTime ? spec.acquireTime : now,
      renewTime: now,
      leaseTransitions: mine ? (spec.leaseTransitions ?? 0) : (spec.leaseTransitions ?? 0) + 1,
    };
    return this.#replace(lease, next);
  }

  async #create(now: V1MicroTime): Promise<boolean> {
    const { client, namespace, name } = this.#opts;
    const spec: V1LeaseSpec = {
      holderIdentity: this.identity,
      leaseDurationSeconds: this.#leaseDurationSeconds,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };
    try {
      const created = await client.coordination.createNamespacedLease(
        {
          namespace,
          body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec },
        },
        this.#requestOptions,
      );
      this.#observe(created.spec ?? spec);
      return true;
    } catch (err) {
      if (isAlreadyExists(err)) return false; // another candidate created it first
      return this.#failed('create lease', err);
    }
  }

  async #replace(lease: V1Lease, spec: V1LeaseSpec): Promise<boolean> {
    const { client, namespace, name } = this.#opts;
    try {
      // metadata carries the resourceVersion just read: a concurrent write makes this a 409.
      const updated = await client.coordination.replaceNamespacedLease(
        { name, namespace, body: { ...lease, spec } },
        this.#requestOptions,
      );
      this.#observe(updated.spec ?? spec);
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      return this.#failed('update lease', err);
    }
  }

  async #release(): Promise<void> {
    const { client, namespace, name } = this.#opts;
    try {
      const lease = await client.coordination.readNamespacedLease({ name, namespace }, this.#requestOptions);
      if (lease.spec?.holderIdentity !== this.identity) return;
      const now = new V1MicroTime(Date.now());
      // As client-go's release: no holder, and a 1 s duration for readers that only look at times.
      const spec: V1LeaseSpec = {
        holderIdentity: '',
        leaseDurationSeconds: 1,
        acquireTime: now,
        renewTime: now,
        leaseTransitions: lease.spec.leaseTransitions ?? 0,
      };
      await client.coordination.replaceNamespacedLease(
        { name, namespace, body: { ...lease, spec } },
        this.#requestOptions,
      );
      this.#logger.info('lease released');
    } catch (err) {
      // Not fatal: the lease then expires after its duration.
      const e = normalizeKubeError(err);
      this.#logger.warn('could not release lease', { error: e.message, reason: e.reason });
    }
  }

  #observe(spec: V1LeaseSpec): void {
    const holder = spec.holderIdentity ?? '';
    // renewTime comes back as the server's string: V1MicroTime is not in client-node's type map.
    const record = JSON.stringify([
      holder,
      String(spec.renewTime ?? ''),
      spec.leaseTransitions ?? 0,
      spec.leaseDurationSeconds,
    ]);
    if (this.#observed?.record === record) return;
    const previous = this.#observed?.holder;
    this.#observed = {
      holder,
      record,
      leaseDurationSeconds: spec.leaseDurationSeconds ?? this.#leaseDurationSeconds,
      at: Date.now(),
    };
    if (previous !== holder) this.#opts.onNewLeader?.(holder);
  }

  #failed(what: string, err: unknown): false {
    const e = normalizeKubeError(err, what);
    this.#logger.warn('leader election attempt failed', { error: e.message, reason: e.reason });
    return false;
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(this.#timer);
        this.#wake = undefined;
        resolve();
      };
      this.#timer = setTimeout(done, ms);
      this.#wake = done;
    });
  }
}
