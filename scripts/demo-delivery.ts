/**
 * Demo chapter 2 — GitOps delivery: the examples directory is served as a Git repository
 * by git's own http-backend; a Delivery places examples/apps/web on every Cluster labelled
 * env=prod; a commit is pushed and announced by a signed webhook, and the demo prints it
 * arriving on each member with the measured delay; then member-3 is labelled env=prod and
 * the app arrives there too.
 */
import { createHmac } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { ClusterClient } from '../src/kube/clients.js';
import { isNotFound } from '../src/kube/errors.js';
import { commitFiles, createRepo, startGitServer, type GitServer } from '../test/support/git-server.js';
import { REPO_ROOT } from '../test/support/kube-local.mjs';

const say = (text: string) => console.log(`\x1b[1m▸ ${text}\x1b[0m`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function filesUnder(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else out[relative(root, path)] = readFileSync(path, 'utf8');
    }
  };
  walk(root);
  return out;
}

/** The GREETING env of the web Deployment on a member, or undefined when it is not there. */
async function greeting(member: ClusterClient): Promise<string | undefined> {
  try {
    const d = await member.raw.getRaw<
      KubernetesObject & {
        spec: {
          template: { spec: { containers: Array<{ env?: Array<{ name: string; value?: string }> }> } };
        };
      }
    >({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { namespace: 'web', name: 'web' },
    });
    return d.spec.template.spec.containers[0]?.env?.find((e) => e.name === 'GREETING')?.value;
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Waits until `check` holds on every member; returns ms from `since` per member. */
async function arrival(
  members: Record<string, ClusterClient>,
  check: (c: ClusterClient) => Promise<boolean>,
  since: number,
  timeoutMs = 60_000,
) {
  const seen: Record<string, number> = {};
  while (Object.keys(seen).length < Object.keys(members).length) {
    for (const [name, client] of Object.entries(members)) {
      if (seen[name] === undefined && (await check(client))) {
        seen[name] = Date.now() - since;
        console.log(`  ${name}: arrived after ${(seen[name]! / 1000).toFixed(2)}s`);
      }
    }
    if (Date.now() - since > timeoutMs)
      throw new Error(`not every member converged within ${timeoutMs / 1000}s: ${JSON.stringify(seen)}`);
    await sleep(50);
  }
  return seen;
}

export interface DeliveryChapterContext {
  hub: ClusterClient;
  members: Record<string, ClusterClient>;
  apply: (obj: KubernetesObject) => Promise<unknown>;
  webhookPort: number;
  relabel: (cluster: string, labels: Record<string, string>) => Promise<void>;
}

/** Runs chapter 2; returns the git server (stopped by the caller). */
export async function deliveryChapter(ctx: DeliveryChapterContext): Promise<GitServer> {
  say('serving examples/ as a Git repository (git http-backend, basic auth)');
  const git = await startGitServer({ username: 'demo', password: 'demo-password' });
  const { url } = await createRepo(git, 'examples', filesUnder(join(REPO_ROOT, 'examples')), 'examples');
  console.log(`  ${url}`);

  say('applying examples/delivery/web.yaml: GitSource → PlacementRule env=prod → Delivery');
  const token = 'demo-webhook-token';
  await ctx.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: 'sluice-system', name: 'examples-git-auth' },
    stringData: { username: 'demo', password: 'demo-password' },
  } as KubernetesObject);
  await ctx.apply({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { namespace: 'sluice-system', name: 'examples-webhook' },
    stringData: { token },
  } as KubernetesObject);
  for (const doc of parseAllDocuments(
    readFileSync(join(REPO_ROOT, 'examples', 'delivery', 'web.yaml'), 'utf8'),
  )) {
    const obj = doc.toJS() as KubernetesObject & { spec: Record<string, unknown> };
    if (obj.kind === 'GitSource') {
      obj.spec.url = url; // the demo's server picks a free port
      obj.spec.interval = '10m'; // the webhook, not polling, brings the change
      obj.spec.webhook = { secretRef: { name: 'examples-webhook' } };
    }
    await ctx.apply(obj);
  }
  const prod = { 'member-1': ctx.members['member-1']!, 'member-2': ctx.members['member-2']! };
  const started = Date.now();
  await arrival(prod, async (c) => (await greeting(c)) === 'hello from v1', started);

  say('committing a change (GREETING v1 → v2) and sending the push webhook');
  const deployment = readFileSync(join(REPO_ROOT, 'examples', 'apps', 'web', 'deployment.yaml'), 'utf8');
  const sha = await commitFiles(git, 'examples', {
    add: { 'apps/web/deployment.yaml': deployment.replace('hello from v1', 'hello from v2') },
    message: 'web: say hello from v2',
  });
  const pushed = Date.now();
  const body = JSON.stringify({ ref: 'refs/heads/main', after: sha, repository: { clone_url: url } });
  const res = await fetch(`http://127.0.0.1:${ctx.webhookPort}/hooks/sluice-system/examples`, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'X-GitHub-Event': 'push',
      'X-Hub-Signature-256': `sha256=${createHmac('sha256', token).update(body).digest('hex')}`,
    },
    body,
  });
  console.log(`  commit ${sha.slice(0, 7)} pushed; webhook answered ${res.status}`);
  await arrival(prod, async (c) => (await greeting(c)) === 'hello from v2', pushed);

  say('labelling member-3 env=prod: the PlacementRule picks it up and the app arrives');
  const labelled = Date.now();
  await ctx.relabel('member-3', { env: 'prod', region: 'ap-south' });
  await arrival(
    { 'member-3': ctx.members['member-3']! },
    async (c) => (await greeting(c)) === 'hello from v2',
    labelled,
  );
  return git;
}
