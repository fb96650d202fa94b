import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PullRequestTarget } from '../api/canary-release.js';
import { openPullRequest, PullRequestError } from './pull-request.js';

/** A local stand-in for the pull request endpoints, with a scripted answer per method. */
let server: Server;
let base: string;
let answers: { GET: Array<[number, unknown]>; POST: Array<[number, unknown]> };
let calls: string[];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      calls.push(`${req.method} ${req.url}`);
      const queue = answers[req.method as 'GET' | 'POST'];
      const [status, body] = queue.length > 1 ? queue.shift()! : queue[0]!;
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => new Promise<void>((r) => server.close(() => r())));

const github = (): PullRequestTarget => ({
  provider: 'github',
  apiURL: base,
  repository: 'acme/shop',
  secretRef: { name: 's' },
});
const content = { head: 'sluice/rollback-web-abc1234', base: 'main', title: 't', body: 'b' };
const reset = (a: typeof answers) => {
  answers = a;
  calls = [];
};

describe('openPullRequest', () => {
  it('GIVEN none open THEN created', async () => {
    reset({ GET: [[200, []]], POST: [[201, { html_url: 'https://gh/pull/1', number: 1 }]] });
    expect(await openPullRequest(github(), 'tok', content)).toEqual({
      url: 'https://gh/pull/1',
      number: 1,
      created: true,
    });
    expect(calls.map((c) => c.split(' ')[0])).toEqual(['GET', 'POST']);
  });

  it('GIVEN another caller opened it between lookup and create (GitHub 422 already exists) THEN that one is returned', async () => {
    reset({
      GET: [
        [200, []],
        [200, [{ html_url: 'https://gh/pull/2', number: 2 }]],
      ],
      POST: [
        [
          422,
          {
            message: 'Validation Failed',
            errors: [{ message: 'A pull request already exists for acme:x.' }],
          },
        ],
      ],
    });
    expect(await openPullRequest(github(), 'tok', content)).toEqual({
      url: 'https://gh/pull/2',
      number: 2,
      created: false,
    });
  });

  it('GIVEN a 422 for another reason (e.g. the base branch is missing) THEN an error with the host answer', async () => {
    reset({
      GET: [[200, []]],
      POST: [[422, { message: 'Validation Failed', errors: [{ field: 'base', code: 'invalid' }] }]],
    });
    await expect(openPullRequest(github(), 'tok', content)).rejects.toThrow(/POST \/repos|HTTP 422.*base/);
  });

  it('GIVEN the lookup fails (403) THEN an error, never a second pull request', async () => {
    reset({ GET: [[403, { message: 'Resource not accessible by integration' }]], POST: [[201, {}]] });
    const err = await openPullRequest(github(), 'tok', content).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PullRequestError);
    expect((err as PullRequestError).status).toBe(403);
    expect(calls).toHaveLength(1);
  });

  it('GIVEN a GitHub repository that is not owner/name THEN an error naming the field', async () => {
    reset({ GET: [[200, []]], POST: [[201, {}]] });
    await expect(openPullRequest({ ...github(), repository: 'shop' }, 'tok', content)).rejects.toThrow(
      'spec.gitWriteBack.pullRequest.repository: want owner/name for GitHub, got "shop"',
    );
    expect(calls).toHaveLength(0);
  });

  it('GIVEN GitLab answers 409 (an open MR exists) THEN the open one is returned', async () => {
    reset({
      GET: [
        [200, []],
        [200, [{ web_url: 'https://gl/mr/5', iid: 5 }]],
      ],
      POST: [[409, { message: ['Another open merge request already exists for this source branch: !5'] }]],
    });
    const gitlab: PullRequestTarget = {
      provider: 'gitlab',
      apiURL: `${base}/api/v4`,
      repository: '42',
      secretRef: { name: 's' },
    };
    expect(await openPullRequest(gitlab, 'tok', content)).toEqual({
      url: 'https://gl/mr/5',
      number: 5,
      created: false,
    });
    expect(calls[0]).toBe(
      `GET /api/v4/projects/42/merge_requests?state=opened&source_branch=${encodeURIComponent(content.head)}&target_branch=main`,
    );
  });

  it('GIVEN an unreachable API THEN a PullRequestError with status 0', async () => {
    const err = await openPullRequest({ ...github(), apiURL: 'http://127.0.0.1:9/' }, 'tok', content, {
      timeoutMs: 2000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PullRequestError);
    expect((err as PullRequestError).status).toBe(0);
  });
});
