// A real Git smart-HTTP server for tests and the demo: git's own `git http-backend` behind a
// small CGI bridge on 127.0.0.1, with basic auth, push enabled, and a request log that tests
// assert on. Plus helpers that write to the hosted repositories with the system `git` CLI.
//
// No jest imports here: the demo runs this from a plain Node script.
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';

const HOST = '127.0.0.1';
const REALM = 'sluice-test-git';

/** Options for {@link startGitServer}. */
export interface GitServerOptions {
  /** Where the bare repositories live. Default: a fresh temp directory, removed by `stop()`. */
  root?: string;
  /** Basic-auth user name. Default `sluice`. */
  username?: string;
  /** Basic-auth password. Default: random, so a leaked password in an error message is detectable. */
  password?: string;
  /** Port on 127.0.0.1. Default 0 (a free port chosen by the OS). */
  port?: number;
}

/** One HTTP request the server answered, in arrival order. */
export interface GitRequestRecord {
  readonly method: string;
  /** URL path without the query, e.g. `/app.git/info/refs`. */
  readonly path: string;
  /** Repository name as passed to `url()`, e.g. `app` (undefined when the path names none). */
  readonly repo: string | undefined;
  /** `git-upload-pack` (fetch, ls-remote) or `git-receive-pack` (push), when the request names one. */
  readonly service: string | undefined;
  readonly status: number;
  /** False when the request was answered 401 without reaching http-backend. */
  readonly authorized: boolean;
  /** The request's `Content-Encoding` (git sends `gzip` for large fetch negotiations). */
  readonly contentEncoding: string | undefined;
  /** True when the request body came with `Transfer-Encoding: chunked` (large pushes). */
  readonly chunked: boolean;
  /** The `Git-Protocol` header (`version=2` when a client asks for protocol v2). */
  readonly gitProtocol: string | undefined;
}

/** A running server. Every method is safe to call in any state; `stop()` is final. */
export interface GitServer {
  /** Directory holding the bare repositories (`<root>/<name>.git`). */
  readonly root: string;
  /** The listening port; stays the same across `pause()`/`resume()`. */
  readonly port: number;
  /** The clone URL of repository `name` (no credentials unless `withCredentials`). */
  url(name: string, opts?: { withCredentials?: boolean }): string;
  /** On-disk path of repository `name`'s bare directory. */
  repoPath(name: string): string;
  /** The credentials requests must carry right now. */
  credentials(): { username: string; password: string };
  /** Changes the accepted credentials; later requests with the old ones get 401. */
  setCredentials(username: string, password: string): void;
  /** Requests answered so far, oldest first (a copy). */
  requests(): GitRequestRecord[];
  /** Forgets the request log (e.g. before the part of a test that counts). */
  clearRequests(): void;
  /**
   * Simulates the server going down: stops listening and cuts every open connection, so
   * clients get ECONNREFUSED/ECONNRESET. Resolves once the port is closed.
   */
  pause(): Promise<void>;
  /** Listens again on the same port. */
  resume(): Promise<void>;
  /** Closes the server, kills in-flight backends and removes `root` if the server created it. */
  stop(): Promise<void>;
}

/** `$(git --exec-path)/git-http-backend`, looked up once. */
let httpBackend: string | undefined;
function httpBackendPath(): string {
  httpBackend ??= join(
    execFileSync('git', ['--exec-path'], { encoding: 'utf8', env: gitEnv() }).trim(),
    'git-http-backend',
  );
  return httpBackend;
}

/**
 * Starts git's `http-backend` behind a CGI bridge on 127.0.0.1. Guarantees: every request
 * without the current credentials is answered 401 with `WWW-Authenticate: Basic`; push is
 * enabled for every repository under `root`; chunked and gzip'd request bodies reach
 * http-backend intact; nothing reads or writes the user's global or system git config.
 */
export async function startGitServer(opts: GitServerOptions = {}): Promise<GitServer> {
  const backend = httpBackendPath();
  const ownsRoot = opts.root === undefined;
  const root = resolve(opts.root ?? mkdtempSync(join(tmpdir(), 'sluice-git-')));
  mkdirSync(root, { recursive: true });
  let username = opts.username ?? 'sluice';
  let password = opts.password ?? randomBytes(12).toString('hex');
  let log: GitRequestRecord[] = [];
  const children = new Set<ChildProcess>();

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(`git-server: ${err instanceof Error ? err.message : String(err)}\n`);
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', `http://${HOST}`);
    const path = decodeURIComponent(url.pathname);
    const service =
      url.searchParams.get('service') ?? /\/(git-upload-pack|git-receive-pack)$/.exec(path)?.[1];
    const repoMatch = /^\/(.+?)\.git(?:\/|$)/.exec(path);
    const header = (name: string) => {
      const v = req.headers[name];
      return Array.isArray(v) ? v.join(', ') : v;
    };
    // Recorded when the status is decided, before the client can see the response: a test
    // that counts requests right after its git call must find this one already logged.
    const record = (status: number, authorized: boolean) => {
      const entry: { -readonly [K in keyof GitRequestRecord]: GitRequestRecord[K] } = {
        method: req.method ?? 'GET',
        path,
        repo: repoMatch?.[1],
        service: service ?? undefined,
        status,
        authorized,
        contentEncoding: header('content-encoding'),
        chunked: /chunked/i.test(header('transfer-encoding') ?? ''),
        gitProtocol: header('git-protocol'),
      };
      log.push(entry);
      return entry;
    };

    if (!authorized(header('authorization'), username, password)) {
      req.resume();
      res.writeHead(401, { 'WWW-Authenticate': `Basic realm="${REALM}"`, 'Content-Type': 'text/plain' });
      record(401, false);
      res.end('authentication required\n');
      return;
    }

    const env: NodeJS.ProcessEnv = {
      ...gitEnv(),
      GATEWAY_INTERFACE: 'CGI/1.1',
      SERVER_PROTOCOL: 'HTTP/1.1',
      SERVER_SOFTWARE: 'sluice-git-server',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: path,
      QUERY_STRING: url.search.slice(1),
      REMOTE_ADDR: req.socket.remoteAddress ?? HOST,
      REMOTE_USER: username,
      AUTH_TYPE: 'Basic',
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: '1',
      // http-backend refuses receive-pack unless enabled; config via env applies to every
      // repo under root, including ones a test creates without these helpers.
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'http.receivepack',
      GIT_CONFIG_VALUE_0: 'true',
    };
    const contentType = header('content-type');
    if (contentType) env.CONTENT_TYPE = contentType;
    // Without CONTENT_LENGTH http-backend reads the body to EOF, which is what a chunked
    // request needs; with it, it reads exactly that many (possibly gzip'd) bytes.
    const contentLength = header('content-length');
    if (contentLength && !header('transfer-encoding')) env.CONTENT_LENGTH = contentLength;
    // http-backend inflates gzip'd bodies itself when told the encoding (CGI header mapping).
    const encoding = header('content-encoding');
    if (encoding) env.HTTP_CONTENT_ENCODING = encoding;
    const protocol = header('git-protocol');
    if (protocol) env.HTTP_GIT_PROTOCOL = protocol;

    const child = spawn(backend, [], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    children.add(child);
    const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString('utf8');
    });
    // A spawn failure ends in 'close' with no output (answered 502); unhandled it would crash us.
    child.once('error', (err) => {
      stderr += err.message;
    });
    // A backend that stops reading early (an error it already reported) must not crash us.
    child.stdin.on('error', () => {});
    req.pipe(child.stdin);
    // A client that hangs up mid-response leaves nobody to read the backend's output.
    res.on('close', () => {
      if (!res.writableFinished && child.exitCode === null) child.kill('SIGKILL');
    });

    const entry = record(0, true);
    const writeHead = res.writeHead.bind(res);
    res.writeHead = ((code: number, ...rest: unknown[]) => {
      entry.status = code;
      return (writeHead as (...a: unknown[]) => ServerResponse)(code, ...rest);
    }) as typeof res.writeHead;
    entry.status = await pipeCgiResponse(child, res, () => stderr);
    await exited;
    children.delete(child);
  }

  async function listen(port: number): Promise<number> {
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(port, HOST, () => {
        server.off('error', fail);
        ok();
      });
    });
    return (server.address() as AddressInfo).port;
  }

  async function close(): Promise<void> {
    if (!server.listening) return;
    const closed = new Promise<void>((r) => server.close(() => r()));
    server.closeAllConnections();
    await closed;
  }

  const port = await listen(opts.port ?? 0);
  let stopped = false;

  return {
    root,
    port,
    url(name, o) {
      const auth = o?.withCredentials
        ? `${encodeURIComponent(username)}:${encodeURIComponent(password)}@`
        : '';
      return `http://${auth}${HOST}:${port}/${name}.git`;
    },
    repoPath: (name) => repoDir(root, name),
    credentials: () => ({ username, password }),
    setCredentials(u, p) {
      username = u;
      password = p;
    },
    requests: () => [...log],
    clearRequests() {
      log = [];
    },
    pause: close,
    async resume() {
      if (stopped) throw new Error('git-server: resume() after stop()');
      if (!server.listening) await listen(port);
    },
    async stop() {
      stopped = true;
      await close();
      for (const child of children) child.kill('SIGKILL');
      if (ownsRoot) rmSync(root, { recursive: true, force: true });
    },
  };
}

function authorized(header: string | undefined, username: string, password: string): boolean {
  const m = /^Basic\s+(\S+)$/i.exec(header ?? '');
  if (!m?.[1]) return false;
  const given = Buffer.from(m[1], 'base64');
  const want = Buffer.from(`${username}:${password}`, 'utf8');
  return given.length === want.length && timingSafeEqual(given, want);
}

/**
 * Copies a CGI response (headers, a blank line, the body) from http-backend's stdout to
 * `res`, honouring its `Status:` header. Resolves with the status sent.
 */
function pipeCgiResponse(child: ChildProcess, res: ServerResponse, stderr: () => string): Promise<number> {
  return new Promise((done) => {
    const stdout = child.stdout!;
    let head = Buffer.alloc(0);
    let status = 0;
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const crlf = head.indexOf('\r\n\r\n');
      const lf = head.indexOf('\n\n');
      const end = crlf >= 0 && (lf < 0 || crlf < lf) ? crlf : lf;
      if (end < 0) return;
      const sepLen = end === crlf ? 4 : 2;
      stdout.off('data', onData);
      status = 200;
      let statusText: string | undefined;
      const headers: Record<string, string> = {};
      for (const line of head.subarray(0, end).toString('latin1').split(/\r?\n/)) {
        const i = line.indexOf(':');
        if (i <= 0) continue;
        const name = line.slice(0, i).trim();
        const value = line.slice(i + 1).trim();
        if (name.toLowerCase() === 'status') {
          status = Number.parseInt(value, 10) || 500;
          statusText = value.replace(/^\d+\s*/, '') || undefined;
        } else {
          headers[name] = value;
        }
      }
      if (statusText) res.writeHead(status, statusText, headers);
      else res.writeHead(status, headers);
      res.write(head.subarray(end + sepLen));
      stdout.pipe(res);
    };
    stdout.on('data', onData);
    stdout.once('end', () => {
      if (status === 0) {
        status = 502;
        if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' });
        res.end(`git http-backend gave no response: ${stderr().slice(-500)}\n`);
      }
    });
    child.once('close', () => done(status));
  });
}

// ---------------------------------------------------------------------------------------
// Repository helpers (system git CLI; never the user's global or system config).
// ---------------------------------------------------------------------------------------

const IDENTITY = ['-c', 'user.name=Sluice Test', '-c', 'user.email=test@sluice.dev'];
const SAFE_CONFIG = [
  ...IDENTITY,
  '-c',
  'init.defaultBranch=main',
  '-c',
  'commit.gpgsign=false',
  '-c',
  'tag.gpgsign=false',
  '-c',
  'core.hooksPath=/dev/null',
];

/** The environment every git process here runs with. */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  // Inherited GIT_DIR / GIT_INDEX_FILE / GIT_WORK_TREE (e.g. when tests run from a git hook)
  // would point these commands at the wrong repository.
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('GIT_')) env[k] = v;
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  };
}

/**
 * Runs the system `git` with `args` (isolated from the user's config, with a test identity)
 * and resolves with its trimmed stdout; rejects with git's stderr in the message.
 */
export function runGit(args: readonly string[], opts: { cwd?: string } = {}): Promise<string> {
  return new Promise((ok, fail) => {
    execFile(
      'git',
      [...SAFE_CONFIG, ...args],
      { cwd: opts.cwd, env: gitEnv(), maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        if (err)
          fail(new Error(`git ${args.join(' ')}: ${String(stderr).trim() || err.message}`, { cause: err }));
        else ok(String(stdout).trim());
      },
    );
  });
}

function repoDir(root: string, name: string): string {
  const dir = resolve(root, `${name}.git`);
  if (!dir.startsWith(root + sep))
    throw new Error(`git-server: repository name ${JSON.stringify(name)} escapes the root`);
  return dir;
}

/** File contents by repository-relative path (`deploy/app.yaml`). */
export type RepoFiles = Record<string, string | Uint8Array>;

// Writes to one repository are serialized so concurrent helper calls never race a push.
const repoQueues = new Map<string, Promise<unknown>>();
function serialized<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = repoQueues.get(key) ?? Promise.resolve();
  const next = prev.then(fn, fn);
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  repoQueues.set(key, settled);
  void settled.then(() => {
    if (repoQueues.get(key) === settled) repoQueues.delete(key);
  });
  return next;
}

async function withScratch<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-git-work-'));
  try {
    return await fn(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function writeFiles(dir: string, files: RepoFiles): void {
  for (const [path, content] of Object.entries(files)) {
    const target = resolve(dir, path);
    if (!target.startsWith(dir + sep))
      throw new Error(`git-server: path ${JSON.stringify(path)} escapes the work tree`);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, content);
  }
}

async function branchExists(bare: string, branch: string): Promise<boolean> {
  try {
    await runGit(['--git-dir', bare, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Creates bare repository `name` (`git init --bare --initial-branch=main`, so HEAD names a
 * branch that exists — isomorphic-git's clone fails with "Could not find HEAD" otherwise) and
 * pushes one commit holding `files` to `main`. Resolves with the clone URL and commit sha.
 * Writes go through the filesystem, not HTTP: they work while the server is paused or its
 * credentials are changed, and they do not appear in the request log.
 */
export async function createRepo(
  server: GitServer,
  name: string,
  files: RepoFiles,
  message = 'initial commit',
): Promise<{ url: string; sha: string }> {
  const bare = server.repoPath(name);
  return serialized(bare, async () => {
    mkdirSync(dirname(bare), { recursive: true });
    await runGit(['init', '--quiet', '--bare', '--initial-branch=main', bare]);
    const sha = await withScratch(async (dir) => {
      await runGit(['init', '--quiet', '--initial-branch=main', dir]);
      writeFiles(dir, files);
      await runGit(['add', '-A'], { cwd: dir });
      await runGit(['commit', '--quiet', '--allow-empty', '-m', message], { cwd: dir });
      await runGit(['push', '--quiet', bare, 'HEAD:refs/heads/main'], { cwd: dir });
      return runGit(['rev-parse', 'HEAD'], { cwd: dir });
    });
    return { url: server.url(name), sha };
  });
}

/** What {@link commitFiles} changes. */
export interface CommitChange {
  /** Files to create or overwrite. */
  add?: RepoFiles;
  /** Paths to delete (files or directories); a path that does not exist is an error. */
  remove?: string[];
  message: string;
  /** Branch to commit to. Default `main`. */
  branch?: string;
  /** Where a `branch` that does not exist yet starts (any revision: `main~1`, a tag, a sha). Default `main`. */
  from?: string;
}

/**
 * Commits `change` on top of `branch` in repository `repo` and pushes it (via the
 * filesystem, like {@link createRepo}). Resolves with the new commit's sha. An empty change
 * still makes a commit, so tests can move a branch without changing its content.
 */
export function commitFiles(server: GitServer, repo: string, change: CommitChange): Promise<string> {
  const bare = server.repoPath(repo);
  const branch = change.branch ?? 'main';
  return serialized(bare, () =>
    withScratch(async (dir) => {
      const exists = await branchExists(bare, branch);
      const base = await runGit([
        '--git-dir',
        bare,
        'rev-parse',
        '--verify',
        `${exists ? `refs/heads/${branch}` : (change.from ?? 'main')}^{commit}`,
      ]);
      await runGit(['clone', '--quiet', '--no-tags', '--no-checkout', bare, dir]);
      await runGit(['checkout', '--quiet', '--detach', base], { cwd: dir });
      for (const path of change.remove ?? []) await runGit(['rm', '-r', '--quiet', '--', path], { cwd: dir });
      writeFiles(dir, change.add ?? {});
      await runGit(['add', '-A'], { cwd: dir });
      await runGit(['commit', '--quiet', '--allow-empty', '-m', change.message], { cwd: dir });
      await runGit(['push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`], { cwd: dir });
      return runGit(['rev-parse', 'HEAD'], { cwd: dir });
    }),
  );
}

/** Creates `branch` at `from` (a branch, tag or sha; default `main`). Resolves with its sha. */
export function createBranch(
  server: GitServer,
  repo: string,
  branch: string,
  from = 'main',
): Promise<string> {
  const bare = server.repoPath(repo);
  return serialized(bare, async () => {
    const sha = await runGit(['--git-dir', bare, 'rev-parse', '--verify', `${from}^{commit}`]);
    await runGit(['--git-dir', bare, 'update-ref', `refs/heads/${branch}`, sha, '']);
    return sha;
  });
}

/** Deletes `branch`; rejects when it does not exist. */
export function deleteBranch(server: GitServer, repo: string, branch: string): Promise<void> {
  const bare = server.repoPath(repo);
  return serialized(bare, async () => {
    if (!(await branchExists(bare, branch))) throw new Error(`git-server: ${repo} has no branch ${branch}`);
    await runGit(['--git-dir', bare, 'update-ref', '-d', `refs/heads/${branch}`]);
  });
}

/**
 * Tags `ref` (default `main`) as `tag`: annotated when `message` is given, lightweight
 * otherwise. Resolves with the sha of the tagged commit (not of the tag object).
 */
export function createTag(
  server: GitServer,
  repo: string,
  tag: string,
  opts: { ref?: string; message?: string } = {},
): Promise<string> {
  const bare = server.repoPath(repo);
  return serialized(bare, async () => {
    const target = await runGit([
      '--git-dir',
      bare,
      'rev-parse',
      '--verify',
      `${opts.ref ?? 'main'}^{commit}`,
    ]);
    const annotate = opts.message === undefined ? [] : ['-a', '-m', opts.message];
    await runGit(['--git-dir', bare, 'tag', ...annotate, tag, target]);
    return target;
  });
}

/** Resolves `rev` (branch, tag, sha, `main~1`, …) in `repo` to a commit sha. */
export function revParse(server: GitServer, repo: string, rev: string): Promise<string> {
  return runGit(['--git-dir', server.repoPath(repo), 'rev-parse', '--verify', `${rev}^{commit}`]);
}
