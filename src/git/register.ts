import { join } from 'node:path';
import type { KubernetesObject, V1Secret } from '@kubernetes/client-node';
import { kindInfo } from '../api/crds.js';
import type { GitSource } from '../api/git-source.js';
import type { Controller } from '../kube/controller.js';
import { EventRecorder } from '../kube/events.js';
import { Informer, objectKey } from '../kube/informer.js';
import type { Manager } from '../kube/manager.js';
import type { BackoffOptions } from '../kube/workqueue.js';
import type { HttpServer } from '../server/http.js';
import { ArtifactStore } from './artifact.js';
import { ArtifactCollector } from './artifact-gc.js';
import { PushReceiver } from './receiver.js';
import { GitSourceReconciler, requestReconcile, sourcesUsingSecret } from './source-reconciler.js';
import { updateNeedsReconcile } from './source-status.js';

/** How the source controllers run. */
export interface SourceControllersOptions {
  /**
   * The controller's storage: artifacts under `<storagePath>/artifacts/<digest hex>/`, Git
   * directories under `<storagePath>/sources/<namespace>/<name>/`. Disk, not memory: a
   * restarted controller finds both (a missing artifact is fetched again).
   */
  storagePath: string;
  /** The server the push receiver (`POST /hooks/<namespace>/<name>`) is mounted on; none: no receiver. */
  receiver?: HttpServer;
  /** Concurrent reconciles (distinct sources). Default 4. */
  workers?: number;
  /**
   * Retry backoff after a failed fetch. Default 1 s doubling up to 60 s: gentle on a Git
   * server that is down, and a source recovers within a minute of it coming back.
   */
  retry?: BackoffOptions;
  /** Webhook body cap in bytes. Default 1 MiB. */
  maxWebhookBodyBytes?: number;
  /**
   * Artifacts kept beyond those a GitSource points at (most recent first), for consumers
   * still applying an older revision. Default 16. Collection runs a minute after a new artifact.
   */
  keepArtifacts?: number;
}

/** What the source controllers offer to the rest of the controller (Delivery, the CLI). */
export interface SourceControllers {
  /**
   * The artifacts, by digest: `artifacts.artifactPath(status.artifact.digest)` is where a
   * consumer reads a GitSource's files (check `artifacts.has(digest)` first: after a restart
   * an artifact is back only once its source reconciled; call `reconcileNow` then).
   */
  readonly artifacts: ArtifactStore;
  /** The GitSource cache (read-only), e.g. for a Delivery to find its source. */
  readonly sources: Informer<GitSource>;
  /** The GitSource controller (its queue, for tests and metrics). */
  readonly controller: Controller;
  /** Reconciles `namespace/name` as soon as a worker is free, in this process (no API write). */
  reconcileNow(namespace: string, name: string): void;
  /**
   * Asks the leader, wherever it runs, to reconcile `namespace/name` now, by setting the
   * `sluice.dev/reconcile-requested-at` annotation (what `sluice reconcile source` and the
   * push receiver do). Resolves with the value written.
   */
  requestReconcile(namespace: string, name: string): Promise<string>;
  /**
   * Removes artifacts no GitSource points at beyond the `keepArtifacts` most recent (also
   * run a minute after each new artifact). Resolves with the digests removed.
   */
  collectArtifacts(): Promise<string[]>;
}

/**
 * Registers the GitSource controller on `manager`: watches GitSources (reconciling on a spec
 * change, a new `sluice.dev/reconcile-requested-at` value, or a deletion — not on status
 * writes) and the Secrets they name in `spec.secretRef` (a fixed Secret is retried at once);
 * mounts the push receiver on `opts.receiver` when given.
 */
export function registerSourceControllers(
  manager: Manager,
  opts: SourceControllersOptions,
): SourceControllers {
  const logger = manager.logger;
  const info = kindInfo('GitSource');
  const sources = new Informer<GitSource>(
    manager.client,
    { apiVersion: info.apiVersion, kind: info.kind, plural: info.plural },
    { logger },
  );
  const secrets = new Informer<V1Secret>(
    manager.client,
    { apiVersion: 'v1', kind: 'Secret', plural: 'secrets' },
    { logger },
  );
  const artifacts = new ArtifactStore(join(opts.storagePath, 'artifacts'));
  const collector = new ArtifactCollector({
    store: artifacts,
    inUse: () => sources.list().flatMap((s) => (s.status?.artifact ? [s.status.artifact.digest] : [])),
    keep: opts.keepArtifacts,
    logger,
  });
  const reconciler = new GitSourceReconciler({
    collector,
    hub: manager.client,
    sources,
    secrets,
    artifacts,
    workRoot: join(opts.storagePath, 'sources'),
    events: new EventRecorder(manager.client, { logger }),
    logger,
  });
  const controller = manager.addController({
    name: 'gitsource',
    workers: opts.workers ?? 4,
    backoff: { baseDelayMs: opts.retry?.baseDelayMs ?? 1000, maxDelayMs: opts.retry?.maxDelayMs ?? 60_000 },
    reconciler,
    watches: [
      // The manager starts and syncs this informer; the handlers below decide what to enqueue.
      { informer: sources, map: () => undefined },
      { informer: secrets, map: (s: KubernetesObject) => sourcesUsingSecret(sources, s) },
    ],
  });
  sources
    .onAdd((s) => controller.enqueue(objectKey(s)))
    .onDelete((s) => controller.enqueue(objectKey(s)))
    .onUpdate((s, old) => {
      if (updateNeedsReconcile(old, s)) controller.enqueue(objectKey(s));
    });

  const request = (namespace: string, name: string) => requestReconcile(manager.client, namespace, name);
  if (opts.receiver) {
    new PushReceiver({
      sources,
      secrets,
      requestReconcile: request,
      logger,
      maxBodyBytes: opts.maxWebhookBodyBytes,
    }).mount(opts.receiver);
  }
  return {
    artifacts,
    sources,
    controller,
    reconcileNow: (namespace, name) => controller.enqueue(`${namespace}/${name}`),
    requestReconcile: request,
    collectArtifacts: () => collector.collect(),
  };
}
