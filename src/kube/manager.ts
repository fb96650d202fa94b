import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { Registry } from 'prom-client';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from '../log.js';
import type { ClusterClient } from './clients.js';
import { Controller, type ControllerOptions } from './controller.js';
import { objectKey, type Informer } from './informer.js';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.js';

/**
 * One source of keys for a controller: every add, update or delete the informer sees is
 * mapped to keys (default: the object's own key) and enqueued. On update, the keys of both
 * the old and the new object are enqueued, so that a change of owner reaches both.
 */
export interface ControllerWatch<T extends KubernetesObject = KubernetesObject> {
  informer: Informer<T>;
  map?: (obj: T) => string | readonly string[] | undefined;
}

/** A controller to run, and what it watches. */
export interface ControllerSpec extends Omit<ControllerOptions, 'logger' | 'registry'> {
  // `any`: a spec lists informers of different kinds; each watch is checked where it is written.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  watches: ReadonlyArray<ControllerWatch<any>>;
}

/** Lease settings; every field has a default (see `Manager`). */
export type ManagerLeaderElection = Partial<
  Pick<
    LeaderElectionOptions,
    'namespace' | 'name' | 'identity' | 'leaseDurationSeconds' | 'renewDeadlineSeconds' | 'retryPeriodSeconds'
  >
>;

/** What a `Manager` runs against, and how it elects a leader. */
export interface ManagerOptions {
  /** The hub cluster: where the Lease lives. */
  client: ClusterClient;
  logger: Logger;
  /** Where controller metrics go. Default: a new registry. */
  registry?: Registry;
  /** `false` runs controllers without election (one replica only). Default: on, with the defaults below. */
  leaderElection?: false | ManagerLeaderElection;
  /** Called after leadership was lost and the controllers stopped, e.g. `() => process.exit(1)`. */
  onLeadershipLost?: () => void;
}

/**
 * Runs controllers and their informers, as controller-runtime's manager:
 *
 * - informers start at `start()` on every replica, so a standby has a warm cache and is ready;
 * - controllers start only while this replica leads (Lease `default/sluice-controller-leader`,
 *   or `$POD_NAMESPACE`, identity `hostname_random`), and only once every informer synced;
 *   keys seen meanwhile wait, deduplicated, in the controllers' queues;
 * - on loss of leadership the controllers stop and `onLeadershipLost` is called — the manager
 *   does not campaign again (restart the process, as controller-runtime does);
 * - `stop()` stops the controllers (graceful), releases the lease, then stops the informers.
 */
export class Manager {
  readonly client: ClusterClient;
  readonly logger: Logger;
  readonly registry: Registry;
  readonly #opts: ManagerOptions;
  readonly #controllers: Controller[] = [];
  readonly #informers = new Set<Informer<KubernetesObject>>();
  #elector: LeaderElector | undefined;
  #state: 'new' | 'running' | 'stopped' = 'new';
  #leading = false;

  constructor(opts: ManagerOptions) {
    this.#opts = opts;
    this.client = opts.client;
    this.logger = opts.logger;
    this.registry = opts.registry ?? new Registry();
  }

  /** True while this replica runs the controllers. */
  get isLeader(): boolean {
    return this.#leading;
  }

  /**
   * Registers a controller and hooks its watches to its queue. After `start()`, the
   * informers start at once and the controller starts when this replica leads.
   */
  addController(spec: ControllerSpec): Controller {
    if (this.#state === 'stopped') throw new Error('manager is stopped');
    const { watches, ...controllerOpts } = spec;
    const controller = new Controller({ ...controllerOpts, logger: this.logger, registry: this.registry });
    for (const watch of watches) {
      const map = watch.map ?? objectKey;
      const enqueue = (obj: KubernetesObject) => {
        const keys = map(obj);
        if (typeof keys === 'string') controller.enqueue(keys);
        else for (const key of keys ?? []) controller.enqueue(key);
      };
      watch.informer
        .onAdd(enqueue)
        .onDelete(enqueue)
        .onUpdate((obj, old) => {
          enqueue(old);
          enqueue(obj);
        });
      this.#addInformer(watch.informer);
    }
    this.#controllers.push(controller);
    if (this.#leading) void this.#startWhenSynced([controller]);
    return controller;
  }

  /**
   * Starts the informers and leader election (or, without election, the controllers once
   * synced). Resolves once every informer synced; controllers may start later, when leading.
   */
  async start(): Promise<void> {
    if (this.#state !== 'new') throw new Error(`manager cannot start: it is ${this.#state}`);
    this.#state = 'running';
    for (const informer of this.#informers) void informer.start();

    const election = this.#opts.leaderElection;
    if (election === false) {
      this.#leading = true;
      void this.#startWhenSynced(this.#controllers);
    } else {
      this.#elector = new LeaderElector({
        client: this.client,
        namespace: election?.namespace ?? (process.env.POD_NAMESPACE || 'default'),
        name: election?.name ?? 'sluice-controller-leader',
        identity: election?.identity ?? `${hostname()}_${randomBytes(4).toString('hex')}`,
        leaseDurationSeconds: election?.leaseDurationSeconds,
        renewDeadlineSeconds: election?.renewDeadlineSeconds,
        retryPeriodSeconds: election?.retryPeriodSeconds,
        logger: this.logger,
        onStartedLeading: () => {
          this.#leading = true;
          void this.#startWhenSynced(this.#controllers);
        },
        onStoppedLeading: () => void this.#lostLeadership(),
      });
      this.#elector.start();
    }
    await this.#synced();
  }

  /** Stops controllers (waiting for in-flight reconciles), releases the lease, stops informers. Idempotent. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'stopped';
    this.#leading = false;
    await Promise.all(this.#controllers.map((c) => c.stop()));
    await this.#elector?.stop();
    await Promise.all([...this.#informers].map((i) => i.stop()));
  }

  /** For `/readyz`: running, and every informer holds its first list. Standbys are ready too. */
  ready(): boolean {
    return this.#state === 'running' && [...this.#informers].every((i) => i.hasSynced);
  }

  #addInformer(informer: Informer<KubernetesObject>): void {
    if (this.#informers.has(informer)) return;
    this.#informers.add(informer);
    if (this.#state === 'running') void informer.start();
  }

  /** Resolves when every informer synced; never rejects (a stop before sync just ends the wait). */
  async #synced(): Promise<void> {
    await Promise.all([...this.#informers].map((i) => i.start().catch(() => undefined)));
  }

  async #startWhenSynced(controllers: readonly Controller[]): Promise<void> {
    await this.#synced();
    if (this.#state !== 'running' || !this.#leading) return;
    for (const c of controllers) c.start();
    this.logger.info('controllers started', { controllers: controllers.map((c) => c.name) });
  }

  async #lostLeadership(): Promise<void> {
    this.#leading = false;
    this.logger.error('leadership lost: stopping controllers');
    await Promise.all(this.#controllers.map((c) => c.stop()));
    this.#opts.onLeadershipLost?.();
  }
}
