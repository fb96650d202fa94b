/**
 * The CanaryRelease reconciler: one tick = read the release fresh, validate, observe every
 * cluster it acts on, run the probes the state machine asks for (analysis, gates, Git
 * write-back), step, write status once, then Events and notifications, then the actions.
 *
 * Status before actions is what makes a SIGKILL at any instant safe: the actions are the
 * difference between the phase written and what the clusters show, so the next tick finds
 * what is left and does it again (every action is idempotent).
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubernetesObject } from '@kubernetes/client-node';
import {
  OPERATOR_ACTIONS,
  operatorAnnotation,
  type CanaryRelease,
  type CanaryReleaseStatus,
  type OperatorAction,
  type Transition,
} from '../api/canary-release.js';
import { kindInfo } from '../api/crds.js';
import type { Delivery } from '../api/delivery.js';
import type { GitSource } from '../api/git-source.js';
import type { MetricTemplate } from '../api/metric-template.js';
import { validateCanaryRelease } from '../api/validation.js';
import { analyze } from '../analysis/analyze.js';
import type { ClusterClient } from '../kube/clients.js';
import { markRetrying, markStalled } from '../kube/conditions.js';
import type { ReconcileResult, Reconciler } from '../kube/controller.js';
import { isNotFound } from '../kube/errors.js';
import type { EventRecorder } from '../kube/events.js';
import type { Informer } from '../kube/informer.js';
import { writeStatus } from '../kube/status.js';
import type { Logger } from '../log.js';
import type { Notifier } from '../notify/notifier.js';
import { callGate, gatePayload } from './gates.js';
import { carryOutAll, observeCluster, type ClusterHandle, type RouterFactory } from './executor.js';
import { agreedTargetHash, probesFor, SETTLE_MS, step, type StepResult } from './machine.js';
import { releaseNames, type ReleaseNames } from './names.js';
import type { AnalysisOutcome, GateAnswer, Observations, WriteBackOutcome } from './observations.js';
import { routerFor as defaultRouterFor } from './ports.js';
import type { RolloutMetrics } from './metrics.js';
import { writeBack } from './write-back.js';
import type { FeatureGates } from '../features.js';

/** The member clients a release acts on (filled by the Cluster reconciler). */
export interface MemberClientLookup {
  get(cluster: string): ClusterClient | undefined;
}

/** What a `CanaryReleaseReconciler` works with. */
export interface CanaryReleaseReconcilerOptions {
  hub: ClusterClient;
  releases: Informer<CanaryRelease>;
  deliveries: Informer<Delivery>;
  members: MemberClientLookup;
  events: EventRecorder;
  logger: Logger;
  /** Scratch directory for Git write-back clones (the controller's storage path). */
  storagePath: string;
  notifier?: Pick<Notifier, 'notify'>;
  routerFor?: RouterFactory;
  /** Git write-back; the real push unless a test replaces it. */
  writeBack?: (release: CanaryRelease) => Promise<WriteBackOutcome>;
  now?: () => Date;
  /** Where the tick-lag and analysis metrics go. */
  metrics?: RolloutMetrics;
  /** Feature gates: StatisticalJudge allows `judge: mannWhitney`; GitWriteBack off means `gitWriteBack.mode: none`. */
  features?: Pick<FeatureGates, 'enabled'>;
}

const RETRY_MS = 10_000;
const SEVERE = new Set(['RollingBack', 'RolledBack', 'Failed']);

/** Spec problems that depend on the controller's feature gates, with field paths. */
export function gatedProblems(
  release: CanaryRelease,
  features: Pick<FeatureGates, 'enabled'> | undefined,
): Array<{ field: string; message: string }> {
  if (!features || release.spec.analysis?.judge !== 'mannWhitney' || features.enabled('StatisticalJudge'))
    return [];
  return [
    {
      field: 'spec.analysis.judge',
      message:
        'spec.analysis.judge: mannWhitney needs the StatisticalJudge feature gate (--feature-gates=StatisticalJudge=true)',
    },
  ];
}

/** Combines the per-cluster analyses of one tick: any fail fails, else any hold holds, else pass. */
export function combineAnalyses(
  results: ReadonlyArray<{ cluster: string; result: AnalysisOutcome }>,
): AnalysisOutcome {
  const fail = results.find((r) => r.result.verdict === 'fail');
  const hold = results.find((r) => r.result.verdict === 'hold');
  const verdict = fail ? 'fail' : hold ? 'hold' : 'pass';
  const label = (r: { cluster: string; result: AnalysisOutcome }) =>
    results.length > 1 ? `${r.cluster}: ${r.result.message}` : r.result.message;
  const picked = fail ?? hold;
  return {
    verdict,
    score: results.length ? Math.min(...results.map((r) => r.result.score)) : 0,
    measurements: results.flatMap((r) => r.result.measurements),
    ...(fail?.result.failing ? { failing: fail.result.failing } : {}),
    message: picked ? label(picked) : results.map(label).join('; '),
  };
}

/**
 * Reconciles CanaryReleases (see the module comment). Never throws for a problem of a cluster,
 * a metric, a gate or Git: each is an observation the status reports; only a failure to read
 * or write the release itself is retried with backoff.
 */
export class CanaryReleaseReconciler implements Reconciler {
  readonly #o: CanaryReleaseReconcilerOptions;
  /** When each key asked for its next timed tick (ms since epoch); memory only, for the lag metric. */
  readonly #due = new Map<string, number>();
  /** When the tick that decided each key's rollback started, until traffic / write-back are done; for the rollback metric. */
  readonly #rollbackTraffic = new Map<string, number>();
  readonly #rollbackWriteBack = new Map<string, number>();

  constructor(opts: CanaryReleaseReconcilerOptions) {
    this.#o = opts;
  }

  async reconcile(key: string, signal?: AbortSignal): Promise<ReconcileResult> {
    const due = this.#due.get(key);
    this.#due.delete(key);
    // Early ticks (a change enqueued the key) are not late; only timed ones are measured.
    if (due !== undefined && Date.now() >= due) this.#o.metrics?.tickLag.observe((Date.now() - due) / 1000);
    const result = await this.#tick(key, signal);
    if (result?.requeueAfterMs !== undefined) this.#due.set(key, Date.now() + result.requeueAfterMs);
    return result;
  }

  async #tick(key: string, signal?: AbortSignal): Promise<ReconcileResult> {
    const o = this.#o;
    const tickStart = Date.now();
    const cached = o.releases.get(key);
    if (!cached) return;
    let release: CanaryRelease;
    try {
      release = await o.hub.raw.getRaw<CanaryRelease & KubernetesObject>({
        apiVersion: cached.apiVersion,
        kind: cached.kind,
        metadata: { namespace: cached.metadata.namespace, name: cached.metadata.name },
      });
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    // No finalizer: a deleted release leaves the primary and Services serving (never destroy on doubt).
    if (release.metadata.deletionTimestamp) return;
    const now = o.now?.() ?? new Date();
    const generation = release.metadata.generation ?? 0;

    const problems = [...validateCanaryRelease(release), ...gatedProblems(release, o.features)];
    if (problems.length > 0) {
      const message = problems.map((p) => p.message).join('; ');
      const status = markStalled(release.status ?? {}, generation, 'InvalidSpec', message, now);
      if (await this.#write(release, status))
        await o.events.warning(asObject(release), 'InvalidSpec', message);
      return;
    }

    const names = releaseNames(release);
    const routerFor = o.routerFor ?? defaultRouterFor;
    const where = this.#clusters(release);
    if ('wait' in where) {
      const status = markRetrying(release.status ?? {}, generation, where.reason, where.wait, now);
      await this.#write(release, status);
      return { requeueAfterMs: RETRY_MS };
    }
    const { handles } = where;
    const clusters = await Promise.all(handles.map((h) => observeCluster(release, names, h, routerFor)));
    // Read after the clusters: a template seen there was applied before the Delivery reports it.
    // Only when a run may start (a template not yet under test): two reads saved on other ticks.
    const hash = agreedTargetHash(clusters);
    const needRevision =
      !release.status?.phase ||
      release.status.phase === 'Initializing' ||
      (hash !== undefined && hash !== release.status.templateHash);
    const delivery =
      release.spec.deliveryRef && needRevision ? await this.#deliveryRevision(release) : undefined;
    const requests: Partial<Record<OperatorAction, string>> = {};
    for (const a of OPERATOR_ACTIONS) {
      const v = release.metadata.annotations?.[operatorAnnotation(a)];
      if (v) requests[a] = v;
    }
    // With the GitWriteBack gate off, a release behaves as if it said `mode: none`.
    const spec =
      o.features && !o.features.enabled('GitWriteBack')
        ? { ...release.spec, gitWriteBack: { mode: 'none' as const } }
        : release.spec;
    const probes = probesFor(spec, release.status, { clusters }, now);
    const [analysis, gate, rollbackGate, wb] = await Promise.all([
      probes.analysis ? this.#analyze(release, names, handles, now) : undefined,
      probes.gate ? this.#gate(release, probes.gate, signal) : undefined,
      this.#rollbackGates(release, probes.rollbackGates, signal),
      probes.writeBack
        ? (o.writeBack ?? ((r) => writeBack(o.hub, r, o.storagePath)))(release).then((outcome) => {
            this.#rolledBack(key, 'gitWriteBack', outcome.ok);
            return outcome;
          })
        : undefined,
    ]);
    const observations: Observations = {
      clusters,
      requests,
      ...(delivery && 'revision' in delivery ? { deliveryRevision: delivery.revision } : {}),
      ...(delivery && 'pending' in delivery ? { deliveryPending: delivery.pending } : {}),
      ...(analysis ? { analysis } : {}),
      ...(gate ? { gate } : {}),
      ...(rollbackGate ? { rollbackGate } : {}),
      ...(wb ? { writeBack: wb } : {}),
    };
    const result = step({ spec, status: release.status, generation, observations, now });

    // writeStatus reads the status again before it patches; a tick that changed nothing skips both.
    const unchanged = isDeepStrictEqual(JSON.parse(JSON.stringify(result.status)), release.status ?? {});
    if (!unchanged && !(await this.#writeOrGone(release, result.status))) return;
    await this.#announce(release, result.transitions);
    this.#noteRollbackDecision(key, result, tickStart);
    const failures = await carryOutAll(release, names, handles, result.actions, routerFor);
    if (failures.length === 0) this.#rolledBack(key, 'traffic', true);
    if (failures.length > 0) {
      const message = failures.map((f) => `${f.cluster}: ${f.action}: ${f.message}`).join('; ');
      o.logger.warn('canary release actions failed', { key, message });
      await o.events.warning(asObject(release), 'ActionFailed', message);
      return { requeueAfterMs: Math.max(SETTLE_MS, Math.min(result.requeueAfterMs, 5000)) };
    }
    return { requeueAfterMs: result.requeueAfterMs };
  }

  /** Starts the rollback clocks when this tick decided a rollback; stops them when the release left it. */
  #noteRollbackDecision(key: string, result: StepResult, tickStart: number): void {
    const phase = result.status.phase;
    if (phase !== 'RollingBack' && phase !== 'RolledBack') {
      this.#rollbackTraffic.delete(key);
      this.#rollbackWriteBack.delete(key);
      return;
    }
    if (!result.transitions.some((t) => t.phase === 'RollingBack')) return;
    this.#rollbackTraffic.set(key, tickStart);
    if (!result.status.rollback?.writeBack) this.#rollbackWriteBack.set(key, tickStart);
  }

  /** Observes the time from the rollback decision to `stage` done, once per decision. */
  #rolledBack(key: string, stage: 'traffic' | 'gitWriteBack', done: boolean): void {
    const clocks = stage === 'traffic' ? this.#rollbackTraffic : this.#rollbackWriteBack;
    const decidedAt = clocks.get(key);
    if (decidedAt === undefined || !done) return;
    clocks.delete(key);
    this.#o.metrics?.rollback.observe({ stage }, (Date.now() - decidedAt) / 1000);
  }

  /** The clusters the release acts on, and the Delivery revision; or why it must wait. */
  #clusters(release: CanaryRelease): { handles: ClusterHandle[] } | { wait: string; reason: string } {
    const o = this.#o;
    const ref = release.spec.deliveryRef;
    if (!ref) return { handles: [{ name: o.hub.name, client: o.hub }] };
    const ns = release.metadata.namespace;
    const delivery = o.deliveries.get(ns, ref.name);
    if (!delivery) return { wait: `Delivery ${ns}/${ref.name} not found`, reason: 'DeliveryNotFound' };
    const names = [...new Set((delivery.status?.clusters ?? []).map((c) => c.name))].sort();
    const handles = names.map((name) => {
      const client = o.members.get(name);
      return client ? { name, client } : { name, error: 'no client for the cluster yet' };
    });
    return { handles };
  }

  /**
   * The revision the Delivery applied everywhere, read fresh; or why it is not settled: its
   * GitSource has a newer artifact (an apply may be under way), or its clusters differ.
   */
  async #deliveryRevision(release: CanaryRelease): Promise<{ revision: string } | { pending: string }> {
    const hub = this.#o.hub;
    const ns = release.metadata.namespace;
    const name = release.spec.deliveryRef?.name ?? '';
    try {
      const d = await hub.raw.getRaw<Delivery & KubernetesObject>({
        apiVersion: 'sluice.dev/v1',
        kind: 'Delivery',
        metadata: { namespace: ns, name },
      });
      const applied = d.status?.lastAppliedRevision;
      if (!applied) return { pending: `Delivery ${ns}/${name} has applied no revision yet` };
      const differing = (d.status?.clusters ?? []).filter((c) => c.revision !== applied).map((c) => c.name);
      if (differing.length > 0) {
        return { pending: `Delivery ${ns}/${name}: ${differing.join(', ')} not at ${applied} yet` };
      }
      const source = await hub.raw
        .getRaw<GitSource & KubernetesObject>({
          apiVersion: 'sluice.dev/v1',
          kind: 'GitSource',
          metadata: { namespace: ns, name: d.spec.sourceRef.name },
        })
        .catch((err: unknown) => {
          if (isNotFound(err)) return undefined;
          throw err;
        });
      const latest = source?.status?.artifact?.revision;
      if (latest && latest !== applied && !(release.status?.rolledBackRevisions ?? []).includes(latest)) {
        return { pending: `Delivery ${ns}/${name} reports ${applied}; its source is at ${latest}` };
      }
      return { revision: applied };
    } catch (err) {
      if (isNotFound(err)) return { pending: `Delivery ${ns}/${name} not found` };
      return { pending: `Delivery ${ns}/${name}: ${err instanceof Error ? err.message : String(err)}` };
    }
  }

  async #analyze(
    release: CanaryRelease,
    names: ReleaseNames,
    handles: readonly ClusterHandle[],
    now: Date,
  ): Promise<AnalysisOutcome> {
    const hub = this.#o.hub;
    const deps = {
      template: async (ns: string, name: string) => {
        try {
          return await hub.raw.getRaw<MetricTemplate & KubernetesObject>({
            apiVersion: 'sluice.dev/v1',
            kind: 'MetricTemplate',
            metadata: { namespace: ns, name },
          });
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
      secret: async (ns: string, name: string) => {
        try {
          const s = await hub.raw.getRaw<KubernetesObject & { data?: Record<string, string> }>({
            apiVersion: 'v1',
            kind: 'Secret',
            metadata: { namespace: ns, name },
          });
          return s.data ?? {};
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
    };
    const canaryWeight = release.status?.canaryWeight ?? 0;
    const results = await Promise.all(
      handles.map(async (h) => ({
        cluster: h.name,
        result: await analyze({ release, cluster: h.name, names, canaryWeight, now }, deps),
      })),
    );
    const combined = combineAnalyses(results);
    this.#o.metrics?.analyses.inc({ verdict: combined.verdict });
    return combined;
  }

  async #gate(
    release: CanaryRelease,
    gate: NonNullable<ReturnType<typeof probesFor>['gate']>,
    signal?: AbortSignal,
  ): Promise<GateAnswer> {
    const r = await callGate(gate, gatePayload(release, gate), signal ? { signal } : {});
    return { name: gate.name, open: r.open, attempts: r.attempts, message: r.message };
  }

  async #rollbackGates(
    release: CanaryRelease,
    gates: ReturnType<typeof probesFor>['rollbackGates'],
    signal?: AbortSignal,
  ): Promise<GateAnswer | undefined> {
    const answers = await Promise.all(gates.map((g) => this.#gate(release, g, signal)));
    return answers.find((a) => a.open);
  }

  /** Writes status; false when the release is gone. */
  async #writeOrGone(release: CanaryRelease, status: CanaryReleaseStatus): Promise<boolean> {
    try {
      await this.#write(release, status);
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  async #write(release: CanaryRelease, status: CanaryReleaseStatus): Promise<boolean> {
    const info = kindInfo('CanaryRelease');
    return writeStatus(
      this.#o.hub,
      {
        apiVersion: info.apiVersion,
        kind: 'CanaryRelease',
        plural: info.plural,
        namespace: release.metadata.namespace,
        name: release.metadata.name ?? '',
      },
      status,
    );
  }

  /** One Event and one notification per transition, after the status write (a crash repeats the write, not these). */
  async #announce(release: CanaryRelease, transitions: readonly Transition[]): Promise<void> {
    const o = this.#o;
    const obj = asObject(release);
    for (const t of transitions) {
      const warning = SEVERE.has(t.phase) || t.reason === 'AnalysisFailed' || t.reason === 'WriteBackFailed';
      const message = `${t.step ? `step ${t.step} ` : ''}(${t.canaryWeight}%): ${t.message}`;
      await (warning ? o.events.warning(obj, t.reason, message) : o.events.normal(obj, t.reason, message));
      o.notifier?.notify({
        namespace: release.metadata.namespace ?? '',
        name: release.metadata.name ?? '',
        reason: t.reason,
        message: t.message,
        phase: t.phase,
        severity: warning ? 'warning' : 'info',
      });
    }
  }
}

function asObject(release: CanaryRelease): KubernetesObject {
  return release as unknown as KubernetesObject;
}
