/**
 * Demo chapter 3 — progressive delivery on a real data plane: member-1 runs the demo app's
 * pods as real processes, Traefik routes real requests by the HTTPRoute weights Sluice sets,
 * Prometheus scrapes the pods' OpenTelemetry metrics, and a load generator sends steady
 * traffic through the gateway. examples/canary/deploy is served as its own Git repository;
 * the Delivery applies it to member-1 and the CanaryRelease (examples/canary) ships each new
 * version step by step.
 *
 * A good version is pushed and promoted through every step, with one progress line per change
 * (phase, step, weight, score, and which versions answered the last second of traffic); then
 * an erroring one is pushed and rolled back automatically: the demo prints `git log --oneline`
 * of the repository with Sluice's revert commit on top, and `sluice status canary` saying why.
 */
import { execFileSync } from 'node:child_process';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { CanaryRelease } from '../src/api/canary-release.js';
import type { ClusterClient } from '../src/kube/clients.js';
import { canaryDeployFiles, canaryHubObjects, retryOnPortTaken } from '../test/support/canary-example.js';
import { SLUICE_CLI } from '../test/support/controller-process.js';
import { startDataPlane, type DataPlane } from '../test/support/data-plane.js';
import { commitFiles, createRepo, runGit, type GitServer } from '../test/support/git-server.js';
import { startLoad, type Load, type LoadCounts } from '../test/support/load.js';

const say = (text: string) => console.log(`\x1b[1m▸ ${text}\x1b[0m`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Where the chapter runs (filled by scripts/demo.ts). */
export interface CanaryChapterContext {
  hub: ClusterClient;
  hubKubeconfig: string;
  /** The member cluster the canary runs on, as registered on the hub, and its kubeconfig. */
  cluster: string;
  memberKubeconfig: string;
  apply: (obj: KubernetesObject) => Promise<unknown>;
  /** The Git server of chapter 2 (it gets one more repository). */
  git: GitServer;
}

const NAMESPACE = 'sluice-system';
const NAME = 'demo-app';
const REPO = 'demo-app';

/** `v1=45 v2=5` for the versions that answered, with the 5xx count when there were any. */
function traffic(c: LoadCounts): string {
  const versions = Object.entries(c.byVersion)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([v, n]) => `${v}=${n}`)
    .join(' ');
  const errors = Object.entries(c.byStatus)
    .filter(([s]) => s.startsWith('5'))
    .reduce((n, [, k]) => n + k, 0);
  return `${versions || '-'}${errors ? ` (${errors}× 5xx)` : ''}${c.errors ? ` (${c.errors} failed)` : ''}`;
}

async function release(hub: ClusterClient): Promise<CanaryRelease> {
  return hub.raw.getRaw<CanaryRelease & KubernetesObject>({
    apiVersion: 'sluice.dev/v1',
    kind: 'CanaryRelease',
    metadata: { namespace: NAMESPACE, name: NAME },
  });
}

/**
 * Prints one line whenever the release's phase, step, weight or score changes (with the last
 * second of traffic), until `done` holds; throws after `timeoutMs`.
 */
async function follow(
  hub: ClusterClient,
  load: Load,
  done: (r: CanaryRelease) => boolean,
  timeoutMs = 180_000,
): Promise<CanaryRelease> {
  const start = Date.now();
  let shown = '';
  let window = load.counts();
  let windowAt = Date.now();
  let last = '-';
  for (;;) {
    const r = await release(hub).catch(() => undefined);
    if (Date.now() - windowAt >= 1000) {
      const now = load.counts();
      const delta: LoadCounts = {
        ...now,
        byVersion: Object.fromEntries(
          Object.entries(now.byVersion)
            .map(([v, n]) => [v, n - (window.byVersion[v] ?? 0)] as const)
            .filter(([, n]) => n > 0),
        ),
        byStatus: Object.fromEntries(
          Object.entries(now.byStatus).map(([s, n]) => [s, n - (window.byStatus[s] ?? 0)] as const),
        ),
        errors: now.errors - window.errors,
      };
      last = traffic(delta);
      window = now;
      windowAt = Date.now();
    }
    if (r) {
      const s = r.status ?? {};
      const key = `${s.phase} ${s.step} ${s.canaryWeight} ${s.lastScore}`;
      if (key !== shown) {
        shown = key;
        const t = ((Date.now() - start) / 1000).toFixed(1).padStart(5);
        const score = s.lastScore === undefined ? '-' : s.lastScore.toFixed(2);
        console.log(
          `  ${t}s  ${(s.phase ?? '').padEnd(12)} step ${(s.step ?? '-').padEnd(4)} weight ${String(s.canaryWeight ?? 0).padStart(3)}%  score ${score.padEnd(4)}  traffic/s: ${last}`,
        );
      }
      if (done(r)) return r;
    }
    if (Date.now() - start > timeoutMs) {
      throw new Error(
        `canary ${NAME} did not get there within ${timeoutMs / 1000}s: ${JSON.stringify(r?.status?.conditions)}`,
      );
    }
    await sleep(250);
  }
}

/** Runs chapter 3. Stops everything it started (data plane, load) before it returns or throws. */
export async function canaryChapter(ctx: CanaryChapterContext): Promise<void> {
  say(`chapter 3: progressive delivery — starting the data plane on ${ctx.cluster}`);
  let plane: DataPlane | undefined;
  let load: Load | undefined;
  try {
    plane = await retryOnPortTaken(() =>
      startDataPlane({ kubeconfig: ctx.memberKubeconfig, namespace: NAMESPACE, namespaces: [NAMESPACE] }),
    );
    console.log(`  gateway (Traefik, Gateway API) ${plane.gateway.url}; Prometheus ${plane.prometheus.url}`);

    say('serving examples/canary/deploy (demo-app v1 + HTTPRoute) as a Git repository');
    const { url } = await createRepo(ctx.git, REPO, canaryDeployFiles('v1'), 'demo-app v1');
    console.log(`  ${url}`);
    await ctx.apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: NAMESPACE, name: 'demo-app-git-auth' },
      stringData: ctx.git.credentials(),
    } as KubernetesObject);

    say('applying examples/canary: GitSource → Delivery to member-1, CanaryRelease demo-app');
    for (const obj of canaryHubObjects({
      namespace: NAMESPACE,
      gitUrl: url,
      cluster: ctx.cluster,
      prometheusUrl: plane.prometheus.url,
    })) {
      await ctx.apply(obj);
      console.log(`  ${obj.kind?.toLowerCase()}/${obj.metadata?.name} applied`);
    }
    load = startLoad(plane.gateway.url, { rps: 40, timeoutMs: 3000 });
    const first = await follow(
      ctx.hub,
      load,
      (r) => r.status?.phase === 'Succeeded' && r.status.lastPromotedRevision !== undefined,
    );
    console.log(`  v1 runs on ${NAME}-primary with all traffic (${first.status?.lastPromotedRevision})`);
    await sleep(2000);

    say('pushing demo-app v2 (good): 10% → 30% → 60% → promoted, one analysis every 5 s');
    const good = `main@sha1:${await commitFiles(ctx.git, REPO, { add: canaryDeployFiles('v2'), message: 'demo-app v2' })}`;
    await follow(
      ctx.hub,
      load,
      (r) => r.status?.lastPromotedRevision === good && r.status.phase === 'Succeeded',
    );
    console.log(`  promoted: ${NAME}-primary runs v2`);
    await sleep(2000);

    say('pushing demo-app v3-erroring (20% of its answers are 500)');
    const bad = await commitFiles(ctx.git, REPO, {
      add: canaryDeployFiles('v3-erroring'),
      message: 'demo-app v3-erroring',
    });
    const rolled = await follow(
      ctx.hub,
      load,
      (r) =>
        r.status?.phase === 'RolledBack' &&
        r.status.rollback?.revision === `main@sha1:${bad}` &&
        r.status.rollback.writeBack?.commit !== undefined,
    );
    const rb = rolled.status!.rollback!;
    console.log(
      `  rolled back at step ${rb.step}: ${rb.metric} = ${rb.value} (threshold ${rb.threshold}); revert ${rb.writeBack?.commit?.slice(0, 7)} pushed`,
    );

    say(`git log --oneline (${REPO})`);
    console.log(
      (await runGit(['log', '--oneline', '-5', 'main'], { cwd: ctx.git.repoPath(REPO) }))
        .split('\n')
        .map((l) => `  ${l}`)
        .join('\n'),
    );
    say(`sluice status canary ${NAME} -n ${NAMESPACE}`);
    console.log(
      execFileSync(
        process.execPath,
        [SLUICE_CLI, 'status', 'canary', NAME, '-n', NAMESPACE, '--kubeconfig', ctx.hubKubeconfig],
        { encoding: 'utf8' },
      ),
    );
    await sleep(2000);
    load.reset();
    await sleep(2000);
    console.log(`  traffic in the last 2 s: ${traffic(load.counts())}`);
  } finally {
    await load?.stop();
    await plane?.stop();
  }
}
