/**
 * bench/local-cluster — how fast and how big the local test bed is, and how fast the
 * controller core's workqueue turns keys over.
 *
 *   make bench            (or: npx tsx bench/local-cluster.ts)
 *
 * Prints one JSON object, then one human line per figure:
 * - kube-local start time to DIR/ready, cold (fresh directory: new etcd, PKI, bootstrap)
 *   and warm (same directory again: data kept), with 1 and 3 clusters;
 * - peak RSS of all kube-local processes together (sampled every 100 ms, 3 clusters, from
 *   start until 10 s after ready), and the sum of each process's own peak (VmHWM);
 * - workqueue throughput: keys/s through a Controller with a no-op reconciler.
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { Controller } from '../src/kube/controller.js';
import { silentLogger } from '../src/log.js';
import { REPO_ROOT, startKubeLocal } from '../test/support/kube-local.mjs';

function pidsMentioning(needle: string): number[] {
  return readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .filter((e) => {
      try {
        return readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(needle);
      } catch {
        return false;
      }
    })
    .map(Number);
}

function statusKiB(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

async function startStop(clusters: number, dir: string, fresh: boolean, sampleRss: boolean) {
  let peakRssKiB = 0;
  let hwmKiB = 0;
  const sampler = sampleRss
    ? setInterval(() => {
        const pids = pidsMentioning(dir);
        peakRssKiB = Math.max(
          peakRssKiB,
          pids.reduce((s, p) => s + statusKiB(p, 'VmRSS'), 0),
        );
        hwmKiB = Math.max(
          hwmKiB,
          pids.reduce((s, p) => s + statusKiB(p, 'VmHWM'), 0),
        );
      }, 100)
    : undefined;
  const handle = await startKubeLocal({ clusters, dir, fresh });
  if (sampleRss) await new Promise((r) => setTimeout(r, 10_000));
  clearInterval(sampler);
  await handle.stop();
  return { seconds: handle.readySeconds, peakRssMiB: peakRssKiB / 1024, sumOfPeaksMiB: hwmKiB / 1024 };
}

async function workqueueThroughput(keys: number, workers: number): Promise<number> {
  let done = 0;
  let finish!: () => void;
  const finished = new Promise<void>((r) => (finish = r));
  const controller = new Controller({
    name: 'bench',
    workers,
    logger: silentLogger(),
    registry: new Registry(),
    reconciler: {
      async reconcile() {
        if (++done === keys) finish();
      },
    },
  });
  controller.start();
  const start = process.hrtime.bigint();
  for (let i = 0; i < keys; i++) controller.enqueue(`ns/key-${i}`);
  await finished;
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  await controller.stop();
  return keys / seconds;
}

const base = join(REPO_ROOT, '.work', 'bench-local-cluster');
const result: Record<string, number> = {};
for (const n of [1, 3]) {
  const dir = join(base, `c${n}`);
  rmSync(dir, { recursive: true, force: true });
  const cold = await startStop(n, dir, true, n === 3);
  const warm = await startStop(n, dir, false, false);
  result[`cold_start_s_${n}`] = Number(cold.seconds.toFixed(2));
  result[`warm_start_s_${n}`] = Number(warm.seconds.toFixed(2));
  if (n === 3) {
    result.peak_rss_mib_3 = Math.round(cold.peakRssMiB);
    result.sum_of_process_peaks_mib_3 = Math.round(cold.sumOfPeaksMiB);
  }
}
rmSync(base, { recursive: true, force: true });
await workqueueThroughput(10_000, 4); // warm-up (JIT)
result.workqueue_keys_per_s = Math.round(await workqueueThroughput(100_000, 4));

console.log(JSON.stringify({ bench: 'local-cluster', ...result }));
console.log(`kube-local start, 1 cluster: cold ${result.cold_start_s_1}s, warm ${result.warm_start_s_1}s`);
console.log(`kube-local start, 3 clusters: cold ${result.cold_start_s_3}s, warm ${result.warm_start_s_3}s`);
console.log(
  `kube-local peak RSS, 3 clusters: ${result.peak_rss_mib_3} MiB together (sum of per-process peaks ${result.sum_of_process_peaks_mib_3} MiB)`,
);
console.log(`workqueue throughput, no-op reconciler, 4 workers: ${result.workqueue_keys_per_s} keys/s`);
