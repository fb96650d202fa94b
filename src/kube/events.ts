import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import {
  PatchStrategy,
  setHeaderOptions,
  type CoreV1Event,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { silentLogger, type Logger } from '../log.js';
import type { ClusterClient } from './clients.js';
import { isAlreadyExists, isNotFound, normalizeKubeError } from './errors.js';
import { kubeTime } from './conditions.js';

/** An Event's type, as Kubernetes spells it. */
export type EventType = 'Normal' | 'Warning';

/** How an `EventRecorder` reports itself and logs; all optional. */
export interface EventRecorderOptions {
  /** `source.component` and `reportingComponent`. Default `sluice-controller`. */
  component?: string;
  logger?: Logger;
  /** Clock, for tests. */
  now?: () => Date;
  /** Repeats remembered for aggregation (oldest forgotten first). Default 4096. */
  maxTracked?: number;
}

// The API server does not bound a core/v1 Event message, but events.k8s.io does (1 kB);
// keep to it so that the same text fits either API.
const MAX_MESSAGE = 1024;
// DNS subdomain limit minus "." and the 16-hex-digit digest.
const MAX_NAME_PREFIX = 253 - 17;

/**
 * The Event name for one (object, type, reason, message): stable, so that a repeat after a
 * restart finds the same Event to bump. `<object name>.<digest>`.
 */
export function eventName(obj: KubernetesObject, type: EventType, reason: string, message: string): string {
  const m = obj.metadata ?? {};
  const digest = createHash('sha256')
    .update(
      [obj.apiVersion, obj.kind, m.namespace ?? '', m.name ?? '', m.uid ?? '', type, reason, message].join(
        '\0',
      ),
    )
    .digest('hex')
    .slice(0, 16);
  const prefix =
    (m.name ?? 'object')
      .toLowerCase()
      .replace(/[^a-z0-9.-]/g, '-')
      .slice(0, MAX_NAME_PREFIX)
      .replace(/^[^a-z0-9]+|[^a-z0-9]+$/g, '') || 'object';
  return `${prefix}.${digest}`;
}

/**
 * Records core/v1 Events about objects, as client-go's recorder does: `involvedObject` from
 * the object, `source.component` set, and repeats of the same (object, type, reason, message)
 * aggregated into one Event whose `count` and `lastTimestamp` are bumped.
 *
 * `record` never throws and never rejects: an Event is a courtesy, not a result. A failed
 * write is logged once (one warning line for that write) and not retried. Events of
 * cluster-scoped objects go to the `default` namespace (as client-go).
 */
export class EventRecorder {
  readonly #client: ClusterClient;
  readonly #component: string;
  readonly #instance = hostname();
  readonly #logger: Logger;
  readonly #now: () => Date;
  readonly #maxTracked: number;
  /** Event name → count last written, in least-recently-used order. */
  readonly #counts = new Map<string, number>();
  /** Event name → the write in flight, so that repeats of one Event are written in turn. */
  readonly #inFlight = new Map<string, Promise<void>>();

  constructor(client: ClusterClient, opts: EventRecorderOptions = {}) {
    this.#client = client;
    this.#component = opts.component ?? 'sluice-controller';
    this.#logger = opts.logger ?? silentLogger();
    this.#now = opts.now ?? (() => new Date());
    this.#maxTracked = opts.maxTracked ?? 4096;
  }

  /** Records a `Normal` event. See `record`. */
  normal(obj: KubernetesObject, reason: string, message: string): Promise<void> {
    return this.record(obj, 'Normal', reason, message);
  }

  /** Records a `Warning` event. See `record`. */
  warning(obj: KubernetesObject, reason: string, message: string): Promise<void> {
    return this.record(obj, 'Warning', reason, message);
  }

  /**
   * Creates the Event, or bumps `count` and `lastTimestamp` of the one already recorded for
   * the same (object, type, reason, message). Resolves when written (or given up); never rejects.
   */
  record(obj: KubernetesObject, type: EventType, reason: string, message: string): Promise<void> {
    const text = message.length > MAX_MESSAGE ? `${message.slice(0, MAX_MESSAGE - 3)}...` : message;
    const name = eventName(obj, type, reason, text);
    const previous = this.#inFlight.get(name) ?? Promise.resolve();
    const write = previous
      .then(() => this.#write(name, obj, type, reason, text))
      .catch((err: unknown) => {
        const e = normalizeKubeError(err);
        this.#logger.warn('event not recorded', {
          object: `${obj.kind} ${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${obj.metadata?.name}`,
          reason,
          error: e.message,
          errorReason: e.reason,
        });
      })
      .finally(() => {
        if (this.#inFlight.get(name) === write) this.#inFlight.delete(name);
      });
    this.#inFlight.set(name, write);
    return write;
  }

  async #write(
    name: string,
    obj: KubernetesObject,
    type: EventType,
    reason: string,
    message: string,
  ): Promise<void> {
    const namespace = obj.metadata?.namespace || 'default';
    const at = this.#now();
    const now = kubeTime(at);
    const known = this.#counts.get(name);
    if (known !== undefined) {
      try {
        await this.#bump(name, namespace, known + 1, now);
        return;
      } catch (err) {
        // Events expire (the API server's --event-ttl, 1 h by default): start a new one.
        if (!isNotFound(err)) throw err;
        this.#counts.delete(name);
      }
    }
    const event: CoreV1Event = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace },
      involvedObject: {
        apiVersion: obj.apiVersion,
        kind: obj.kind,
        name: obj.metadata?.name,
        namespace: obj.metadata?.namespace,
        uid: obj.metadata?.uid,
        resourceVersion: obj.metadata?.resourceVersion,
      },
      type,
      reason,
      message,
      count: 1,
      firstTimestamp: at,
      lastTimestamp: at,
      source: { component: this.#component, host: this.#instance },
      reportingComponent: this.#component,
      reportingInstance: this.#instance,
    };
    try {
      await this.#client.core.createNamespacedEvent({ namespace, body: event });
      this.#remember(name, 1);
    } catch (err) {
      // Recorded before this process started (or by another replica): bump that one.
      if (!isAlreadyExists(err)) throw err;
      const existing = await this.#client.core.readNamespacedEvent({ name, namespace });
      await this.#bump(name, namespace, (existing.count ?? 1) + 1, now);
    }
  }

  async #bump(name: string, namespace: string, count: number, now: string): Promise<void> {
    await this.#client.core.patchNamespacedEvent(
      { name, namespace, body: { count, lastTimestamp: now } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    );
    this.#remember(name, count);
  }

  #remember(name: string, count: number): void {
    this.#counts.delete(name);
    this.#counts.set(name, count);
    if (this.#counts.size > this.#maxTracked) {
      const oldest = this.#counts.keys().next().value;
      if (oldest !== undefined) this.#counts.delete(oldest);
    }
  }
}
