/**
 * The CanaryRelease state machine: a pure step function from (spec, status, observations, now)
 * to the next status and the actions that make the clusters match it. No I/O, no clock, no
 * memory between calls: a controller killed at any instant calls it again with what the status
 * and the clusters say, and gets the same decisions.
 *
 * Crash safety rests on one order, kept by the reconciler: status first, then actions. Actions
 * are not commands remembered anywhere; they are the difference between what the (new) phase
 * requires and what was observed, so a tick that died after writing "RollingBack" but before
 * touching traffic simply finds traffic not yet on the primary and routes it again.
 */
import {
  MAX_MEASUREMENTS,
  MAX_ROLLED_BACK_REVISIONS,
  MAX_TRANSITIONS,
  OPERATOR_ACTIONS,
  type CanaryGate,
  type CanaryPhase,
  type CanaryReleaseSpec,
  type CanaryReleaseStatus,
  type OperatorAction,
  type RollbackRecord,
  type Transition,
} from '../api/canary-release.js';
import { formatDuration, parseDuration } from '../api/duration.js';
import { kubeTime, markReady, markReconciling, markStalled } from '../kube/conditions.js';
import type { ClusterObservation, Observations, Probes } from './observations.js';
import { formatStep, gatesAt, gatesBefore, parseStep, stepWeights } from './plan.js';

/** One thing to make true on one cluster. Every action is idempotent. */
export type Action =
  /** Server-side apply the primary Deployment from the target's current template (stamped `hash`), the three Services and the HPA twin. */
  | { readonly type: 'applyPrimary'; readonly cluster: string; readonly hash: string }
  /** Set the router's split to `canary` percent on the canary, the rest on the primary. */
  | { readonly type: 'route'; readonly cluster: string; readonly canary: number }
  /** Scale the target to 0, or `up` to the primary's replica count for a run. */
  | { readonly type: 'scaleTarget'; readonly cluster: string; readonly replicas: 0 | 'up' };

/** The step function's input. */
export interface StepInput {
  readonly spec: CanaryReleaseSpec;
  readonly status: CanaryReleaseStatus | undefined;
  readonly generation: number;
  readonly observations: Observations;
  readonly now: Date;
}

/** The step function's output: write `status` once, then carry out `actions` in order. */
export interface StepResult {
  readonly status: CanaryReleaseStatus;
  readonly actions: readonly Action[];
  /** Transitions appended this tick: one Event and one notification each. */
  readonly transitions: readonly Transition[];
  readonly requeueAfterMs: number;
}

/** How long to look again while something is settling (traffic, pods). */
export const SETTLE_MS = 1000;
/** Longest wait between looks at a webhook gate or a failed Git write-back. */
export const POLL_CAP_MS = 10_000;
const DEFAULT_INTERVAL_MS = 60_000;
/** `spec.scaleDownDelay` when unset: Argo Rollouts' default, long enough for slow proxies. */
export const DEFAULT_SCALE_DOWN_DELAY_MS = 30_000;
const RUN_PHASES: readonly CanaryPhase[] = ['Progressing', 'WaitingPromotion'];
const PAUSABLE: readonly CanaryPhase[] = [
  'Progressing',
  'WaitingPromotion',
  'Succeeded',
  'RolledBack',
  'Failed',
];

/** The step interval of `spec` in ms. */
export function intervalMs(spec: Pick<CanaryReleaseSpec, 'interval'>): number {
  return parseDuration(spec.interval) ?? DEFAULT_INTERVAL_MS;
}

/** The template hash every cluster's target agrees on; undefined when one lacks it or they differ. */
export function agreedTargetHash(clusters: readonly ClusterObservation[]): string | undefined {
  const hashes = new Set(clusters.map((c) => c.target?.hash));
  if (clusters.length === 0 || hashes.size !== 1) return undefined;
  return [...hashes][0];
}

function analysisDue(spec: CanaryReleaseSpec, s: CanaryReleaseStatus, now: Date): number {
  const since = Date.parse(s.lastAnalysisAt ?? s.stepSince ?? s.phaseSince ?? kubeTime(now));
  return since + intervalMs(spec) - now.getTime();
}

function pendingWriteBack(spec: CanaryReleaseSpec, s: CanaryReleaseStatus): boolean {
  const r = s.rollback;
  if (!r?.revision || spec.gitWriteBack.mode === 'none' || !spec.deliveryRef) return false;
  return !(r.writeBack?.commit || r.writeBack?.pullRequestURL);
}

/**
 * The replica router sizes the target itself (its weight is the target's share of the pods), so
 * the run never scales the target up and, before the first shift, a target at 0 counts as ready.
 */
function routerScales(spec: Pick<CanaryReleaseSpec, 'trafficRouting'>): boolean {
  return spec.trafficRouting.provider === 'replicas';
}

function allTargetsReady(clusters: readonly ClusterObservation[], allowZero = false): boolean {
  return (
    clusters.length > 0 &&
    clusters.every((c) => c.target?.ready === true && (allowZero || c.target.replicas > 0))
  );
}

function scaleUp(t: Tick): void {
  if (routerScales(t.input.spec)) return;
  for (const c of t.input.observations.clusters) {
    if (c.target && c.target.replicas === 0) t.act({ type: 'scaleTarget', cluster: c.name, replicas: 'up' });
  }
}

/**
 * The I/O the reconciler does before `step`: run the analysis (when a step's interval is over),
 * call the webhook gate the release waits at and the rollback gates, push the Git write-back.
 * `step` uses each result only where it would have asked for it.
 */
export function probesFor(
  spec: CanaryReleaseSpec,
  status: CanaryReleaseStatus | undefined,
  obs: Pick<Observations, 'clusters'>,
  now: Date,
): Probes {
  const s = status ?? {};
  const inRun = s.phase !== undefined && RUN_PHASES.includes(s.phase);
  const n = stepWeights(spec).length;
  const k = parseStep(s.step, n);
  const healthy = obs.clusters.every((c) => !c.error);
  const gate = inRun && s.gate ? (spec.gates ?? []).find((g) => g.name === s.gate?.name) : undefined;
  const analysis =
    inRun &&
    healthy &&
    !spec.skipAnalysis &&
    k >= 1 &&
    (!s.gate || s.phase === 'WaitingPromotion') &&
    agreedTargetHash(obs.clusters) === s.templateHash &&
    allTargetsReady(obs.clusters) &&
    analysisDue(spec, s, now) <= 0;
  return {
    analysis,
    ...(gate?.type === 'webhook' ? { gate } : {}),
    rollbackGates: inRun && healthy ? gatesAt(spec, 'rollback') : [],
    writeBack: pendingWriteBack(spec, s),
  };
}

/** Mutable state of one tick. */
class Tick {
  readonly s: CanaryReleaseStatus;
  readonly actions: Action[] = [];
  readonly transitions: Transition[] = [];
  waiting: string | undefined;
  requeue: number;

  constructor(
    readonly input: StepInput,
    readonly weights: readonly number[],
  ) {
    this.s = structuredClone(input.status ?? {});
    this.requeue = intervalMs(input.spec);
  }

  get now(): string {
    return kubeTime(this.input.now);
  }
  get n(): number {
    return this.weights.length;
  }
  get k(): number {
    return parseStep(this.s.step, this.n);
  }
  setStep(k: number): void {
    this.s.step = formatStep(k, this.n);
    this.s.canaryWeight = k === 0 ? 0 : (this.weights[k - 1] ?? 0);
    this.s.stepSince = this.now;
    delete this.s.lastAnalysisAt;
    delete this.s.gate;
  }
  /** Records a transition (a phase change or a decision) for the timeline, Events and notifications. */
  record(phase: CanaryPhase, reason: string, message: string): void {
    if (this.s.phase !== phase) this.s.phaseSince = this.now;
    this.s.phase = phase;
    const t: Transition = {
      at: this.now,
      phase,
      canaryWeight: this.s.canaryWeight ?? 0,
      ...(this.s.step ? { step: this.s.step } : {}),
      reason,
      message: message.slice(0, 2048),
    };
    this.transitions.push(t);
    this.s.transitions = [...(this.s.transitions ?? []), t].slice(-MAX_TRANSITIONS);
  }
  soon(ms = SETTLE_MS): void {
    this.requeue = Math.min(this.requeue, Math.max(ms, 200));
  }
  act(a: Action): void {
    this.actions.push(a);
  }
}

/**
 * One tick of the state machine. See the module comment for the contract; the phases:
 *
 * - `Initializing` (first sighting): copy the target to the primary, route 100% to it, scale the
 *   target to 0; then `Succeeded` (reason `Initialized`) without analysis (Flagger's behaviour).
 * - `Succeeded`, `RolledBack`, `Failed`: idle; a target template hash that differs from the
 *   last promoted one (and, after a rollback, from the one rolled back) starts a run.
 * - `Progressing`: step k of n at weights[k-1]; before each move the gates of that point must
 *   open; each interval the analysis runs; a pass moves on, a fail counts, `failureLimit`
 *   fails roll back; after the last step → `Promoting` (or `WaitingPromotion` at a
 *   confirmPromotion gate).
 * - `Promoting`: copy the template to the primary, wait until it is ready, route 100% to it,
 *   scale the target to 0 → `Succeeded`.
 * - `RollingBack`: route 100% to the primary, scale the target to 0 → `RolledBack` (`Failed`
 *   when the target vanished). Git write-back is a probe that follows, never a precondition.
 * - `Paused`: nothing moves until `resume`.
 *
 * Operator requests (annotations whose value differs from `acknowledgedRequests`) are handled
 * first, oldest value first, each exactly once; a request that does not apply in the current
 * phase is acknowledged with a `RequestIgnored` transition.
 */
export function step(input: StepInput): StepResult {
  const { spec, observations: obs } = input;
  const t = new Tick(input, stepWeights(spec));
  const { s } = t;
  const clusters = obs.clusters;
  s.clusters = clusters.map((c) => c.name);

  if (t.n === 0) {
    return finish(t, { stalled: ['InvalidSpec', 'spec.steps: no canary weights to step through'] });
  }
  if (spec.strategy === 'blueGreen' && spec.trafficRouting.provider === 'replicas') {
    // The replica router's weight is the canary's share of the pods: 0% means no canary pods to analyse.
    return finish(t, {
      stalled: [
        'InvalidSpec',
        'spec.trafficRouting.provider: Invalid value: "replicas": blueGreen analyses a running canary at 0% traffic; use a router that can (gatewayAPI, istio, smi, nginx)',
      ],
    });
  }

  const phaseBefore = s.phase;
  handleRequests(t);
  const unreachable = clusters.filter((c) => c.error);
  const hash = agreedTargetHash(clusters);

  // A request that changed the phase is this tick's decision; the new phase acts from the next.
  switch (s.phase !== phaseBefore ? 'Requested' : s.phase) {
    case 'Requested':
      t.soon();
      break;
    case undefined:
    case 'Initializing':
      initialize(t, hash);
      break;
    case 'Succeeded':
    case 'RolledBack':
    case 'Failed':
      idle(t, hash);
      break;
    case 'Progressing':
    case 'WaitingPromotion':
      progress(t, hash);
      break;
    case 'Promoting':
      promote(t, hash);
      break;
    case 'RollingBack':
      rollBack(t);
      break;
    case 'Paused':
      t.waiting = `paused (from ${s.pausedFrom ?? 'Progressing'}); run sluice resume to continue`;
      keepRoute(t, s.canaryWeight ?? 0);
      break;
  }
  if (obs.writeBack && pendingWriteBack(spec, s)) recordWriteBack(t);
  if (pendingWriteBack(spec, s)) t.soon(s.rollback?.writeBack?.error ? POLL_CAP_MS : SETTLE_MS);
  if (unreachable.length > 0 && !t.waiting) {
    t.waiting = `waiting for ${unreachable.map((c) => `${c.name} (${c.error})`).join(', ')}`;
  }
  if (unreachable.length > 0) t.soon(POLL_CAP_MS);
  return finish(t);
}

// ---------------------------------------------------------------------------------------------
// Operator requests

function handleRequests(t: Tick): void {
  const { s } = t;
  const requests = t.input.observations.requests;
  const pending = OPERATOR_ACTIONS.filter((a) => {
    const v = requests[a];
    return v !== undefined && v !== '' && v !== s.acknowledgedRequests?.[a];
  }).sort((a, b) => (requests[a]! < requests[b]! ? -1 : requests[a]! > requests[b]! ? 1 : 0));
  for (const action of pending) {
    s.acknowledgedRequests = { ...(s.acknowledgedRequests ?? {}), [action]: requests[action]! };
    const why = applyRequest(t, action);
    if (why) t.record(s.phase ?? 'Initializing', 'RequestIgnored', `${action} ignored: ${why}`);
  }
}

/** Carries out one operator request; returns why it does not apply, if it does not. */
function applyRequest(t: Tick, action: OperatorAction): string | undefined {
  const { s } = t;
  const phase = s.phase ?? 'Initializing';
  const runPhase =
    RUN_PHASES.includes(phase) || (phase === 'Paused' && RUN_PHASES.includes(s.pausedFrom ?? 'Succeeded'));
  switch (action) {
    case 'abort':
      if (!runPhase) return `the release is ${phase}, not running`;
      startRollback(t, { reason: 'Aborted', message: 'aborted by the operator (sluice abort)' });
      return undefined;
    case 'pause':
      if (!PAUSABLE.includes(phase)) return `a release that is ${phase} cannot be paused`;
      s.pausedFrom = phase;
      t.record('Paused', 'Paused', `paused by the operator while ${phase}`);
      return undefined;
    case 'resume': {
      if (phase !== 'Paused') return `the release is ${phase}, not paused`;
      const back = s.pausedFrom ?? 'Progressing';
      delete s.pausedFrom;
      // The interval restarts: an analysis right after a long pause would judge stale data.
      if (RUN_PHASES.includes(back)) s.lastAnalysisAt = t.now;
      t.record(back, 'Resumed', `resumed by the operator; back to ${back}`);
      return undefined;
    }
    case 'promote':
      if (!runPhase) return `the release is ${phase}, not running`;
      delete s.pausedFrom;
      startPromotion(
        t,
        'PromotedByOperator',
        'promoted by the operator (sluice promote): remaining steps and gates skipped',
      );
      return undefined;
    case 'retry': {
      if (phase !== 'RolledBack' && phase !== 'Failed')
        return `the release is ${phase}; only RolledBack or Failed releases are retried`;
      const hash = agreedTargetHash(t.input.observations.clusters);
      if (!hash) return 'the target is not the same on every cluster yet';
      if (hash === s.lastPromotedTemplateHash)
        return 'the target runs the promoted version; there is nothing to retry';
      const revision = revisionOf(t, hash);
      s.rolledBackRevisions = (s.rolledBackRevisions ?? []).filter((r) => r !== revision);
      startRun(
        t,
        hash,
        'Retried',
        `retried by the operator: revision ${revision} runs again from the first step`,
      );
      return undefined;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Phases

function revisionOf(t: Tick, hash: string): string {
  return t.input.observations.deliveryRevision ?? hash;
}

function missingTargets(t: Tick): string[] {
  return t.input.observations.clusters.filter((c) => !c.error && !c.target).map((c) => c.name);
}

function blocked(t: Tick): boolean {
  const clusters = t.input.observations.clusters;
  if (clusters.length === 0) {
    t.waiting = 'no cluster to act on yet (the Delivery is not applied anywhere)';
    return true;
  }
  return clusters.some((c) => c.error);
}

/** With a deliveryRef, a run is bound to a revision only once the Delivery reports it applied everywhere. */
function deliveryUnsettled(t: Tick): boolean {
  const pending = t.input.spec.deliveryRef ? t.input.observations.deliveryPending : undefined;
  if (pending) {
    t.waiting = `waiting for the Delivery: ${pending}`;
    t.soon();
  }
  return !!pending;
}

function initialize(t: Tick, hash: string | undefined): void {
  const { s } = t;
  if (s.phase !== 'Initializing') {
    t.s.step = formatStep(0, t.n);
    t.s.canaryWeight = 0;
    t.record('Initializing', 'Initializing', 'first sighting of the target: making it the primary');
  }
  t.soon();
  if (blocked(t)) return;
  const missing = missingTargets(t);
  if (missing.length > 0) {
    t.waiting = `target Deployment ${t.input.spec.targetRef.name} not found on ${missing.join(', ')}`;
    t.soon(POLL_CAP_MS);
    return;
  }
  if (!hash) {
    t.waiting = 'the target differs between clusters (the Delivery is still applying)';
    return;
  }
  if (deliveryUnsettled(t)) return;
  let done = true;
  for (const c of t.input.observations.clusters) {
    const target = c.target!;
    if (!c.services || !c.primary || c.primary.hash !== target.hash) {
      t.act({ type: 'applyPrimary', cluster: c.name, hash: target.hash });
      done = false;
      continue;
    }
    if (!c.primary.ready) {
      done = false;
      continue;
    }
    // The target down first: nothing routes to it yet, and the replica router's total is
    // then the primary's size alone rather than both added.
    if (target.replicas !== 0) {
      t.act({ type: 'scaleTarget', cluster: c.name, replicas: 0 });
      done = false;
    }
    if (!routes(c, 0)) {
      t.act({ type: 'route', cluster: c.name, canary: 0 });
      done = false;
    }
  }
  if (!done) {
    t.waiting ??= 'initializing: primary copied from the target, waiting for it to be ready and routed';
    return;
  }
  const revision = revisionOf(t, hash);
  s.templateHash = hash;
  s.revision = revision;
  s.lastPromotedTemplateHash = hash;
  s.lastPromotedRevision = revision;
  s.failedChecks = 0;
  t.record('Succeeded', 'Initialized', `initialized: the primary runs ${revision}, 100% of traffic on it`);
}

/** The cluster routes `canary`% to the canary, and its router objects are not mid-change. */
function routes(c: ClusterObservation, canary: number): boolean {
  return c.split?.canary === canary && c.splitSettled !== false;
}

/** Keeps the idle invariant: all traffic on the primary, the target scaled to 0 (after scaleDownDelay). */
function keepIdle(t: Tick): void {
  for (const c of t.input.observations.clusters) {
    if (c.error) continue;
    if (!routes(c, 0)) t.act({ type: 'route', cluster: c.name, canary: 0 });
    if (c.target && c.target.replicas !== 0) scaleDownTarget(t, c);
  }
}

/** Milliseconds left before the target may be scaled to 0: `scaleDownDelay` after `primaryRoutedAt`. */
function scaleDownWait(t: Tick): number {
  const { spec } = t.input;
  const since = t.s.primaryRoutedAt ? Date.parse(t.s.primaryRoutedAt) : NaN;
  if (routerScales(spec) || Number.isNaN(since)) return 0;
  const delay = spec.scaleDownDelay
    ? (parseDuration(spec.scaleDownDelay) ?? DEFAULT_SCALE_DOWN_DELAY_MS)
    : DEFAULT_SCALE_DOWN_DELAY_MS;
  return since + delay - t.input.now.getTime();
}

/**
 * Scales the target to 0 once traffic has been off it for `scaleDownDelay`: a proxy still
 * applying the route change would otherwise send requests to pods already gone.
 */
function scaleDownTarget(t: Tick, c: ClusterObservation): void {
  const left = scaleDownWait(t);
  if (left <= 0) {
    t.act({ type: 'scaleTarget', cluster: c.name, replicas: 0 });
    return;
  }
  t.soon(left);
  t.waiting ??= `all traffic on the primary; the target is scaled down in ${Math.ceil(left / 1000)}s (scaleDownDelay)`;
}

/** Routes all traffic back to the primary on `c`, and records when (for the scale-down delay). */
function routeToPrimary(t: Tick, c: ClusterObservation): void {
  t.act({ type: 'route', cluster: c.name, canary: 0 });
  t.s.primaryRoutedAt ??= t.now;
}

function keepRoute(t: Tick, canary: number): void {
  for (const c of t.input.observations.clusters) {
    if (!c.error && !routes(c, canary)) t.act({ type: 'route', cluster: c.name, canary });
  }
}

function idle(t: Tick, hash: string | undefined): void {
  const { s } = t;
  if (!blocked(t) && hash && !deliveryUnsettled(t)) {
    const revision = revisionOf(t, hash);
    const fresh =
      hash !== s.lastPromotedTemplateHash &&
      (s.phase === 'Succeeded' ||
        (hash !== s.templateHash && !(s.rolledBackRevisions ?? []).includes(revision)));
    if (fresh) {
      startRun(
        t,
        hash,
        'NewRevision',
        `new revision ${revision} (template ${hash.slice(0, 12)}): starting the analysis`,
      );
      return;
    }
  } else if (!hash && !blocked(t) && missingTargets(t).length === 0) {
    t.waiting = 'the target differs between clusters (the Delivery is still applying)';
  }
  keepIdle(t);
}

function startRun(t: Tick, hash: string, reason: string, message: string): void {
  const { s } = t;
  delete s.primaryRoutedAt;
  s.templateHash = hash;
  s.revision = revisionOf(t, hash);
  s.failedChecks = 0;
  s.measurements = [];
  delete s.lastScore;
  delete s.pausedFrom;
  t.setStep(0);
  t.record('Progressing', reason, message);
  scaleUp(t);
  for (const c of t.input.observations.clusters) {
    if (!c.error && !routes(c, 0)) t.act({ type: 'route', cluster: c.name, canary: 0 });
  }
  t.soon();
}

function startRollback(
  t: Tick,
  why: Pick<RollbackRecord, 'reason' | 'message' | 'metric' | 'value' | 'threshold'>,
): void {
  const { s, input } = t;
  const targetGone = why.reason === 'TargetNotFound';
  const record: RollbackRecord = {
    at: t.now,
    step: s.step ?? formatStep(0, t.n),
    canaryWeight: s.canaryWeight ?? 0,
    ...why,
    ...(s.revision && !targetGone ? { revision: s.revision } : {}),
    ...(input.spec.gitWriteBack.mode === 'none' || !input.spec.deliveryRef || targetGone
      ? { writeBack: { mode: 'none' } }
      : {}),
  };
  s.rollback = record;
  if (record.revision) {
    s.rolledBackRevisions = [
      ...(s.rolledBackRevisions ?? []).filter((r) => r !== record.revision),
      record.revision,
    ].slice(-MAX_ROLLED_BACK_REVISIONS);
  }
  delete s.gate;
  delete s.pausedFrom;
  t.record('RollingBack', why.reason, `rolling back ${s.revision ?? 'the canary'}: ${why.message}`);
  // Traffic first; the target keeps its pods for scaleDownDelay (the replica router's route is the scaling).
  delete s.primaryRoutedAt;
  for (const c of input.observations.clusters) {
    if (c.error) continue;
    routeToPrimary(t, c);
    if (routerScales(input.spec) && c.target && c.target.replicas !== 0)
      t.act({ type: 'scaleTarget', cluster: c.name, replicas: 0 });
  }
  t.soon();
}

function startPromotion(t: Tick, reason: string, message: string): void {
  delete t.s.gate;
  delete t.s.primaryRoutedAt;
  t.s.step = formatStep(t.n, t.n);
  t.record('Promoting', reason, message);
  t.soon();
}

/** Moves on from step k: to step k+1, or to promotion after the last one. */
function advance(t: Tick): void {
  const { s } = t;
  const k = t.k;
  if (k >= t.n) {
    startPromotion(t, 'AnalysisPassed', `all ${t.n} steps passed: promoting ${s.revision ?? ''}`.trim());
    return;
  }
  t.setStep(k + 1);
  t.record('Progressing', 'StepAdvanced', `step ${s.step}: ${s.canaryWeight}% of traffic on the canary`);
  for (const c of t.input.observations.clusters)
    t.act({ type: 'route', cluster: c.name, canary: s.canaryWeight ?? 0 });
  t.soon(intervalMs(t.input.spec));
}

/** Enters the gates before moving on from step k, or moves on when there are none. */
function passStep(t: Tick): void {
  const gates = gatesBefore(t.input.spec, t.k, t.n);
  const first = gates[0];
  if (!first) {
    advance(t);
    return;
  }
  t.s.gate = { name: first.name, since: t.now, attempts: 0 };
  const phase: CanaryPhase = t.k >= t.n ? 'WaitingPromotion' : 'Progressing';
  t.record(phase, 'WaitingAtGate', `waiting at ${first.at} gate ${first.name} (${first.type})`);
  t.soon();
}

/** At a gate: a manual one waits for `sluice promote`; a webhook one for a 2xx. */
function atGate(t: Tick): void {
  const { s, input } = t;
  const gates = gatesBefore(input.spec, t.k, t.n);
  const idx = gates.findIndex((g) => g.name === s.gate?.name);
  const gate: CanaryGate | undefined = gates[idx];
  if (!gate) {
    // The spec changed under a waiting release: start again at the first remaining gate.
    delete s.gate;
    passStep(t);
    return;
  }
  if (gate.type === 'manual') {
    t.waiting = `waiting at manual ${gate.at} gate ${gate.name}: run sluice promote to continue`;
    return;
  }
  const answer = input.observations.gate;
  t.soon(Math.min(intervalMs(input.spec), POLL_CAP_MS));
  if (answer?.name !== gate.name) {
    t.waiting = `waiting at ${gate.at} gate ${gate.name}`;
    return;
  }
  s.gate = {
    name: gate.name,
    since: s.gate!.since,
    attempts: (s.gate!.attempts ?? 0) + answer.attempts,
    message: answer.message.slice(0, 1024),
  };
  if (!answer.open) {
    t.waiting = `waiting at ${gate.at} gate ${gate.name}: ${answer.message}`;
    return;
  }
  const next = gates[idx + 1];
  if (next) {
    s.gate = { name: next.name, since: t.now, attempts: 0 };
    t.record(s.phase ?? 'Progressing', 'GateOpened', `gate ${gate.name} opened; waiting at ${next.name}`);
    return;
  }
  delete s.gate;
  t.record(s.phase ?? 'Progressing', 'GateOpened', `gate ${gate.name} opened`);
  advance(t);
}

function progress(t: Tick, hash: string | undefined): void {
  const { s, input } = t;
  const { spec, observations: obs } = input;
  if (blocked(t)) return;
  const missing = missingTargets(t);
  if (missing.length > 0) {
    startRollback(t, {
      reason: 'TargetNotFound',
      message: `target Deployment ${spec.targetRef.name} disappeared from ${missing.join(', ')}`,
    });
    return;
  }
  if (obs.rollbackGate?.open) {
    startRollback(t, {
      reason: 'RollbackGate',
      message: `rollback gate ${obs.rollbackGate.name} answered: ${obs.rollbackGate.message}`,
    });
    return;
  }
  if (hash && hash !== s.templateHash) {
    if (deliveryUnsettled(t)) return;
    startRun(
      t,
      hash,
      'NewRevision',
      `revision ${revisionOf(t, hash)} replaced the one under test: starting again`,
    );
    return;
  }
  if (!hash) {
    t.waiting = 'the target differs between clusters (the Delivery is still applying)';
    return;
  }
  const k = t.k;
  if (k === 0) scaleUp(t);
  keepRoute(t, s.canaryWeight ?? 0);
  if (!allTargetsReady(obs.clusters, k === 0 && routerScales(spec))) {
    t.waiting = `waiting for the target ${spec.targetRef.name} to be ready`;
    t.soon();
    return;
  }
  if (s.phase === 'Progressing' && s.gate) {
    atGate(t);
    return;
  }
  if (s.phase === 'Progressing' && k === 0) {
    passStep(t);
    return;
  }
  const dueIn = analysisDue(spec, s, input.now);
  if (dueIn > 0) {
    t.requeue = Math.min(t.requeue, Math.max(dueIn, 200));
    if (s.phase === 'WaitingPromotion') atGate(t);
    else t.waiting ??= `step ${s.step} at ${s.canaryWeight}%: next analysis in ${formatDuration(dueIn)}`;
    return;
  }
  if (spec.skipAnalysis) {
    s.lastAnalysisAt = t.now;
    if (s.phase === 'WaitingPromotion') atGate(t);
    else passStep(t);
    return;
  }
  const a = obs.analysis;
  if (!a) {
    t.waiting = `step ${s.step}: analysis due but not run`;
    t.soon();
    return;
  }
  s.lastAnalysisAt = t.now;
  s.lastScore = Math.min(1, Math.max(0, a.score));
  s.measurements = [...(s.measurements ?? []), ...a.measurements].slice(-MAX_MEASUREMENTS);
  t.requeue = Math.min(t.requeue, intervalMs(spec));
  switch (a.verdict) {
    case 'pass':
      if (s.phase === 'WaitingPromotion') atGate(t);
      else passStep(t);
      return;
    case 'hold':
      t.waiting = `step ${s.step}: analysis held, not promoting: ${a.message}`;
      if (s.phase === 'WaitingPromotion') atGate(t);
      return;
    case 'fail': {
      const failed = (s.failedChecks ?? 0) + 1;
      s.failedChecks = failed;
      const limit = Math.max(1, spec.analysis.failureLimit);
      const f = a.failing;
      if (failed >= limit) {
        startRollback(t, {
          reason: 'AnalysisFailed',
          message: `analysis failed ${failed} times (limit ${limit}): ${a.message}`,
          ...(f ? { metric: f.metric } : {}),
          ...(f?.value !== undefined ? { value: f.value } : {}),
          ...(f?.threshold !== undefined ? { threshold: f.threshold } : {}),
        });
        return;
      }
      t.record(s.phase ?? 'Progressing', 'AnalysisFailed', `check failed (${failed}/${limit}): ${a.message}`);
      if (s.phase === 'WaitingPromotion') atGate(t);
      return;
    }
  }
}

function promote(t: Tick, hash: string | undefined): void {
  const { s, input } = t;
  if (blocked(t)) return;
  const missing = missingTargets(t);
  if (missing.length > 0) {
    startRollback(t, {
      reason: 'TargetNotFound',
      message: `target disappeared from ${missing.join(', ')} while promoting`,
    });
    return;
  }
  if (hash && hash !== s.templateHash) {
    if (deliveryUnsettled(t)) return;
    startRun(
      t,
      hash,
      'NewRevision',
      `revision ${revisionOf(t, hash)} arrived while promoting: starting again`,
    );
    return;
  }
  const want = s.templateHash!;
  const clusters = input.observations.clusters;
  const primariesDone = clusters.every((c) => c.primary?.hash === want && c.primary.ready && c.services);
  let done = primariesDone;
  for (const c of clusters) {
    if (!primariesDone) {
      // Blue/green switches all traffic to the (analysed) canary while the primary is replaced.
      if (input.spec.strategy === 'blueGreen' && !routes(c, 100))
        t.act({ type: 'route', cluster: c.name, canary: 100 });
      if (!c.services || c.primary?.hash !== want)
        t.act({ type: 'applyPrimary', cluster: c.name, hash: want });
      continue;
    }
    if (!routes(c, 0)) {
      routeToPrimary(t, c);
      done = false;
    }
    // The replica router scales as it routes; other routers leave the target to the idle phase,
    // which scales it down scaleDownDelay after the switch.
    if (routerScales(input.spec) && c.target && c.target.replicas !== 0) {
      t.act({ type: 'scaleTarget', cluster: c.name, replicas: 0 });
      done = false;
    }
  }
  t.soon();
  if (!done) {
    t.waiting = primariesDone
      ? 'promoting: routing all traffic to the primary'
      : 'promoting: copying the target to the primary, waiting for it to be ready';
    return;
  }
  s.lastPromotedTemplateHash = want;
  s.lastPromotedRevision = s.revision;
  s.canaryWeight = 0;
  t.record(
    'Succeeded',
    'Promoted',
    `promoted ${s.revision ?? want}: the primary runs it with 100% of traffic`,
  );
}

function rollBack(t: Tick): void {
  const { s, input } = t;
  const clusters = input.observations.clusters;
  let done = clusters.every((c) => !c.error);
  for (const c of clusters) {
    if (c.error) continue;
    if (!routes(c, 0)) {
      routeToPrimary(t, c);
      // No router object at all routes nothing to the canary; one mid-change is not done.
      if (c.split || c.splitSettled === false) done = false;
    }
    if (routerScales(input.spec) && c.target && c.target.replicas !== 0) {
      t.act({ type: 'scaleTarget', cluster: c.name, replicas: 0 });
      done = false;
    }
  }
  t.soon();
  if (!done) {
    t.waiting = 'rolling back: routing all traffic to the primary';
    return;
  }
  s.canaryWeight = 0;
  const r = s.rollback;
  const end: CanaryPhase = r?.reason === 'TargetNotFound' ? 'Failed' : 'RolledBack';
  t.record(
    end,
    end,
    `rolled back ${r?.revision ?? ''}: all traffic on the primary (${r?.reason ?? 'unknown'}: ${r?.message ?? ''})`.replace(
      '  ',
      ' ',
    ),
  );
}

function recordWriteBack(t: Tick): void {
  const { s, input } = t;
  const wb = input.observations.writeBack!;
  const r = s.rollback!;
  const mode = input.spec.gitWriteBack.mode;
  if (wb.ok) {
    r.writeBack = {
      mode,
      ...(wb.method === 'revert' || wb.method === 'restore' ? { method: wb.method } : {}),
      ...(wb.commit ? { commit: wb.commit } : {}),
      ...(wb.pullRequestURL ? { pullRequestURL: wb.pullRequestURL } : {}),
      pushedAt: t.now,
    };
    const what = wb.pullRequestURL ? `pull request ${wb.pullRequestURL}` : `commit ${wb.commit ?? '?'}`;
    t.record(
      s.phase ?? 'RolledBack',
      mode === 'pullRequest' ? 'PullRequestOpened' : 'RevertPushed',
      `Git write-back of ${r.revision}: ${what}`,
    );
    return;
  }
  const before = r.writeBack?.error;
  r.writeBack = { mode, error: wb.error.slice(0, 2048) };
  if (before !== r.writeBack.error) {
    t.record(
      s.phase ?? 'RolledBack',
      'WriteBackFailed',
      `Git write-back of ${r.revision} failed (retried): ${wb.error}`,
    );
  }
}

// ---------------------------------------------------------------------------------------------
// Conditions

function finish(t: Tick, force?: { stalled: [string, string] }): StepResult {
  const { s, input } = t;
  const gen = input.generation;
  const now = input.now;
  let status: CanaryReleaseStatus;
  if (force) {
    status = markStalled(s, gen, force.stalled[0], force.stalled[1], now);
    return { status, actions: [], transitions: [], requeueAfterMs: intervalMs(input.spec) };
  }
  const phase = s.phase ?? 'Initializing';
  const r = s.rollback;
  const why = r
    ? `${r.reason}${r.metric ? ` (${r.metric} = ${r.value ?? 'no data'}, threshold ${r.threshold ?? '?'})` : ''}: ${r.message}`
    : '';
  const at = `step ${s.step ?? '0/0'} at ${s.canaryWeight ?? 0}%`;
  switch (phase) {
    case 'Succeeded':
      status = markReady(
        s,
        gen,
        'Succeeded',
        t.waiting ??
          `${s.lastPromotedRevision ?? s.lastPromotedTemplateHash ?? ''} runs on the primary with all traffic`,
        now,
      );
      break;
    case 'RolledBack':
    case 'Failed':
      status = markStalled(
        s,
        gen,
        phase,
        `rolled back ${r?.revision ?? ''} at ${r?.step ?? '?'}: ${why}`,
        now,
      );
      break;
    case 'RollingBack': {
      const sla = input.spec.rollbackSLA ? parseDuration(input.spec.rollbackSLA) : undefined;
      const since = Date.parse(s.phaseSince ?? kubeTime(now));
      if (sla !== undefined && now.getTime() - since > sla) {
        status = markStalled(
          s,
          gen,
          'RollbackSLAExceeded',
          `rolling back for longer than rollbackSLA ${input.spec.rollbackSLA}: ${t.waiting ?? why}`,
          now,
        );
      } else {
        status = markReconciling(s, gen, 'RollingBack', t.waiting ?? why, now);
      }
      break;
    }
    default:
      status = markReconciling(s, gen, phase, t.waiting ?? `${phase}: ${at}`, now);
  }
  const requeue = t.actions.length > 0 ? Math.min(t.requeue, SETTLE_MS) : t.requeue;
  return { status, actions: t.actions, transitions: t.transitions, requeueAfterMs: Math.max(200, requeue) };
}
