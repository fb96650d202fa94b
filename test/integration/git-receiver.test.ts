// The push receiver on the controller's HTTP server, with the GitSource controller in-process
// against the real kube-local hub and a real Git server: GitHub, GitLab and generic pushes
// trigger a fetch at once (the sources poll every 10 minutes, so nothing else could), and
// every bad request gets its status code and message, with no secret in the logs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { GitSource, GitSourceSpec } from '../../src/api/git-source.js';
import { receiverPath } from '../../src/git/receiver.js';
import { registerSourceControllers } from '../../src/git/register.js';
import { hmacSha256Hex } from '../../src/git/webhook-signature.js';
import { Manager } from '../../src/kube/manager.js';
import { captureLogs } from '../support/capture-logs.js';
import { HttpServer } from '../../src/server/http.js';
import { eventually, testClient, uniqueName } from '../support/clusters.js';
import { commitFiles, createRepo, startGitServer, type GitServer } from '../support/git-server.js';
import { createNamespace, deleteObject, ensureCrds, secret } from '../support/sluice-objects.js';

const hub = testClient('hub');
const ns = uniqueName('receiver');
const TOKEN = `hook-${uniqueName('secret')}-value`;
const logs = captureLogs();
const logLines = logs.raw;
let git: GitServer;
let storage: string;
let manager: Manager;
let server: HttpServer;
let base: string;

async function apply(name: string, spec: Partial<GitSourceSpec>) {
  await hub.raw.applyRaw(
    {
      apiVersion: 'sluice.dev/v1',
      kind: 'GitSource',
      metadata: { namespace: ns, name },
      spec: { interval: '10m', secretRef: { name: 'git-credentials' }, ...spec },
    } as KubernetesObject,
    { fieldManager: 'sluice-test', force: true },
  );
}

function get(name: string): Promise<GitSource> {
  return hub.raw.getRaw<GitSource>({
    apiVersion: 'sluice.dev/v1',
    kind: 'GitSource',
    metadata: { namespace: ns, name },
  } as KubernetesObject);
}

function waitRevision(name: string, revision: string) {
  return eventually(async () => {
    const s = await get(name);
    return s.status?.artifact?.revision === revision ? s : undefined;
  }, 30_000);
}

interface Reply {
  status: number;
  text: string;
}

async function post(name: string, headers: Record<string, string>, body: string | Buffer): Promise<Reply> {
  const res = await fetch(`${base}${receiverPath(ns, name)}`, { method: 'POST', headers, body });
  return { status: res.status, text: (await res.text()).trim() };
}

const sign = (body: string | Buffer, key = TOKEN) => `sha256=${hmacSha256Hex(key, Buffer.from(body))}`;

function githubPush(name: string, ref: string, repoUrl = git.url('hooked'), event = 'push'): Promise<Reply> {
  const body = JSON.stringify({
    ref,
    after: 'f'.repeat(40),
    repository: { clone_url: repoUrl, full_name: 'local/hooked' },
  });
  return post(
    name,
    { 'Content-Type': 'application/json', 'X-GitHub-Event': event, 'X-Hub-Signature-256': sign(body) },
    body,
  );
}

beforeAll(async () => {
  git = await startGitServer();
  storage = mkdtempSync(join(tmpdir(), 'sluice-receiver-test-'));
  await ensureCrds(hub);
  await createNamespace(hub, ns);
  await secret(hub, ns, 'git-credentials', git.credentials());
  await secret(hub, ns, 'hook-secret', { token: TOKEN });
  manager = new Manager({
    client: testClient('hub'),
    logger: logs.logger,
    leaderElection: false,
  });
  server = new HttpServer({ registry: manager.registry });
  registerSourceControllers(manager, {
    storagePath: storage,
    receiver: server,
    retry: { baseDelayMs: 200, maxDelayMs: 1000 },
  });
  const port = await server.listen('127.0.0.1:0');
  base = `http://127.0.0.1:${port}`;
  await manager.start();
  await createRepo(git, 'hooked', { 'a.yaml': 'a: 0\n' });
  await apply('hooked', {
    url: git.url('hooked'),
    ref: { branch: 'main' },
    webhook: { secretRef: { name: 'hook-secret' } },
  });
  await eventually(async () => (await get('hooked')).status?.artifact);
});

afterAll(async () => {
  await server?.close();
  await manager?.stop();
  await deleteObject(hub, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await git?.stop();
  if (storage) rmSync(storage, { recursive: true, force: true });
});

describe('push receiver', () => {
  it('GIVEN a GitHub ping THEN 200 pong', async () => {
    const body = JSON.stringify({ zen: 'Keep it logically awesome.', hook_id: 1 });
    const reply = await post(
      'hooked',
      { 'X-GitHub-Event': 'ping', 'X-Hub-Signature-256': sign(body), 'Content-Type': 'application/json' },
      body,
    );
    expect(reply).toEqual({ status: 200, text: `pong: GitSource ${ns}/hooked` });
  });

  it('GIVEN a signed GitHub push to the followed branch THEN 200 and the new commit is fetched at once (the interval is 10m)', async () => {
    const sha = await commitFiles(git, 'hooked', {
      add: { 'a.yaml': 'a: github\n' },
      message: 'github push',
    });
    const reply = await githubPush('hooked', 'refs/heads/main');
    expect(reply).toEqual({
      status: 200,
      text: `reconcile of GitSource ${ns}/hooked requested for a push to refs/heads/main`,
    });
    const s = await waitRevision('hooked', `main@sha1:${sha}`);
    expect(s.status?.lastHandledReconcileAt).toBe(
      s.metadata?.annotations?.['sluice.dev/reconcile-requested-at'],
    );
  });

  it('GIVEN a GitHub push as a form-encoded payload THEN it is accepted too', async () => {
    const sha = await commitFiles(git, 'hooked', { add: { 'a.yaml': 'a: form\n' }, message: 'form push' });
    const payload = JSON.stringify({ ref: 'refs/heads/main', repository: { clone_url: git.url('hooked') } });
    const body = `payload=${encodeURIComponent(payload)}`;
    const reply = await post(
      'hooked',
      {
        'Content-Type': 'application/x-www-form-urlencoded',
        'X-GitHub-Event': 'push',
        'X-Hub-Signature-256': sign(body),
      },
      body,
    );
    expect(reply.status).toBe(200);
    await waitRevision('hooked', `main@sha1:${sha}`);
  });

  it('GIVEN a GitLab push with the token THEN 200 and the commit is fetched at once', async () => {
    const sha = await commitFiles(git, 'hooked', {
      add: { 'a.yaml': 'a: gitlab\n' },
      message: 'gitlab push',
    });
    const body = JSON.stringify({
      object_kind: 'push',
      ref: 'refs/heads/main',
      project: { git_http_url: git.url('hooked'), path_with_namespace: 'local/hooked' },
    });
    const reply = await post(
      'hooked',
      { 'Content-Type': 'application/json', 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Token': TOKEN },
      body,
    );
    expect(reply).toEqual({
      status: 200,
      text: `reconcile of GitSource ${ns}/hooked requested for a push to refs/heads/main`,
    });
    await waitRevision('hooked', `main@sha1:${sha}`);
  });

  it('GIVEN a generic signed request THEN 200 and the commit is fetched at once', async () => {
    const sha = await commitFiles(git, 'hooked', {
      add: { 'a.yaml': 'a: generic\n' },
      message: 'generic push',
    });
    const body = JSON.stringify({ ref: 'refs/heads/main', repository: { url: git.url('hooked') } });
    const reply = await post(
      'hooked',
      { 'Content-Type': 'application/json', 'X-Signature': sign(body) },
      body,
    );
    expect(reply.status).toBe(200);
    await waitRevision('hooked', `main@sha1:${sha}`);
  });

  it('GIVEN a push to another branch, another repository or another event THEN 202 ignored, saying why', async () => {
    expect(await githubPush('hooked', 'refs/heads/feature')).toEqual({
      status: 202,
      text: `ignored: push to refs/heads/feature; GitSource ${ns}/hooked follows branch main`,
    });
    expect(await githubPush('hooked', 'refs/heads/main', 'https://github.com/someone/else.git')).toEqual({
      status: 202,
      text: `ignored: push for repository https://github.com/someone/else.git; GitSource ${ns}/hooked follows ${git.url('hooked')}`,
    });
    expect(await githubPush('hooked', 'refs/heads/main', git.url('hooked'), 'issues')).toEqual({
      status: 202,
      text: 'ignored: GitHub event "issues" is not a push',
    });
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    expect(
      await post('hooked', { 'X-Gitlab-Event': 'Merge Request Hook', 'X-Gitlab-Token': TOKEN }, body),
    ).toEqual({ status: 202, text: 'ignored: GitLab event "Merge Request Hook" is not a push' });
  });

  it('GIVEN a bad signature, a wrong token or no credentials THEN 401 saying which', async () => {
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    expect(
      await post(
        'hooked',
        { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sign(body, 'wrong-secret') },
        body,
      ),
    ).toEqual({
      status: 401,
      text: 'unauthorized: X-Hub-Signature-256 does not match the request body: wrong secret or altered body',
    });
    expect(
      await post(
        'hooked',
        { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sign(body).slice(0, 20) },
        body,
      ),
    ).toEqual({
      status: 401,
      text: 'unauthorized: X-Hub-Signature-256 must carry 64 hex digits after sha256=',
    });
    expect(
      await post(
        'hooked',
        { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': `sha1=${'0'.repeat(40)}` },
        body,
      ),
    ).toEqual({
      status: 401,
      text: 'unauthorized: X-Hub-Signature-256 must have the form sha256=<hex HMAC-SHA256 of the body>',
    });
    expect(await post('hooked', { 'X-Gitlab-Event': 'Push Hook', 'X-Gitlab-Token': 'guess' }, body)).toEqual({
      status: 401,
      text: 'unauthorized: X-Gitlab-Token does not match the webhook secret',
    });
    expect(await post('hooked', { 'X-Signature': sign(`${body} `) }, body)).toEqual({
      status: 401,
      text: 'unauthorized: X-Signature does not match the request body: wrong secret or altered body',
    });
    expect(await post('hooked', { 'Content-Type': 'application/json' }, body)).toEqual({
      status: 401,
      text: 'unauthorized: send X-Hub-Signature-256 (GitHub), X-Gitlab-Token (GitLab) or X-Signature: sha256=<HMAC of the body> (generic)',
    });
  });

  it('GIVEN a body over 1 MiB THEN 413, with or without a Content-Length', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 'a');
    expect(await post('hooked', { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sign(big) }, big)).toEqual(
      {
        status: 413,
        text: 'payload too large: the limit is 1048576 bytes',
      },
    );
    // A chunked body announces no length: the cap applies while reading.
    const chunks = async function* () {
      for (let i = 0; i < 3; i++) yield Buffer.alloc(512 * 1024, 'b');
    };
    const res = await fetch(`${base}${receiverPath(ns, 'hooked')}`, {
      method: 'POST',
      headers: { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sign('x') },
      body: ReadableStream.from(chunks()),
      duplex: 'half',
    } as RequestInit);
    expect({ status: res.status, text: (await res.text()).trim() }).toEqual({
      status: 413,
      text: 'payload too large: the limit is 1048576 bytes',
    });
  });

  it('GIVEN a signed body that is not JSON, or a push without a ref THEN 400 with the reason', async () => {
    const broken = '{"ref": "refs/heads/main",';
    const reply = await post(
      'hooked',
      { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sign(broken), 'Content-Type': 'application/json' },
      broken,
    );
    expect(reply.status).toBe(400);
    expect(reply.text).toMatch(/^bad request: malformed JSON body: .*JSON/);
    const noRef = JSON.stringify({ repository: { clone_url: git.url('hooked') } });
    expect(
      await post('hooked', { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sign(noRef) }, noRef),
    ).toEqual({ status: 400, text: 'bad request: the push payload has no "ref"' });
  });

  it('GIVEN an unknown source, one without spec.webhook, or a bad path THEN 404; GET THEN 405', async () => {
    await apply('plain', { url: git.url('hooked'), ref: { branch: 'main' } });
    await eventually(async () => (await get('plain')).status?.artifact);
    const body = JSON.stringify({ ref: 'refs/heads/main' });
    const headers = { 'X-GitHub-Event': 'push', 'X-Hub-Signature-256': sign(body) };
    expect(await post('nope', headers, body)).toEqual({
      status: 404,
      text: `not found: no GitSource ${ns}/nope with spec.webhook`,
    });
    expect(await post('plain', headers, body)).toEqual({
      status: 404,
      text: `not found: no GitSource ${ns}/plain with spec.webhook`,
    });
    const res = await fetch(`${base}/hooks/only-one-part`, { method: 'POST', body });
    expect({ status: res.status, text: (await res.text()).trim() }).toEqual({
      status: 404,
      text: 'not found: the push hook of a GitSource is /hooks/<namespace>/<name>',
    });
    expect((await fetch(`${base}${receiverPath(ns, 'hooked')}`)).status).toBe(405);
  });

  it('GIVEN all of the above THEN every request was logged, and no log line holds the secret or a signature', async () => {
    const all = logLines.join('');
    expect(logLines.filter((l) => l.includes('"message":"webhook"')).length).toBeGreaterThan(10);
    expect(all).toContain('"status":401');
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(hmacSha256Hex(TOKEN, Buffer.from(JSON.stringify({ ref: 'refs/heads/main' }))));
    expect(all).not.toContain(git.credentials().password);
  });
});
