import type { PullRequestTarget } from '../api/canary-release.js';
import { redact } from './errors.js';

/** A pull request (GitHub) or merge request (GitLab) as Sluice needs it: where to read it. */
export interface OpenedPullRequest {
  readonly url: string;
  /** The number (GitHub) or iid (GitLab). */
  readonly number: number;
  /** False when an open one for the branch already existed and was returned instead. */
  readonly created: boolean;
}

/** What a pull request says. */
export interface PullRequestContent {
  /** Source branch, pushed already. */
  head: string;
  /** Branch it targets. */
  base: string;
  title: string;
  body: string;
}

/** A Git host API call that failed: `status` 0 for network errors and timeouts. */
export class PullRequestError extends Error {
  override readonly name = 'PullRequestError';
  constructor(
    message: string,
    readonly status: number,
    opts: { cause?: unknown } = {},
  ) {
    super(message, opts);
  }
}

/** Options for {@link openPullRequest}. */
export interface PullRequestOptions {
  /** Bound on each HTTP request. Default 30 s. */
  timeoutMs?: number;
}

interface Provider {
  /** Open pull requests from `head` into `base`: their URL and number. */
  findOpen(c: PullRequestContent): Promise<{ url: string; number: number } | undefined>;
  create(c: PullRequestContent): Promise<{ url: string; number: number } | 'exists'>;
}

/**
 * Opens a pull request (GitHub: `POST /repos/{owner}/{repo}/pulls`) or merge request
 * (GitLab: `POST /projects/:id/merge_requests`) from `content.head` into `content.base`.
 * Idempotent: an open one for the same branches is returned (`created: false`) rather than
 * a second one opened — looked up first, and again when the host answers that one exists
 * (GitHub 422, GitLab 409), so two racing callers end with the same one. Every failure is a
 * `PullRequestError` whose message names the host's answer and never the token.
 */
export async function openPullRequest(
  target: PullRequestTarget,
  token: string,
  content: PullRequestContent,
  opts: PullRequestOptions = {},
): Promise<OpenedPullRequest> {
  const provider = providerFor(target, token, opts.timeoutMs ?? 30_000);
  const existing = await provider.findOpen(content);
  if (existing) return { ...existing, created: false };
  const made = await provider.create(content);
  if (made !== 'exists') return { ...made, created: true };
  const raced = await provider.findOpen(content);
  if (raced) return { ...raced, created: false };
  throw new PullRequestError(
    `${target.provider} says a pull request from ${content.head} into ${content.base} exists, but none is open`,
    409,
  );
}

function providerFor(target: PullRequestTarget, token: string, timeoutMs: number): Provider {
  const base = target.apiURL.replace(/\/+$/, '');
  const call = caller(token, timeoutMs);
  switch (target.provider) {
    case 'github': {
      const [owner, repo, ...rest] = target.repository.split('/');
      if (!owner || !repo || rest.length > 0) {
        throw new PullRequestError(
          `spec.gitWriteBack.pullRequest.repository: want owner/name for GitHub, got ${JSON.stringify(target.repository)}`,
          0,
        );
      }
      const pulls = `${base}/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/pulls`;
      const headers = {
        Authorization: `Bearer ${token}`,
        Accept: 'application/vnd.github+json',
        'X-GitHub-Api-Version': '2022-11-28',
      };
      const pick = (pr: { html_url?: unknown; number?: unknown }) => ({
        url: String(pr.html_url ?? ''),
        number: Number(pr.number ?? 0),
      });
      return {
        async findOpen(c) {
          const q = new URLSearchParams({ state: 'open', head: `${owner}:${c.head}`, base: c.base });
          const res = await call('GET', `${pulls}?${q}`, headers);
          const list = Array.isArray(res.body) ? (res.body as Array<Record<string, unknown>>) : [];
          return list[0] ? pick(list[0]) : undefined;
        },
        async create(c) {
          const res = await call('POST', pulls, headers, {
            title: c.title,
            head: c.head,
            base: c.base,
            body: c.body,
          });
          // GitHub: 422 "A pull request already exists for owner:branch".
          if (res.status === 422 && /already exists/i.test(res.text)) return 'exists';
          expectCreated(res, 'github');
          return pick(res.body as Record<string, unknown>);
        },
      };
    }
    case 'gitlab': {
      const mrs = `${base}/projects/${encodeURIComponent(target.repository)}/merge_requests`;
      const headers = { 'PRIVATE-TOKEN': token };
      const pick = (mr: { web_url?: unknown; iid?: unknown }) => ({
        url: String(mr.web_url ?? ''),
        number: Number(mr.iid ?? 0),
      });
      return {
        async findOpen(c) {
          const q = new URLSearchParams({ state: 'opened', source_branch: c.head, target_branch: c.base });
          const res = await call('GET', `${mrs}?${q}`, headers);
          const list = Array.isArray(res.body) ? (res.body as Array<Record<string, unknown>>) : [];
          return list[0] ? pick(list[0]) : undefined;
        },
        async create(c) {
          const res = await call('POST', mrs, headers, {
            source_branch: c.head,
            target_branch: c.base,
            title: c.title,
            description: c.body,
            remove_source_branch: true,
          });
          // GitLab: 409 "Another open merge request already exists for this source branch".
          if (res.status === 409) return 'exists';
          expectCreated(res, 'gitlab');
          return pick(res.body as Record<string, unknown>);
        },
      };
    }
    default:
      throw new PullRequestError(
        `spec.gitWriteBack.pullRequest.provider: unknown provider ${JSON.stringify((target as { provider: unknown }).provider)} (github or gitlab)`,
        0,
      );
  }
}

interface Answer {
  status: number;
  text: string;
  body: unknown;
  what: string;
}

function expectCreated(res: Answer, provider: string): void {
  if (res.status === 200 || res.status === 201) return;
  throw new PullRequestError(
    `${provider}: ${res.what} answered HTTP ${res.status}: ${res.text.slice(0, 500)}`,
    res.status,
  );
}

function caller(token: string, timeoutMs: number) {
  return async (
    method: 'GET' | 'POST',
    url: string,
    headers: Record<string, string>,
    body?: object,
  ): Promise<Answer> => {
    const what = `${method} ${redact(url.split('?')[0]!, [token])}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          ...headers,
          'User-Agent': 'sluice',
          ...(body ? { 'Content-Type': 'application/json' } : {}),
        },
        body: body ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new PullRequestError(redact(`${what} failed: ${detail}`, [token]), 0, { cause: err });
    }
    const text = redact(await res.text(), [token]);
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    // A failed lookup is never "no pull request": say why instead.
    if (method === 'GET' && res.status !== 200) {
      throw new PullRequestError(`${what} answered HTTP ${res.status}: ${text.slice(0, 500)}`, res.status);
    }
    return { status: res.status, text, body: parsed, what };
  };
}
