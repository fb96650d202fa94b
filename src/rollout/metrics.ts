import { Counter, Summary, type Registry } from 'prom-client';

/** The rollout controller's own metrics (names are stable: the benchmark and dashboards read them). */
export interface RolloutMetrics {
  /**
   * `sluice_canary_tick_lag_seconds`: how late a timed tick ran — from the moment the previous
   * tick asked to be run again (its `requeueAfterMs`) to the moment it started. Ticks triggered
   * early by a change are not counted. A summary, so p99 is exact over the last minute.
   */
  readonly tickLag: Summary<string>;
  /** `sluice_canary_analyses_total{verdict}`. */
  readonly analyses: Counter<'verdict'>;
  /**
   * `sluice_canary_rollback_seconds{stage}`: time to safety after a rollback decision, from the
   * start of the tick that decided it (the analysis tick that crossed the failure limit, or the
   * tick that saw an abort or a rollback gate) to `stage`: `traffic` — every cluster's router
   * and target confirmed at 100% primary; `gitWriteBack` — the revert (or pull request) pushed.
   * Measured in memory: a decision made by a controller that died is not counted.
   */
  readonly rollback: Summary<'stage'>;
}

const byRegistry = new WeakMap<Registry, RolloutMetrics>();

/** The rollout metrics registered in `registry`, created on first use. */
export function rolloutMetrics(registry: Registry): RolloutMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const m: RolloutMetrics = {
    tickLag: new Summary({
      name: 'sluice_canary_tick_lag_seconds',
      help: 'How late timed CanaryRelease ticks ran after the time they asked for.',
      percentiles: [0.5, 0.9, 0.99],
      maxAgeSeconds: 60,
      ageBuckets: 6,
      registers: [registry],
    }),
    analyses: new Counter({
      name: 'sluice_canary_analyses_total',
      help: 'CanaryRelease analyses run, by combined verdict.',
      labelNames: ['verdict'] as const,
      registers: [registry],
    }),
    rollback: new Summary({
      name: 'sluice_canary_rollback_seconds',
      help: 'From the tick that decided a rollback to all traffic on the primary (stage=traffic) and to the Git write-back pushed (stage=gitWriteBack).',
      labelNames: ['stage'] as const,
      percentiles: [0.5, 0.9, 0.99, 1],
      maxAgeSeconds: 600,
      ageBuckets: 5,
      registers: [registry],
    }),
  };
  byRegistry.set(registry, m);
  return m;
}
