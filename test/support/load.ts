// A steady load generator for the test bed's data plane: N requests per second to one URL
// (through the gateway), each answer counted by its `x-demo-version` header and status code,
// so tests can assert "100% on primary" or a weight ratio, and the demo can show live traffic.
//
//   const load = startLoad('http://127.0.0.1:8000/', { rps: 50 });
//   … await load.stop() → { total, byVersion: { v1: 40, v2: 10 }, byStatus: { 200: 48, 500: 2 }, … }
//
// CLI (the demo): npx tsx test/support/load.ts URL [--rps 20] [--duration 30s] [--host NAME]
// prints one line of counts per second until the duration ends or Ctrl-C.
//
// Requests are paced on a fixed schedule (not closed-loop), so a slow backend does not lower
// the offered rate; at most `maxInFlight` run at once, the rest are counted as `dropped`.
// No jest imports here.
import { pathToFileURL } from 'node:url';

/** Counts so far. `byVersion` keys are the header value, or `none` when it was missing. */
export interface LoadCounts {
  total: number;
  byVersion: Record<string, number>;
  byStatus: Record<string, number>;
  /** Per version, per status: `byVersionStatus.v2['500']`. */
  byVersionStatus: Record<string, Record<string, number>>;
  /** Requests that got no HTTP answer (connection refused, timeout). */
  errors: number;
  /** Requests not sent because `maxInFlight` were still running. */
  dropped: number;
  /** The last few transport errors, for failure messages. */
  lastErrors: string[];
}

export interface LoadOptions {
  /** Requests per second (default 20). */
  rps?: number;
  /** Stop by itself after this many ms (default: until `stop()`). */
  durationMs?: number;
  /** Extra request headers, e.g. `{ host: 'demo.example' }` for a Gateway listener hostname. */
  headers?: Record<string, string>;
  /** Per-request timeout (default 5 s). */
  timeoutMs?: number;
  /** Default 200. */
  maxInFlight?: number;
}

export interface Load {
  /** A copy of the counts so far. */
  counts(): LoadCounts;
  /** Zeroes the counts (e.g. after a weight change has settled) without stopping. */
  reset(): void;
  /** Stops sending, waits for requests in flight, returns the final counts. */
  stop(): Promise<LoadCounts>;
  /** Resolves with the final counts when `durationMs` has passed (or `stop()` was called). */
  readonly done: Promise<LoadCounts>;
}

function emptyCounts(): LoadCounts {
  return {
    total: 0,
    byVersion: {},
    byStatus: {},
    byVersionStatus: {},
    errors: 0,
    dropped: 0,
    lastErrors: [],
  };
}

function copy(c: LoadCounts): LoadCounts {
  return structuredClone(c);
}

/** Share of answered requests with `version` (0 when none answered). Pure. */
export function versionShare(c: LoadCounts, version: string): number {
  const answered = Object.values(c.byVersion).reduce((a, b) => a + b, 0);
  return answered === 0 ? 0 : (c.byVersion[version] ?? 0) / answered;
}

/** Starts sending; see {@link LoadOptions}. */
export function startLoad(url: string, opts: LoadOptions = {}): Load {
  const rps = opts.rps ?? 20;
  if (!(rps > 0 && rps <= 10_000)) throw new Error(`load: rps must be in (0, 10000], got ${rps}`);
  const timeoutMs = opts.timeoutMs ?? 5000;
  const maxInFlight = opts.maxInFlight ?? 200;
  let counts = emptyCounts();
  const inFlight = new Set<Promise<void>>();
  let stopped = false;
  let finish!: (c: LoadCounts) => void;
  const done = new Promise<LoadCounts>((r) => (finish = r));

  const one = async (): Promise<void> => {
    try {
      const res = await fetch(url, {
        headers: opts.headers,
        signal: AbortSignal.timeout(timeoutMs),
      });
      await res.arrayBuffer();
      const version = res.headers.get('x-demo-version') ?? 'none';
      const status = String(res.status);
      counts.total++;
      counts.byVersion[version] = (counts.byVersion[version] ?? 0) + 1;
      counts.byStatus[status] = (counts.byStatus[status] ?? 0) + 1;
      const vs = (counts.byVersionStatus[version] ??= {});
      vs[status] = (vs[status] ?? 0) + 1;
    } catch (err) {
      counts.total++;
      counts.errors++;
      const msg =
        err instanceof Error ? `${err.message}${err.cause ? `: ${String(err.cause)}` : ''}` : String(err);
      counts.lastErrors = [...counts.lastErrors.slice(-4), msg];
    }
  };

  const start = performance.now();
  let sent = 0;
  // A 10 ms tick sends however many requests the schedule says are due: smooth at any rate.
  const timer = setInterval(() => {
    const due = Math.floor(((performance.now() - start) / 1000) * rps) - sent;
    for (let i = 0; i < due; i++) {
      sent++;
      if (inFlight.size >= maxInFlight) {
        counts.dropped++;
        continue;
      }
      const p = one().finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }, 10);

  const stop = async (): Promise<LoadCounts> => {
    if (!stopped) {
      stopped = true;
      clearInterval(timer);
      await Promise.allSettled([...inFlight]);
      finish(copy(counts));
    }
    return done;
  };
  if (opts.durationMs !== undefined) setTimeout(() => void stop(), opts.durationMs).unref();

  return {
    counts: () => copy(counts),
    reset: () => {
      counts = emptyCounts();
    },
    stop,
    done,
  };
}

/** `30s`, `2m`, `500ms` or plain seconds → ms. */
export function parseDuration(s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(s);
  if (!m) throw new Error(`--duration ${s}: want e.g. 30s, 2m or 500ms`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

/** Parses the CLI arguments; throws a usage error naming the bad argument. Pure. */
export function parseLoadArgs(argv: string[]): { url: string; opts: LoadOptions } {
  let url: string | undefined;
  const opts: LoadOptions = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--rps') opts.rps = Number(value());
    else if (a === '--duration') opts.durationMs = parseDuration(value());
    else if (a === '--host') opts.headers = { ...opts.headers, host: value() };
    else if (a.startsWith('-')) throw new Error(`unknown option ${a}`);
    else if (url === undefined) url = a;
    else throw new Error(`unexpected argument ${a}`);
  }
  if (!url) throw new Error('missing URL');
  if (opts.rps !== undefined && !(opts.rps > 0)) throw new Error(`--rps must be a positive number`);
  return { url, opts };
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseLoadArgs(argv);
  } catch (err) {
    console.error(
      `load: ${(err as Error).message}\nusage: load.ts URL [--rps N] [--duration 30s] [--host NAME]`,
    );
    return 2;
  }
  const load = startLoad(parsed.url, parsed.opts);
  let last = load.counts();
  const show = setInterval(() => {
    const now = load.counts();
    const delta = (a: Record<string, number>, b: Record<string, number>) =>
      Object.entries(a)
        .map(([k, v]) => `${k}=${v - (b[k] ?? 0)}`)
        .filter((s) => !s.endsWith('=0'))
        .join(' ');
    console.log(
      `${new Date().toISOString().slice(11, 19)}  versions: ${delta(now.byVersion, last.byVersion) || '-'}  status: ${delta(now.byStatus, last.byStatus) || '-'}${now.errors > last.errors ? `  errors: ${now.errors - last.errors} (${now.lastErrors.at(-1)})` : ''}`,
    );
    last = now;
  }, 1000);
  process.once('SIGINT', () => void load.stop());
  process.once('SIGTERM', () => void load.stop());
  const final = await load.done;
  clearInterval(show);
  console.log(`total ${final.total}: ${JSON.stringify(final.byVersionStatus)} errors ${final.errors}`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
