import { describe, expect, it } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import { captureLogs } from '../../test/support/capture-logs.js';
import { Controller, TerminalError, type Reconciler, type ReconcileResult } from './controller.js';
import { normalizeKubeError } from './errors.js';

interface LogLine {
  level: string;
  message: string;
  controller?: string;
  key?: string;
  durationMs?: number;
  result?: string;
  error?: string;
  requeueAfterMs?: number;
}

/** A logger whose JSON lines land in `lines`. */
const capture = () => captureLogs<LogLine>();

async function waitFor(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function counter(registry: Registry, name: string, labels: Record<string, string>): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const value = metric?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return value?.value ?? 0;
}

function setup(
  reconcile: (key: string, signal: AbortSignal) => Promise<ReconcileResult>,
  extra: { workers?: number; stopGraceMs?: number } = {},
) {
  const { lines, logger } = capture();
  const registry = new Registry();
  const reconciler: Reconciler = { reconcile };
  const controller = new Controller({
    name: 'test',
    reconciler,
    logger,
    registry,
    backoff: { baseDelayMs: 1, maxDelayMs: 4 },
    ...extra,
  });
  return { controller, lines, registry, outcomes: () => lines.filter((l) => l.result !== undefined) };
}

describe('Controller', () => {
  it('GIVEN a reconcile that fails twice WHEN enqueued THEN it is retried with backoff until it succeeds, one log line per attempt', async () => {
    let calls = 0;
    const { controller, outcomes, registry } = setup(async () => {
      calls++;
      if (calls <= 2) throw new Error(`boom ${calls}`);
    });
    controller.start();
    controller.enqueue('ns/a');
    await waitFor(() => outcomes().length === 3);
    await controller.stop();

    expect(calls).toBe(3);
    expect(outcomes().map((l) => [l.result, l.key, l.controller, l.level])).toEqual([
      ['error', 'ns/a', 'test', 'error'],
      ['error', 'ns/a', 'test', 'error'],
      ['success', 'ns/a', 'test', 'info'],
    ]);
    expect(outcomes()[0]!.error).toBe('boom 1');
    for (const l of outcomes()) expect(typeof l.durationMs).toBe('number');
    expect(controller.queue.numRequeues('ns/a')).toBe(0);
    expect(await counter(registry, 'sluice_reconcile_total', { controller: 'test', result: 'error' })).toBe(
      2,
    );
    expect(await counter(registry, 'sluice_reconcile_total', { controller: 'test', result: 'success' })).toBe(
      1,
    );
    expect(await counter(registry, 'sluice_reconcile_errors_total', { controller: 'test' })).toBe(2);
    const duration = (await registry.getMetricsAsJSON()).find(
      (m) => m.name === 'sluice_reconcile_duration_seconds',
    );
    expect(
      duration?.values.find(
        (v) => (v as { metricName?: string }).metricName === 'sluice_reconcile_duration_seconds_count',
      )?.value,
    ).toBe(3);
  });

  it('GIVEN a TerminalError WHEN reconciled THEN it is logged once with its cause and not retried', async () => {
    const calls: string[] = [];
    const { controller, outcomes, registry } = setup(async (key) => {
      calls.push(key);
      if (key === 'bad') throw new TerminalError('spec.steps is empty', { cause: new Error('validation') });
    });
    controller.start();
    controller.enqueue('bad');
    await waitFor(() => outcomes().length === 1);
    // A retry would come after 1 ms; let a later key pass through first, then look again.
    await new Promise((r) => setTimeout(r, 50));
    controller.enqueue('good');
    await waitFor(() => outcomes().length === 2);
    await controller.stop();

    expect(calls).toEqual(['bad', 'good']);
    expect(outcomes()[0]).toMatchObject({
      result: 'terminal',
      key: 'bad',
      level: 'error',
      error: 'spec.steps is empty: validation',
    });
    expect(controller.queue.numRequeues('bad')).toBe(0);
    expect(
      await counter(registry, 'sluice_reconcile_total', { controller: 'test', result: 'terminal' }),
    ).toBe(1);
    expect(await counter(registry, 'sluice_reconcile_errors_total', { controller: 'test' })).toBe(1);
  });

  it('GIVEN a result with requeueAfterMs WHEN reconciled THEN the key comes back after that delay, logged as requeue', async () => {
    const at: number[] = [];
    const { controller, outcomes } = setup(async () => {
      at.push(performance.now());
      return at.length === 1 ? { requeueAfterMs: 60 } : undefined;
    });
    controller.start();
    controller.enqueue('k');
    await waitFor(() => outcomes().length === 2);
    await controller.stop();

    expect(outcomes().map((l) => l.result)).toEqual(['requeue', 'success']);
    expect(outcomes()[0]!.requeueAfterMs).toBe(60);
    // A lower bound only: the delay was honoured (timers never fire early).
    expect(at[1]! - at[0]!).toBeGreaterThanOrEqual(55);
  });

  it('GIVEN a thrown raw ApiException WHEN logged THEN the line has the Status message and no response headers', async () => {
    const body = JSON.stringify({
      kind: 'Status',
      code: 409,
      reason: 'Conflict',
      message: 'the object has been modified',
    });
    const { controller, outcomes } = setup(async () => {
      throw new ApiException(409, 'Conflict', body, { authorization: 'Bearer s3cr3t', 'audit-id': 'x' });
    });
    controller.start();
    controller.enqueue('k');
    await waitFor(() => outcomes().length >= 1);
    await controller.stop();

    expect(outcomes()[0]!.error).toBe('Conflict: the object has been modified');
    expect(JSON.stringify(outcomes())).not.toMatch(/s3cr3t|audit-id|Headers/);
  });

  it('GIVEN a KubeError WHEN logged THEN the line carries its reason and message', async () => {
    const { controller, outcomes } = setup(async () => {
      throw normalizeKubeError(
        {
          code: 404,
          body: '{"kind":"Status","message":"gitsources.sluice.dev \\"x\\" not found","reason":"NotFound","code":404}',
        },
        'get GitSource x',
      );
    });
    controller.start();
    controller.enqueue('k');
    await waitFor(() => outcomes().length >= 1);
    await controller.stop();
    expect(outcomes()[0]!.error).toBe('NotFound: get GitSource x: gitsources.sluice.dev "x" not found');
  });

  it('GIVEN four workers WHEN one key is enqueued while it is reconciled THEN it never runs twice at once, and runs again afterwards', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { controller, outcomes } = setup(
      async () => {
        calls++;
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        if (calls === 1) await gate;
        inFlight--;
      },
      { workers: 4 },
    );
    controller.start();
    controller.enqueue('same');
    await waitFor(() => calls === 1);
    for (let i = 0; i < 10; i++) controller.enqueue('same');
    await new Promise((r) => setTimeout(r, 20));
    expect(calls).toBe(1);
    release();
    await waitFor(() => outcomes().length === 2);
    await controller.stop();
    expect(maxInFlight).toBe(1);
    expect(calls).toBe(2);
  });

  it('GIVEN distinct keys and two workers THEN they are reconciled in parallel', async () => {
    let inFlight = 0;
    let maxInFlight = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { controller, outcomes } = setup(
      async () => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        await gate;
        inFlight--;
      },
      { workers: 2 },
    );
    controller.start();
    controller.enqueue('a');
    controller.enqueue('b');
    await waitFor(() => maxInFlight === 2);
    release();
    await waitFor(() => outcomes().length === 2);
    await controller.stop();
  });

  it('GIVEN a reconcile in flight WHEN stopped THEN stop waits for it, and after the grace period aborts its signal', async () => {
    let aborted = false;
    let started = false;
    const { controller, outcomes } = setup(
      (_key, signal) =>
        new Promise((resolve) => {
          started = true;
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve(undefined);
          });
        }),
      { stopGraceMs: 30 },
    );
    controller.start();
    controller.enqueue('slow');
    await waitFor(() => started);
    await controller.stop();
    expect(aborted).toBe(true);
    expect(outcomes()).toHaveLength(1);
    // Stopped: further keys are ignored and the controller cannot start again.
    controller.enqueue('later');
    expect(controller.queue.length).toBe(0);
    expect(() => controller.start()).toThrow(/stopped/);
  });

  it('GIVEN a quick reconcile in flight WHEN stopped THEN its signal is never aborted', async () => {
    let signalSeen: AbortSignal | undefined;
    const { controller, outcomes } = setup(async (_key, signal) => {
      signalSeen = signal;
      await new Promise((r) => setTimeout(r, 20));
    });
    controller.start();
    controller.enqueue('k');
    await waitFor(() => signalSeen !== undefined);
    await controller.stop();
    expect(signalSeen!.aborted).toBe(false);
    expect(outcomes()).toHaveLength(1);
  });

  it('GIVEN keys enqueued before start WHEN scraped THEN the queue depth gauge shows them', async () => {
    const { controller, registry } = setup(async () => undefined);
    controller.enqueue('a');
    controller.enqueue('b');
    const text = await registry.metrics();
    expect(text).toContain('sluice_workqueue_depth{name="test"} 2');
    controller.start();
    await waitFor(() => controller.queue.length === 0);
    await controller.stop();
  });

  it('GIVEN a reconciler that throws synchronously THEN it is handled as an error and retried', async () => {
    let calls = 0;
    const reconcile = ((): Promise<ReconcileResult> => {
      calls++;
      if (calls === 1) throw new Error('sync throw');
      return Promise.resolve();
    }) as (key: string, signal: AbortSignal) => Promise<ReconcileResult>;
    const { controller, outcomes } = setup(reconcile);
    controller.start();
    controller.enqueue('k');
    await waitFor(() => outcomes().length === 2);
    await controller.stop();
    expect(outcomes().map((l) => l.result)).toEqual(['error', 'success']);
  });
});
