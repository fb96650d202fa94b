import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { REPO_ROOT } from './kube-local.mjs';

export const SLUICE_CLI = join(REPO_ROOT, 'dist', 'cli', 'main.js');

/** One JSON log line of the controller. */
export type LogLine = Record<string, unknown> & { message?: string; level?: string };

/**
 * A `sluice controller` process started from the built CLI (dist/), as an operator would
 * run it, with its JSON log lines collected for assertions.
 */
export class ControllerProcess {
  readonly child: ChildProcess;
  readonly lines: LogLine[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  readonly #waiters: Array<{ pred: (l: LogLine) => boolean; resolve: (l: LogLine) => void }> = [];

  constructor(args: string[], env: NodeJS.ProcessEnv = {}) {
    if (!existsSync(SLUICE_CLI))
      throw new Error(`${SLUICE_CLI} is missing: run "npm run build" (make test does)`);
    this.child = spawn(process.execPath, [SLUICE_CLI, 'controller', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = new Promise((resolve) =>
      this.child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    createInterface({ input: this.child.stdout! }).on('line', (text) => {
      let line: LogLine;
      try {
        line = JSON.parse(text) as LogLine;
      } catch {
        line = { message: text };
      }
      this.lines.push(line);
      for (const w of [...this.#waiters]) {
        if (w.pred(line)) {
          this.#waiters.splice(this.#waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    });
    createInterface({ input: this.child.stderr! }).on('line', (text) => this.stderr.push(text));
  }

  /** Resolves with the first log line (already seen or future) matching `pred`; rejects after `timeoutMs`. */
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs = 60_000): Promise<LogLine> {
    const seen = this.lines.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = { pred, resolve: (l: LogLine) => (clearTimeout(timer), resolve(l)) };
      const timer = setTimeout(() => {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1);
        reject(new Error(`no matching log line in ${timeoutMs} ms; last lines:\n${this.tail()}`));
      }, timeoutMs);
      this.#waiters.push(waiter);
    });
  }

  /** Reconcile outcome lines of one controller. */
  reconciles(controller: string): LogLine[] {
    return this.lines.filter((l) => l.message === 'reconciled' && l.controller === controller);
  }

  tail(n = 15): string {
    return [...this.lines.slice(-n).map((l) => JSON.stringify(l)), ...this.stderr.slice(-5)].join('\n');
  }

  async kill(
    signal: NodeJS.Signals = 'SIGTERM',
  ): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    return this.exited;
  }
}

/** Flags for a test controller on a kube-local cluster: loopback ports, its own Lease. */
export function controllerArgs(kubeconfig: string, leaseId: string, extra: string[] = []): string[] {
  return [
    '--kubeconfig',
    kubeconfig,
    '--metrics-bind-address',
    '127.0.0.1:0',
    '--health-probe-bind-address',
    '127.0.0.1:0',
    '--webhook-bind-address',
    '127.0.0.1:0',
    '--storage-path',
    mkdtempSync(join(tmpdir(), 'sluice-storage-')),
    '--leader-election-id',
    leaseId,
    ...extra,
  ];
}
