// Starting and stopping bin/kube-local from Node: used by jest's global setup (which
// jest loads without its TypeScript transform, hence plain JavaScript), the demo and
// the benchmarks.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const KUBE_LOCAL_BIN = join(REPO_ROOT, 'bin', 'kube-local');

/** Names kube-local gives its clusters: hub, member-1, … */
export function clusterNames(count) {
  return Array.from({ length: count }, (_, i) => (i === 0 ? 'hub' : `member-${i}`));
}

/**
 * Starts `bin/kube-local --clusters N --dir DIR` and resolves once DIR/ready exists, with
 * `{ dir, process, readySeconds, stop() }`. Rejects with kube-local's own output when it
 * exits first.
 * @param {{ clusters: number, dir: string, timeoutMs?: number, fresh?: boolean }} opts
 */
export async function startKubeLocal(opts) {
  if (!existsSync(KUBE_LOCAL_BIN))
    throw new Error(`${KUBE_LOCAL_BIN} is missing: run "make kube-local" first`);
  if (opts.fresh !== false) rmSync(opts.dir, { recursive: true, force: true });
  mkdirSync(opts.dir, { recursive: true });
  const logPath = join(opts.dir, 'kube-local.log');
  const logFd = openSync(logPath, 'a');
  const started = Date.now();
  const child = spawn(KUBE_LOCAL_BIN, ['--clusters', String(opts.clusters), '--dir', opts.dir], {
    stdio: ['ignore', logFd, logFd],
  });
  const exited = new Promise((res) => child.once('exit', (code) => res(code)));
  const timeoutMs = opts.timeoutMs ?? 300_000;
  for (;;) {
    if (existsSync(join(opts.dir, 'ready'))) break;
    const done = await Promise.race([exited, new Promise((r) => setTimeout(() => r('wait'), 25))]);
    if (done !== 'wait') {
      throw new Error(
        `kube-local exited (${String(done)}) before ready:\n${readFileSync(logPath, 'utf8').slice(-3000)}`,
      );
    }
    if (Date.now() - started > timeoutMs) {
      child.kill('SIGTERM');
      throw new Error(`kube-local not ready after ${timeoutMs / 1000}s; see ${logPath}`);
    }
  }
  return {
    dir: opts.dir,
    process: child,
    // kube-local writes its own start-to-ready time into DIR/ready; polling adds noise.
    readySeconds: Number(readFileSync(join(opts.dir, 'ready'), 'utf8')) || (Date.now() - started) / 1000,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
