// A real Prometheus (Debian's /usr/bin/prometheus) for the analysis tests: a free loopback
// port, a temp TSDB, optional static scrape targets and optional basic auth through
// `--web.config.file` with a bcrypt-hashed password. test/support/prometheus.ts (the test
// bed's, with kubernetes_sd) is a different helper; this one needs no cluster.
//
// No jest imports here.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PROMETHEUS_BIN = process.env.SLUICE_PROMETHEUS_BIN ?? '/usr/bin/prometheus';

/** Options for {@link startPrometheus}. */
export interface PrometheusOptions {
  /** `host:port` targets scraped every `scrapeInterval` with `honor_labels`, as job `job`. */
  targets?: string[];
  job?: string;
  scrapeInterval?: string;
  /** Require basic auth on the API (and `/-/ready`). */
  basicAuth?: { username: string; password: string };
}

/** A running Prometheus. `stop()` is idempotent and removes the TSDB. */
export interface PrometheusHandle {
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  stop(): Promise<void>;
  /** Its log so far (stderr), for failure messages. */
  log(): string;
}

/** A free TCP port on 127.0.0.1 (the OS picks; tiny race until Prometheus binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as { port: number };
      srv.close(() => resolve(port));
    });
  });
}

/**
 * bcrypt hash for Prometheus' web config. Neither Node nor Python's stdlib has bcrypt; the
 * system crypt(3) (libxcrypt, used by perl's `crypt`) has had `$2b$` on Debian for years.
 */
export function bcryptHash(password: string): string {
  const alphabet = './ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  const salt = [...randomBytes(22)].map((b) => alphabet[b % 64]).join('');
  const hash = execFileSync('perl', ['-e', 'print crypt($ARGV[0], $ARGV[1])', password, `$2b$05$${salt}`], {
    encoding: 'utf8',
  });
  if (!hash.startsWith('$2b$05$')) throw new Error(`this system's crypt(3) has no bcrypt: got ${hash}`);
  return hash;
}

/** Starts Prometheus and waits until `/-/ready` answers 200 (at most `timeoutMs`). */
export async function startPrometheus(
  opts: PrometheusOptions = {},
  timeoutMs = 30_000,
): Promise<PrometheusHandle> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-prom-'));
  const port = await freePort();
  const scrape = opts.targets?.length
    ? `scrape_configs:\n  - job_name: ${JSON.stringify(opts.job ?? 'test')}\n    honor_labels: true\n    static_configs:\n      - targets: ${JSON.stringify(opts.targets)}\n`
    : '';
  const interval = opts.scrapeInterval ?? '1s';
  writeFileSync(
    join(dir, 'prometheus.yml'),
    `global:\n  scrape_interval: ${interval}\n  evaluation_interval: ${interval}\n${scrape}`,
  );
  const args = [
    `--config.file=${join(dir, 'prometheus.yml')}`,
    `--storage.tsdb.path=${join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--log.level=warn',
  ];
  const headers: Record<string, string> = {};
  if (opts.basicAuth) {
    const { username, password } = opts.basicAuth;
    writeFileSync(
      join(dir, 'web.yml'),
      `basic_auth_users:\n  ${JSON.stringify(username)}: ${JSON.stringify(bcryptHash(password))}\n`,
    );
    args.push(`--web.config.file=${join(dir, 'web.yml')}`);
    headers.Authorization = `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
  }
  let stderr = '';
  const child: ChildProcess = spawn(PROMETHEUS_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-20_000);
  });
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once('exit', () => {
      exited = true;
      resolve();
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const handle: PrometheusHandle = {
    url,
    port,
    pid: child.pid!,
    log: () => stderr,
    async stop() {
      if (!exited) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exit;
        clearTimeout(timer);
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exited) {
      await handle.stop();
      throw new Error(`prometheus exited before it was ready:\n${stderr}`);
    }
    try {
      const res = await fetch(`${url}/-/ready`, { headers, signal: AbortSignal.timeout(1000) });
      if (res.status === 200) return handle;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await handle.stop();
      throw new Error(`prometheus not ready within ${timeoutMs}ms:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
