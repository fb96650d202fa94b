/**
 * The Delivery reconciler: artifact → render → gate on every placed cluster → staged apply,
 * prune and health per cluster → one status write → Events. Level-triggered: every run reads
 * the Delivery, its GitSource's artifact and its PlacementRule's decisions afresh, and every
 * state it needs to resume (clusters, health-wait start, history) is in status or, for the
 * inventory, on the member clusters.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { parseDuration } from '../api/duration.js';
import type { Delivery } from '../api/delivery.js';
import type { GitSource } from '../api/git-source.js';
import type { PlacementRule } from '../api/placement-rule.js';
import { kindInfo } from '../api/crds.js';
import type { ArtifactStore } from '../git/artifact.js';
import { RECONCILE_REQUESTED_ANNOTATION } from '../api/reconcile-request.js';
import type { ClusterClient } from '../kube/clients.js';
import type { ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound, normalizeKubeError } from '../kube/errors.js';
import type { EventRecorder } from '../kube/events.js';
import type { Informer } from '../kube/informer.js';
import { writeStatus } from '../kube/status.js';
import type { Logger } from '../log.js';
import {
  ApplyTimeoutError,
  executePlan,
  mapBounded,
  planCluster,
  removeFromCluster,
  withTimeout,
  type ClusterApplyInput,
  type ClusterApplyResult,
  type ClusterPlan,
  type ClusterRemoveResult,
} from './applier.js';
import {
  healthWaitStart,
  nextDeliveryStatus,
  type ClusterOutcome,
  type DeliveryOutcome,
  type RemovedCluster,
} from './delivery-status.js';
import { healthVerdict } from './health.js';
import type { RenderedObject } from './objects.js';
import { renderDirectory, renderProblems, type KustomizeRunner } from './render.js';
import { listReleaseRollbacks, rolledBackBy } from './rolled-back.js';

const DEFAULT_INTERVAL_MS = 5 * 60_000;
const DEFAULT_HEALTH_TIMEOUT_MS = 5 * 60_000;
const MAX_RENDER_ERRORS = 5;

/** The member clients a Delivery applies with (filled by the Cluster reconciler). */
export interface MemberClientLookup {
  get(cluster: string): ClusterClient | undefined;
}

/** What a `DeliveryReconciler` works with; every tuning field has a production default. */
export interface DeliveryReconcilerOptions {
  hub: ClusterClient;
  deliveries: Informer<Delivery>;
  sources: Informer<GitSource>;
  placements: Informer<PlacementRule>;
  members: MemberClientLookup;
  artifacts: ArtifactStore;
  events: EventRecorder;
  logger: Logger;
  kustomize?: KustomizeRunner;
  /** Clusters applied at once per Delivery. Default 4. */
  clusterConcurrency?: number;
  /** Requests in flight per cluster. Default 16. */
  requestConcurrency?: number;
  /** Bound on one cluster's gate + apply + prune. Default 2 minutes. */
  applyTimeoutMs?: number;
  /** How often health is looked at again while waiting. Default 5 s. */
  healthPollMs?: number;
  /** Retry delay for a missing artifact, a pending or unreachable cluster. Default 10 s. */
  retryMs?: number;
  now?: () => Date;
}

interface Memo {
  readonly fingerprint: string;
  readonly due: number;
}

/**
 * What applying Delivery `d` to `cluster` takes: its owner (the labels stamped on every object
 * and the inventory key), `targetNamespace` and `prune` from the spec. The one place that maps a
 * Delivery to an apply, shared by the reconciler and `sluice diff`.
 */
export function deliveryApplyInput(
  d: Delivery,
  cluster: string,
  client: ClusterClient,
  objects: readonly RenderedObject[],
  tuning: { readonly concurrency?: number; readonly deadline: number },
): ClusterApplyInput {
  return {
    client,
    owner: { namespace: d.metadata?.namespace ?? '', name: d.metadata?.name ?? '', cluster },
    objects,
    targetNamespace: d.spec.targetNamespace,
    prune: d.spec.prune !== false,
    ...(tuning.concurrency === undefined ? {} : { concurrency: tuning.concurrency }),
    deadline: tuning.deadline,
  };
}

/** Why a cluster's work ended early. */
type ClusterRun =
  | { readonly kind: 'pending' }
  | { readonly kind: 'plan'; readonly plan: ClusterPlan }
  | { readonly kind: 'applied'; readonly result: ClusterApplyResult }
  | {
      readonly kind: 'failed';
      readonly unreachable: boolean;
      readonly message: string;
      readonly apiNotServed?: boolean;
    };

/**
 * Applies each Delivery to the clusters its PlacementRule decides.
 *
 * Guarantees: nothing is applied or pruned anywhere when the artifact is missing, the render
 * failed, was empty, or any placed cluster's API server rejects an object (BuildFailed, naming
 * file:line); an unreachable cluster is reported `Unreachable`, keeps its inventory and does not
 * hold the others back; a resync that finds no drift makes no write call; status is written at
 * most once per reconcile and stays small (counts and bounded messages, never object lists).
 *
 * Runs triggered only by its own status write (same generation, artifact, decisions and reconcile
 * request, before the next requeue is due) are skipped from an in-memory memo: the memo is an
 * optimisation only, so a restarted controller simply does one full sync.
 */
export class DeliveryReconciler implements Reconciler {
  readonly #o: DeliveryReconcilerOptions;
  readonly #memo = new Map<string, Memo>();

  constructor(opts: DeliveryReconcilerOptions) {
    this.#o = opts;
  }

  async reconcile(key: string): Promise<ReconcileResult> {
    const o = this.#o;
    const cached = o.deliveries.get(key);
    if (!cached) {
      this.#memo.delete(key);
      return;
    }
    if (cached.spec?.suspend) return;
    const fingerprint = this.#fingerprint(cached);
    const memo = this.#memo.get(key);
    const nowMs = (o.now?.() ?? new Date()).getTime();
    if (memo && memo.fingerprint === fingerprint && nowMs < memo.due) {
      return { requeueAfterMs: memo.due - nowMs };
    }

    let delivery: Delivery;
    try {
      delivery = await o.hub.raw.getRaw<Delivery & KubernetesObject>({
        apiVersion: cached.apiVersion,
        kind: cached.kind,
        metadata: { namespace: cached.metadata?.namespace, name: cached.metadata?.name },
      });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    const { outcome, requeueAfterMs, clusterRuns } = await this.#sync(delivery);
    const now = o.now?.() ?? new Date();
    const status = nextDeliveryStatus(
      delivery.status,
      delivery.metadata?.generation ?? 0,
      outcome,
      now,
      delivery.metadata?.annotations?.[RECONCILE_REQUESTED_ANNOTATION],
    );
    const info = kindInfo('Delivery');
    try {
      await writeStatus(
        o.hub,
        {
          apiVersion: info.apiVersion,
          kind: 'Delivery',
          plural: info.plural,
          namespace: delivery.metadata?.namespace,
          name: delivery.metadata?.name ?? '',
        },
        status,
      );
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    // After the status write: a controller killed in between repeats the write, not the Events.
    await this.#recordEvents(delivery, outcome, clusterRuns);
    const readyCond = status.conditions?.find((c) => c.type === 'Ready');
    if (readyCond?.status === 'False') {
      o.logger.warn('delivery not ready', { key, reason: readyCond.reason, message: readyCond.message });
    }
    // The fingerprint from before the sync: anything that changed meanwhile triggers a new one.
    this.#memo.set(key, { fingerprint, due: Date.now() + requeueAfterMs });
    return { requeueAfterMs };
  }

  /** What decides whether a run can be skipped: everything a sync reads on the hub. */
  #fingerprint(d: Delivery): string {
    const ns = d.metadata?.namespace;
    const artifact = this.#o.sources.get(ns, d.spec?.sourceRef?.name ?? '')?.status?.artifact;
    const decisions = (
      this.#o.placements.get(ns, d.spec?.placementRef?.name ?? '')?.status?.decisions ?? []
    ).map((x) => `${x.clusterName}:${this.#o.members.get(x.clusterName) ? 1 : 0}`);
    return JSON.stringify([
      d.metadata?.generation,
      d.metadata?.annotations?.[RECONCILE_REQUESTED_ANNOTATION],
      artifact?.revision,
      artifact?.digest,
      decisions,
    ]);
  }

  async #sync(d: Delivery): Promise<{
    outcome: DeliveryOutcome;
    requeueAfterMs: number;
    clusterRuns: ReadonlyMap<string, ClusterRun>;
  }> {
    const o = this.#o;
    const ns = d.metadata?.namespace ?? '';
    const name = d.metadata?.name ?? '';
    const intervalMs = parseDuration(d.spec.interval) ?? DEFAULT_INTERVAL_MS;
    const retryMs = Math.min(o.retryMs ?? 10_000, intervalMs);
    const none = new Map<string, ClusterRun>();
    const artifactFailed = (message: string) => ({
      outcome: { kind: 'ArtifactFailed', message } as const,
      requeueAfterMs: retryMs,
      clusterRuns: none,
    });

    // 1. The artifact.
    const source = o.sources.get(ns, d.spec.sourceRef.name);
    if (!source) return artifactFailed(`GitSource ${ns}/${d.spec.sourceRef.name} not found`);
    const artifact = source.status?.artifact;
    if (!artifact) return artifactFailed(`GitSource ${ns}/${d.spec.sourceRef.name} has no artifact yet`);
    let root: string;
    try {
      root = o.artifacts.artifactPath(artifact.digest);
    } catch (err) {
      return artifactFailed(`artifact of ${artifact.revision}: ${(err as Error).message}`);
    }
    if (!(await o.artifacts.has(artifact.digest))) {
      return artifactFailed(
        `artifact ${artifact.digest} of revision ${artifact.revision} is not in the local store; waiting for the source controller to fetch it again (retry in ${Math.round(retryMs / 1000)}s)`,
      );
    }
    const revision = artifact.revision;
    // A revision a CanaryRelease rolled back is never applied again; what runs stays.
    const rolledBack = rolledBackBy(await listReleaseRollbacks(o.hub, ns), ns, name, revision);
    if (rolledBack) {
      return {
        outcome: {
          kind: 'RevisionRolledBack',
          revision,
          message: `rolled back by CanaryRelease ${rolledBack}; waiting for a new commit`,
        },
        requeueAfterMs: intervalMs,
        clusterRuns: none,
      };
    }

    // 2. Render: a failed, partial or empty render applies and prunes nothing.
    const render = await renderDirectory(root, d.spec.path ?? './', { kustomize: o.kustomize });
    const problems = renderProblems(render, d.spec.path);
    if (!render.ok || problems.length > 0) {
      const message =
        problems.slice(0, MAX_RENDER_ERRORS).join('; ') +
        (problems.length > MAX_RENDER_ERRORS
          ? `; and ${problems.length - MAX_RENDER_ERRORS} more errors`
          : '');
      return {
        outcome: { kind: 'BuildFailed', revision, message },
        requeueAfterMs: intervalMs,
        clusterRuns: none,
      };
    }

    // 3. Placement.
    const placement = o.placements.get(ns, d.spec.placementRef.name);
    if (!placement) {
      return {
        outcome: {
          kind: 'PlacementNotFound',
          message: `PlacementRule ${ns}/${d.spec.placementRef.name} not found`,
        },
        requeueAfterMs: retryMs,
        clusterRuns: none,
      };
    }
    const placed = [...new Set((placement.status?.decisions ?? []).map((x) => x.clusterName))].sort();
    const removed = (d.status?.clusters ?? []).map((c) => c.name).filter((c) => !placed.includes(c));

    // 4. Gate every placed cluster before writing to any.
    const applyTimeoutMs = o.applyTimeoutMs ?? 120_000;
    const clusterConcurrency = o.clusterConcurrency ?? 4;
    const runs = new Map<string, ClusterRun>();
    await mapBounded(placed, clusterConcurrency, async (cluster) => {
      const client = o.members.get(cluster);
      if (!client) {
        runs.set(cluster, { kind: 'pending' });
        return;
      }
      const plan = await withTimeout(
        planCluster(
          deliveryApplyInput(d, cluster, client, render.objects, {
            concurrency: o.requestConcurrency,
            deadline: Date.now() + applyTimeoutMs,
          }),
        ),
        applyTimeoutMs,
      ).catch((err: unknown): ClusterPlan => ({ ok: false, reason: 'Unreachable', message: errorText(err) }));
      runs.set(cluster, { kind: 'plan', plan });
    });
    const invalid = placed.flatMap((cluster) => {
      const r = runs.get(cluster);
      return r?.kind === 'plan' && !r.plan.ok && r.plan.reason === 'Invalid'
        ? [{ cluster, message: r.plan.message }]
        : [];
    });
    if (invalid.length > 0) {
      const same = invalid.every((x) => x.message === invalid[0]?.message);
      const message = same
        ? `rejected by ${invalid.map((x) => x.cluster).join(', ')}: ${invalid[0]?.message}`
        : invalid.map((x) => `rejected by ${x.cluster}: ${x.message}`).join('; ');
      return {
        outcome: { kind: 'BuildFailed', revision, message },
        requeueAfterMs: intervalMs,
        clusterRuns: none,
      };
    }

    // 5. Apply, prune, health — per cluster, concurrently; and removal where placement ended.
    await mapBounded(placed, clusterConcurrency, async (cluster) => {
      const run = runs.get(cluster);
      if (run?.kind !== 'plan') return;
      if (!run.plan.ok) {
        runs.set(cluster, {
          kind: 'failed',
          unreachable: run.plan.reason === 'Unreachable',
          message: run.plan.message,
          apiNotServed: run.plan.reason === 'APINotServed',
        });
        return;
      }
      try {
        const result = await withTimeout(executePlan(run.plan, Date.now() + applyTimeoutMs), applyTimeoutMs);
        runs.set(cluster, { kind: 'applied', result });
      } catch (err) {
        const e = normalizeKubeError(err);
        const unreachable =
          err instanceof ApplyTimeoutError || e.reason === 'Unreachable' || e.reason === 'Timeout';
        runs.set(cluster, { kind: 'failed', unreachable, message: errorText(err) });
      }
    });
    const removals = await mapBounded(
      removed,
      clusterConcurrency,
      async (cluster): Promise<RemovedCluster> => {
        const client = o.members.get(cluster);
        if (!client) {
          return {
            name: cluster,
            done: false,
            message: 'removed from placement; no client for the cluster, inventory kept',
          };
        }
        try {
          const r: ClusterRemoveResult = await withTimeout(
            removeFromCluster(client, { namespace: ns, name, cluster }, o.requestConcurrency),
            applyTimeoutMs,
          );
          return { name: cluster, done: r.done, message: r.message };
        } catch (err) {
          return {
            name: cluster,
            done: false,
            message: `removed from placement; prune pending, inventory kept: ${errorText(err)}`,
          };
        }
      },
    );

    // 6. Per-cluster outcomes and the next look.
    const now = o.now?.() ?? new Date();
    const startedAt = healthWaitStart(d.status, now);
    const timeoutMs =
      (d.spec.timeout ? parseDuration(d.spec.timeout) : undefined) ?? DEFAULT_HEALTH_TIMEOUT_MS;
    let requeueAfterMs = intervalMs;
    const clusters: ClusterOutcome[] = placed.map((cluster) => {
      const run = runs.get(cluster);
      if (!run || run.kind === 'pending') {
        requeueAfterMs = Math.min(requeueAfterMs, retryMs);
        return {
          name: cluster,
          phase: 'Pending',
          message: `no client for cluster ${cluster} yet (the Cluster controller has not connected to it)`,
        };
      }
      if (run.kind === 'failed' || run.kind === 'plan') {
        requeueAfterMs = Math.min(requeueAfterMs, retryMs);
        const unreachable = run.kind === 'failed' ? run.unreachable : false;
        const message = run.kind === 'failed' ? run.message : 'not applied';
        return unreachable
          ? {
              name: cluster,
              phase: 'Unreachable',
              failure: 'ApplyFailed',
              message: `unreachable, inventory kept: ${message}`,
            }
          : {
              name: cluster,
              phase: 'Degraded',
              failure: run.kind === 'failed' && run.apiNotServed ? 'APINotServed' : 'ApplyFailed',
              message,
            };
      }
      const r = run.result;
      const notes = [
        `${revision}: ${r.summary.text}`,
        ...(r.yielded.length ? [`fields left to other managers: ${r.yielded.join(', ')}`] : []),
        ...(r.pruneSkipped ? [r.pruneSkipped] : []),
        ...(r.pruneKept.length
          ? [
              `${r.pruneKept.length} stale objects kept: ${r.pruneKept
                .slice(0, 3)
                .map((k) => `${k.entry.id} (${k.reason})`)
                .join(', ')}`,
            ]
          : []),
      ];
      if (r.failures.length > 0) {
        requeueAfterMs = Math.min(requeueAfterMs, retryMs);
        return {
          name: cluster,
          phase: 'Degraded',
          failure: 'ApplyFailed',
          objects: r.inventorySize,
          message: [`${r.failures.length} objects not applied: ${r.failures.join('; ')}`, ...notes].join(
            '; ',
          ),
        };
      }
      if (r.pruneFailures.length > 0) {
        requeueAfterMs = Math.min(requeueAfterMs, retryMs);
        return {
          name: cluster,
          phase: 'Degraded',
          failure: 'PruneFailed',
          revision,
          objects: r.inventorySize,
          message: [`prune failed: ${r.pruneFailures.join('; ')}`, ...notes].join('; '),
        };
      }
      const verdict = healthVerdict(r.health, {
        startedAt,
        now: now.getTime(),
        timeoutMs,
        pollMs: o.healthPollMs,
      });
      const base = { name: cluster, revision, objects: r.inventorySize };
      switch (verdict.kind) {
        case 'Healthy':
          return { ...base, phase: 'Healthy', message: notes.join('; ') };
        case 'Waiting':
          requeueAfterMs = Math.min(requeueAfterMs, verdict.requeueAfterMs);
          return {
            ...base,
            phase: 'Applying',
            message: [`waiting for health: ${verdict.message}`, ...notes].join('; '),
          };
        case 'Failed':
        case 'TimedOut':
          return {
            ...base,
            phase: 'Degraded',
            failure: 'HealthCheckFailed',
            message: [verdict.message, ...notes].join('; '),
          };
      }
    });
    if (removals.some((r) => !r.done)) requeueAfterMs = Math.min(requeueAfterMs, retryMs);
    return {
      outcome: { kind: 'Applied', revision, clusters, removed: removals },
      requeueAfterMs,
      clusterRuns: runs,
    };
  }

  async #recordEvents(
    d: Delivery,
    outcome: DeliveryOutcome,
    runs: ReadonlyMap<string, ClusterRun>,
  ): Promise<void> {
    const { events } = this.#o;
    const obj = d as unknown as KubernetesObject;
    switch (outcome.kind) {
      case 'ArtifactFailed':
      case 'PlacementNotFound':
        await events.warning(obj, outcome.kind, outcome.message);
        return;
      case 'BuildFailed':
      case 'RevisionRolledBack':
        await events.warning(obj, outcome.kind, `revision ${outcome.revision}: ${outcome.message}`);
        return;
      case 'Applied':
        break;
    }
    const writes: Promise<void>[] = [];
    for (const [cluster, run] of runs) {
      if (run.kind !== 'applied') continue;
      const s = run.result.summary;
      if (s.created + s.configured + s.deleted > 0) {
        writes.push(events.normal(obj, 'Applied', `${cluster}: revision ${outcome.revision}: ${s.text}`));
      }
    }
    for (const c of outcome.clusters) {
      if (c.failure) writes.push(events.warning(obj, c.failure, `${c.name}: ${c.message}`));
    }
    for (const r of outcome.removed) {
      writes.push(
        r.done
          ? events.normal(obj, 'Removed', `${r.name}: ${r.message}`)
          : events.warning(obj, 'PruneFailed', `${r.name}: ${r.message}`),
      );
    }
    await Promise.all(writes);
  }
}

function errorText(err: unknown): string {
  if (err instanceof ApplyTimeoutError) return err.message;
  return normalizeKubeError(err).message;
}

/** The keys of the Deliveries in `obj`'s namespace that reference it as `field` (a GitSource or PlacementRule). */
export function deliveriesReferencing(
  deliveries: Informer<Delivery>,
  obj: KubernetesObject,
  field: 'sourceRef' | 'placementRef',
): string[] {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name;
  return deliveries
    .list()
    .filter((d) => d.metadata?.namespace === ns && d.spec?.[field]?.name === name)
    .map((d) => `${ns}/${d.metadata?.name ?? ''}`);
}
