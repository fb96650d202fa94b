import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** Metric names the controller core exports (stable: dashboards and alerts use them). */
export const MetricName = {
  reconcileTotal: 'sluice_reconcile_total',
  reconcileErrorsTotal: 'sluice_reconcile_errors_total',
  reconcileDurationSeconds: 'sluice_reconcile_duration_seconds',
  workqueueDepth: 'sluice_workqueue_depth',
} as const;

/** How one reconcile ended; the `result` label of `sluice_reconcile_total`. */
export type ReconcileOutcome = 'success' | 'requeue' | 'error' | 'terminal';

/**
 * The controller metrics of one registry. Several controllers share them, told apart by the
 * `controller` (or, for queues, `name`) label.
 */
export interface ControllerMetrics {
  /** `sluice_reconcile_total{controller,result}`. */
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  /** `sluice_reconcile_errors_total{controller}`: reconciles that returned any error, terminal ones included. */
  readonly reconcileErrors: Counter<'controller'>;
  /** `sluice_reconcile_duration_seconds{controller}`. */
  readonly reconcileDuration: Histogram<'controller'>;
  /** `sluice_workqueue_depth{name}`: keys waiting to be handed to a worker, read at scrape time. */
  readonly workqueueDepth: Gauge<'name'>;
  /**
   * Reports `depth()` as the depth of queue `name` at every scrape until the returned
   * function is called.
   */
  trackQueue(name: string, depth: () => number): () => void;
}

const byRegistry = new WeakMap<Registry, ControllerMetrics>();

/**
 * The controller metrics registered in `registry`, created on first use. Calling it again
 * with the same registry returns the same metrics (prom-client refuses a second
 * registration of a name).
 */
export function controllerMetrics(registry: Registry): ControllerMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;

  const queues = new Map<string, () => number>();
  const metrics: ControllerMetrics = {
    reconcileTotal: new Counter({
      name: MetricName.reconcileTotal,
      help: 'Reconciles by controller and result (success, requeue, error, terminal).',
      labelNames: ['controller', 'result'] as const,
      registers: [registry],
    }),
    reconcileErrors: new Counter({
      name: MetricName.reconcileErrorsTotal,
      help: 'Reconciles that returned an error (retried or terminal), by controller.',
      labelNames: ['controller'] as const,
      registers: [registry],
    }),
    reconcileDuration: new Histogram({
      name: MetricName.reconcileDurationSeconds,
      help: 'Time one reconcile took, by controller.',
      labelNames: ['controller'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    workqueueDepth: new Gauge({
      name: MetricName.workqueueDepth,
      help: 'Keys waiting in a controller work queue, by queue name.',
      labelNames: ['name'] as const,
      registers: [registry],
      collect() {
        for (const [name, depth] of queues) this.set({ name }, depth());
      },
    }),
    trackQueue(name, depth) {
      queues.set(name, depth);
      return () => {
        if (queues.get(name) === depth) queues.delete(name);
        metrics.workqueueDepth.remove({ name });
      };
    },
  };
  byRegistry.set(registry, metrics);
  return metrics;
}
