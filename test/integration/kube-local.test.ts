import { execFile, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { clustersDir, kubeconfigPath, uniqueName } from '../support/clusters.js';
import { KUBE_LOCAL_BIN, startKubeLocal } from '../support/kube-local.mjs';

const run = promisify(execFile);

function kubectl(cluster: string, ...args: string[]) {
  return run('kubectl', args, {
    env: { ...process.env, KUBECONFIG: kubeconfigPath(cluster) },
    timeout: 120_000,
  });
}

/** Exit code and stderr of a kube-local run that is expected to fail fast. */
function kubeLocal(args: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(KUBE_LOCAL_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

/** PIDs whose command line mentions `needle`. */
function processesMentioning(needle: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) pids.push(Number(entry));
    } catch {
      // the process ended while we looked
    }
  }
  return pids;
}

describe('kube-local clusters', () => {
  const clusters = readdirSync(clustersDir(), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();

  it('GIVEN the test clusters THEN hub and members each have a kubeconfig and a Ready node', async () => {
    expect(clusters).toEqual(expect.arrayContaining(['hub', 'member-1', 'member-2', 'member-3']));
    for (const c of clusters) {
      const { stdout } = await kubectl(
        c,
        'get',
        'nodes',
        '-o',
        'jsonpath={.items[*].status.conditions[?(@.type=="Ready")].status}',
      );
      expect(stdout).toBe('True');
    }
  });

  it.each(['hub', 'member-1', 'member-2', 'member-3'])(
    'GIVEN cluster %s WHEN kubectl create deployment web --replicas=2 THEN it becomes Available',
    async (cluster) => {
      const ns = uniqueName('web');
      await kubectl(cluster, 'create', 'namespace', ns);
      try {
        await kubectl(cluster, 'create', 'deployment', 'web', '--image=nginx', '--replicas=2', '-n', ns);
        await kubectl(
          cluster,
          'wait',
          '--for=condition=Available',
          'deployment/web',
          '-n',
          ns,
          '--timeout=90s',
        );
        const { stdout } = await kubectl(
          cluster,
          'get',
          'pods',
          '-n',
          ns,
          '-o',
          'jsonpath={.items[*].status.phase}',
        );
        expect(stdout.split(' ')).toEqual(['Running', 'Running']);
        // The endpointslice controller runs: a Service gets ready endpoints for the pods.
        await kubectl(cluster, 'expose', 'deployment', 'web', '--port=80', '-n', ns);
        const deadline = Date.now() + 60_000;
        let addresses = '';
        while (Date.now() < deadline) {
          addresses = (
            await kubectl(
              cluster,
              'get',
              'endpointslices',
              '-n',
              ns,
              '-o',
              'jsonpath={.items[*].endpoints[*].addresses[0]}',
            )
          ).stdout;
          if (addresses.split(' ').filter(Boolean).length === 2) break;
          await new Promise((r) => setTimeout(r, 500));
        }
        expect(addresses.split(' ').filter(Boolean)).toHaveLength(2);
      } finally {
        await kubectl(cluster, 'delete', 'namespace', ns, '--wait=false');
      }
    },
  );

  it('GIVEN an unknown flag THEN a usage error, exit 2', async () => {
    const r = await kubeLocal(['--clusterz', '2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('unknown flag: --clusterz');
    expect(r.stderr).toContain('usage: kube-local');
  });

  it('GIVEN no --dir or a bad count THEN a usage error naming the flag', async () => {
    expect(await kubeLocal(['--clusters', '2'])).toEqual({
      code: 2,
      stderr: expect.stringContaining('--dir is required'),
    });
    expect(await kubeLocal(['--clusters', '0', '--dir', '/tmp/x'])).toEqual({
      code: 2,
      stderr: expect.stringContaining('--clusters must be between 1 and 10, got 0'),
    });
  });

  it('GIVEN a taken port THEN it says which and exits non-zero without starting anything', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    const dir = await mkdtemp(join(tmpdir(), 'kl-port-'));
    try {
      const r = await kubeLocal(['--clusters', '1', '--dir', dir, '--base-port', String(port)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`port ${port} (apiserver) is already in use`);
      expect(processesMentioning(dir)).toEqual([]);
    } finally {
      blocker.close();
    }
  });

  it('GIVEN a running kube-local WHEN it gets SIGTERM THEN it exits 0 and leaves no process behind', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'kl-term-'));
    const handle = await startKubeLocal({ clusters: 1, dir });
    expect(processesMentioning(dir).length).toBeGreaterThanOrEqual(2); // supervisor + cluster
    await handle.stop();
    expect(handle.process.exitCode).toBe(0);
    expect(processesMentioning(dir)).toEqual([]);
  });
});
