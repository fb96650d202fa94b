import type { FeatureGates } from '../features.js';
import type { CanaryRelease } from '../api/canary-release.js';
import { OPERATOR_ACTIONS, operatorAnnotation } from '../api/canary-release.js';
import { kindInfo } from '../api/crds.js';
import type { Delivery } from '../api/delivery.js';
import { updateNeedsReconcile } from '../git/source-status.js';
import type { Controller } from '../kube/controller.js';
import { EventRecorder } from '../kube/events.js';
import { Informer, objectKey, type InformerOptions } from '../kube/informer.js';
import type { Manager } from '../kube/manager.js';
import type { Notifier } from '../notify/notifier.js';
import type { RouterFactory } from './executor.js';
import { rolloutMetrics } from './metrics.js';
import { CanaryReleaseReconciler, type MemberClientLookup } from './reconciler.js';

/** What the CanaryRelease controller needs from the rest of the controller process. */
export interface RolloutControllersOptions {
  /** One client per member cluster (`registerPlacementControllers(...).members`). */
  members: MemberClientLookup;
  /** The Delivery informer (`registerDeliveryControllers(...).deliveries`); one is made when unset. */
  deliveries?: Informer<Delivery>;
  /** Scratch directory for Git write-back (the controller's storage path). */
  storagePath: string;
  notifier?: Pick<Notifier, 'notify'>;
  routerFor?: RouterFactory;
  features?: Pick<FeatureGates, 'enabled'>;
  /** Releases reconciled at once (ticks wait on I/O, not CPU). Default 16. */
  workers?: number;
  informer?: InformerOptions;
}

/** True when an update of a release needs a tick before its requeue: spec, deletion, or an operator request. */
export function releaseUpdateNeedsTick(old: CanaryRelease, obj: CanaryRelease): boolean {
  if (updateNeedsReconcile(old, obj)) return true;
  return OPERATOR_ACTIONS.some(
    (a) =>
      old.metadata.annotations?.[operatorAnnotation(a)] !== obj.metadata.annotations?.[operatorAnnotation(a)],
  );
}

/** The keys of the releases in `d`'s namespace whose deliveryRef names it. */
export function releasesFollowing(releases: Informer<CanaryRelease>, d: Delivery): string[] {
  const ns = d.metadata?.namespace;
  return releases
    .list()
    .filter((r) => r.metadata.namespace === ns && r.spec?.deliveryRef?.name === d.metadata?.name)
    .map((r) => objectKey(r));
}

/**
 * Registers the `canaryrelease` controller on `manager`. Releases are ticked on a spec change,
 * an operator request (`sluice.dev/{promote,abort,pause,resume,retry}`), a deletion, and when
 * the Delivery they follow applied a new revision or changed clusters — not on their own status
 * writes; between those, each tick asks for the next one (the step interval, or sooner while
 * something settles).
 */
export function registerRolloutControllers(
  manager: Manager,
  opts: RolloutControllersOptions,
): { controller: Controller; releases: Informer<CanaryRelease> } {
  const logger = manager.logger;
  const informerOpts: InformerOptions = { logger, ...opts.informer };
  const resource = (kind: 'CanaryRelease' | 'Delivery') => {
    const info = kindInfo(kind);
    return { apiVersion: info.apiVersion, kind, plural: info.plural };
  };
  const releases = new Informer<CanaryRelease>(manager.client, resource('CanaryRelease'), informerOpts);
  const deliveries =
    opts.deliveries ?? new Informer<Delivery>(manager.client, resource('Delivery'), informerOpts);
  const events = new EventRecorder(manager.client, { logger });
  const controller = manager.addController({
    name: 'canaryrelease',
    // A tick mostly waits on apiservers and Prometheus: 48 at once keep 200 releases whose
    // ticks fall due together within a second of their time (bench/rollout.ts: tick-lag p99
    // 1.5 s with 16 workers, 0.4–0.9 s with 48; RSS +25 MiB).
    workers: opts.workers ?? 48,
    reconciler: new CanaryReleaseReconciler({
      hub: manager.client,
      releases,
      deliveries,
      members: opts.members,
      events,
      logger,
      storagePath: opts.storagePath,
      metrics: rolloutMetrics(manager.registry),
      ...(opts.notifier ? { notifier: opts.notifier } : {}),
      ...(opts.routerFor ? { routerFor: opts.routerFor } : {}),
      ...(opts.features ? { features: opts.features } : {}),
    }),
    watches: [
      { informer: releases, map: () => undefined },
      { informer: deliveries, map: () => undefined },
    ],
  });
  releases
    .onAdd((r) => controller.enqueue(objectKey(r)))
    .onDelete((r) => controller.enqueue(objectKey(r)))
    .onUpdate((r, old) => {
      if (releaseUpdateNeedsTick(old, r)) controller.enqueue(objectKey(r));
    });
  deliveries
    .onAdd((d) => releasesFollowing(releases, d).forEach((k) => controller.enqueue(k)))
    .onUpdate((d, old) => {
      const clusters = (x: Delivery) =>
        JSON.stringify((x.status?.clusters ?? []).map((c) => [c.name, c.revision]));
      if (
        old.status?.lastAppliedRevision !== d.status?.lastAppliedRevision ||
        clusters(old) !== clusters(d)
      ) {
        releasesFollowing(releases, d).forEach((k) => controller.enqueue(k));
      }
    });
  return { controller, releases };
}
