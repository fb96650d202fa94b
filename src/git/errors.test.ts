import git from 'isomorphic-git';
import { GitError, isGitError, normalizeGitError, redact } from './errors.js';

const { Errors } = git;

function netError(code: string): Error {
  return Object.assign(new Error(`connect ${code} 127.0.0.1:9`), { code });
}

describe('normalizeGitError', () => {
  it.each<[string, unknown, string, number, RegExp]>([
    [
      'HTTP 401',
      new Errors.HttpError(401, 'Unauthorized', ''),
      'AuthFailed',
      401,
      /authentication failed \(HTTP 401 Unauthorized\)/,
    ],
    [
      'HTTP 403',
      new Errors.HttpError(403, 'Forbidden', 'no scope'),
      'AuthFailed',
      403,
      /access denied \(HTTP 403 Forbidden\)/,
    ],
    [
      'HTTP 404',
      new Errors.HttpError(404, 'Not Found', ''),
      'FetchFailed',
      404,
      /repository not found \(HTTP 404/,
    ],
    [
      'HTTP 500',
      new Errors.HttpError(500, 'Internal Server Error', ''),
      'FetchFailed',
      500,
      /answered HTTP 500/,
    ],
    [
      'a missing remote ref',
      new Errors.NotFoundError('refs/heads/gone'),
      'RefNotFound',
      0,
      /refs\/heads\/gone not found on the remote/,
    ],
    ['an onAuth that gave up', new Errors.UserCanceledError(), 'AuthFailed', 0, /authentication failed/],
    ['ECONNREFUSED', netError('ECONNREFUSED'), 'Unreachable', 0, /Git server unreachable \(ECONNREFUSED\)/],
    [
      'ECONNRESET in the cause chain',
      new Error('request failed', { cause: netError('ECONNRESET') }),
      'Unreachable',
      0,
      /ECONNRESET/,
    ],
    [
      'a request timeout',
      new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      'Unreachable',
      0,
      /timed out/,
    ],
    [
      'a non-fast-forward push',
      new Errors.PushRejectedError('not-fast-forward'),
      'PushRejected',
      0,
      /push rejected/,
    ],
    [
      'a merge conflict',
      new Errors.MergeConflictError(['a.yaml'], ['a.yaml'], [], []),
      'Conflict',
      0,
      /a\.yaml/,
    ],
    ['an unknown error', new Error('disk on fire'), 'FetchFailed', 0, /disk on fire/],
    ['a thrown string', 'weird', 'FetchFailed', 0, /weird/],
  ])('GIVEN %s THEN reason %s, status %d', (_what, err, reason, status, message) => {
    const g = normalizeGitError(err, 'fetch app');
    expect(g).toBeInstanceOf(GitError);
    expect(g).toMatchObject({ reason, status, terminal: false });
    expect(g.message).toMatch(/^fetch app: /);
    expect(g.message).toMatch(message);
    expect(g.cause).toBe(err);
  });

  it('GIVEN an ssh:// URL THEN a terminal FetchFailed saying only HTTP(S) works', () => {
    const g = normalizeGitError(new Errors.UnknownTransportError('ssh://git@host/x', 'ssh'), 'fetch app');
    expect(g).toMatchObject({ reason: 'FetchFailed', terminal: true });
    expect(g.message).toMatch(/only http:\/\/ and https:\/\//);
  });

  it('GIVEN a GitError THEN it passes through unchanged', () => {
    const original = new GitError('x', { reason: 'Conflict' });
    expect(normalizeGitError(original, 'ctx')).toBe(original);
  });

  it('GIVEN a fallback THEN unrecognised errors get it', () => {
    expect(normalizeGitError(new Error('?'), 'push', { fallback: 'PushRejected' }).reason).toBe(
      'PushRejected',
    );
  });

  it('GIVEN secrets in the error or the context THEN the message never contains them', () => {
    const err = new Error(
      'GET https://bot:hunter22@git.example/app.git failed; Authorization: Basic Ym90Omh1bnRlcjIy; token ghp_XYZ',
    );
    const g = normalizeGitError(err, 'fetch https://bot:hunter22@git.example/app.git', {
      secrets: ['ghp_XYZ'],
    });
    expect(g.message).not.toMatch(/hunter22|Ym90Omh1bnRlcjIy|ghp_XYZ/);
    expect(g.message).toContain('https://***@git.example/app.git');
  });
});

describe('redact', () => {
  it('GIVEN URL credentials, header values and listed secrets THEN all are masked', () => {
    expect(redact('http://u:p@h/x and Bearer abc.def and pw=sekrit', ['sekrit'])).toBe(
      'http://***@h/x and Bearer *** and pw=***',
    );
  });
});

describe('isGitError', () => {
  it('GIVEN reasons THEN it matches only those', () => {
    const e = new GitError('x', { reason: 'Unreachable' });
    expect(isGitError(e)).toBe(true);
    expect(isGitError(e, 'Unreachable', 'FetchFailed')).toBe(true);
    expect(isGitError(e, 'AuthFailed')).toBe(false);
    expect(isGitError(new Error('x'))).toBe(false);
  });
});
