import type { GitSource } from '../api/git-source.js';
import {
  detectProvider,
  hookTarget,
  matchPush,
  parsePayload,
  pushInfo,
  receiverPath,
  repositoryKey,
  sameRepository,
  verifyWebhook,
} from './receiver.js';
import { hmacSha256Hex } from './webhook-signature.js';

const source = (ref: GitSource['spec']['ref'], url = 'https://github.com/acme/app.git'): GitSource => ({
  apiVersion: 'sluice.dev/v1',
  kind: 'GitSource',
  metadata: { namespace: 'team', name: 'app' },
  spec: { url, ref, interval: '1m', suspend: false },
});

describe('detectProvider and verifyWebhook', () => {
  const body = Buffer.from('{"ref":"refs/heads/main"}');
  it.each<[string, Record<string, string>, string | undefined]>([
    ['GitHub', { 'x-github-event': 'push', 'x-hub-signature-256': 'sha256=00' }, 'github'],
    ['GitLab', { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 't' }, 'gitlab'],
    ['GitLab without an event header', { 'x-gitlab-token': 't' }, 'gitlab'],
    ['generic', { 'x-signature': 'sha256=00' }, 'generic'],
    ['no credentials at all', { 'content-type': 'application/json' }, undefined],
  ])('GIVEN %s headers THEN the provider is told apart', (_w, headers, want) => {
    expect(detectProvider(headers)).toBe(want);
  });

  it('GIVEN each provider THEN its own header is checked against the secret', () => {
    const sig = `sha256=${hmacSha256Hex('s3cret', body)}`;
    expect(verifyWebhook('github', { 'x-hub-signature-256': sig }, body, 's3cret').ok).toBe(true);
    expect(verifyWebhook('github', { 'x-signature': sig }, body, 's3cret')).toEqual({
      ok: false,
      message: 'missing X-Hub-Signature-256 header',
    });
    expect(verifyWebhook('generic', { 'x-signature': sig }, body, 's3cret').ok).toBe(true);
    expect(verifyWebhook('gitlab', { 'x-gitlab-token': 's3cret' }, body, 's3cret').ok).toBe(true);
    expect(verifyWebhook('gitlab', { 'x-gitlab-token': sig }, body, 's3cret').ok).toBe(false);
  });
});

describe('pushInfo', () => {
  it('GIVEN a GitHub push THEN the ref and every repository URL are read', () => {
    const info = pushInfo('github', {
      ref: 'refs/heads/main',
      repository: {
        clone_url: 'https://github.com/acme/app.git',
        ssh_url: 'git@github.com:acme/app.git',
        full_name: 'acme/app',
      },
    });
    expect(info).toEqual({
      ref: 'refs/heads/main',
      repositories: ['https://github.com/acme/app.git', 'git@github.com:acme/app.git', 'acme/app'],
    });
  });

  it('GIVEN a GitLab push THEN the project URLs are read', () => {
    const info = pushInfo('gitlab', {
      ref: 'refs/tags/v1.0.0',
      project: { git_http_url: 'https://gitlab.com/acme/app.git', path_with_namespace: 'acme/app' },
    });
    expect(info).toEqual({
      ref: 'refs/tags/v1.0.0',
      repositories: ['https://gitlab.com/acme/app.git', 'acme/app'],
    });
  });

  it('GIVEN a generic payload without a ref THEN ref is undefined', () => {
    expect(pushInfo('generic', {})).toEqual({ ref: undefined, repositories: [] });
    expect(pushInfo('generic', { repository: 'https://x.example/a.git' }).repositories).toEqual([
      'https://x.example/a.git',
    ]);
  });
});

describe('repositoryKey and sameRepository', () => {
  it.each([
    ['https://GitHub.com/Acme/App.git', 'github.com/acme/app'],
    ['https://user:pass@github.com/acme/app/', 'github.com/acme/app'],
    ['http://127.0.0.1:8080/app.git', '127.0.0.1/app'],
    ['git@github.com:acme/app.git', 'github.com/acme/app'],
    ['ssh://git@github.com:22/acme/app.git', 'github.com/acme/app'],
    ['acme/app', 'acme/app'],
  ])('GIVEN %s THEN the key is %s', (url, key) => {
    expect(repositoryKey(url)).toBe(key);
  });

  it.each<[string, string[], boolean]>([
    ['https://github.com/acme/app.git', ['git@github.com:acme/app.git'], true],
    ['https://github.com/acme/app.git', ['acme/app'], true],
    ['https://github.com/acme/app.git', ['https://github.com/acme/other.git', 'acme/other'], false],
    ['https://github.com/acme/app.git', ['https://gitlab.com/acme/app.git'], false],
    ['https://github.com/acme/app.git', [], true],
  ])('GIVEN %s and %j THEN same=%s', (url, candidates, want) => {
    expect(sameRepository(url, candidates)).toBe(want);
  });
});

describe('matchPush', () => {
  const repo = ['https://github.com/acme/app.git'];
  it.each<[string, GitSource, string | undefined, string | undefined]>([
    ['a branch source and its branch', source({ branch: 'main' }), 'refs/heads/main', undefined],
    [
      'a branch source and another branch',
      source({ branch: 'main' }),
      'refs/heads/feature',
      'ignored: push to refs/heads/feature; GitSource team/app follows branch main',
    ],
    [
      'a branch source and a tag of the same name',
      source({ branch: 'main' }),
      'refs/tags/main',
      'ignored: push to refs/tags/main; GitSource team/app follows branch main',
    ],
    ['a tag source and its tag', source({ tag: 'v1.0.0' }), 'refs/tags/v1.0.0', undefined],
    ['a semver source and any tag', source({ semver: '^1.0.0' }), 'refs/tags/v2.0.0', undefined],
    [
      'a semver source and a branch',
      source({ semver: '^1.0.0' }),
      'refs/heads/main',
      'ignored: push to refs/heads/main; GitSource team/app follows semver ^1.0.0',
    ],
    [
      'a pinned commit',
      source({ commit: 'a'.repeat(40) }),
      'refs/heads/main',
      `ignored: GitSource team/app follows commit ${'a'.repeat(40)}, which a push cannot move`,
    ],
    ['a generic push naming no ref', source({ branch: 'main' }), undefined, undefined],
    [
      'a suspended source',
      { ...source({ branch: 'main' }), spec: { ...source({ branch: 'main' }).spec, suspend: true } },
      'refs/heads/main',
      'ignored: GitSource team/app is suspended',
    ],
  ])('GIVEN %s THEN the push matches or says why not', (_w, src, ref, message) => {
    const got = matchPush(src, { ref, repositories: repo });
    expect(got).toEqual(message === undefined ? { match: true } : { match: false, message });
  });

  it('GIVEN a push for another repository THEN it is ignored naming both, without credentials', () => {
    const src = source({ branch: 'main' }, 'https://bot:hunter22@github.com/acme/app.git');
    const got = matchPush(src, {
      ref: 'refs/heads/main',
      repositories: ['https://github.com/acme/other.git'],
    });
    expect(got).toEqual({
      match: false,
      message:
        'ignored: push for repository https://github.com/acme/other.git; GitSource team/app follows https://***@github.com/acme/app.git',
    });
  });
});

describe('parsePayload', () => {
  it('GIVEN JSON, form-encoded JSON, malformed JSON and a non-object THEN each is parsed or explained', () => {
    expect(parsePayload(Buffer.from('{"ref":"x"}'), 'application/json')).toEqual({
      ok: true,
      value: { ref: 'x' },
    });
    const form = `payload=${encodeURIComponent('{"ref":"y"}')}`;
    expect(parsePayload(Buffer.from(form), 'application/x-www-form-urlencoded')).toEqual({
      ok: true,
      value: { ref: 'y' },
    });
    const bad = parsePayload(Buffer.from('{"ref":'), 'application/json');
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.message).toMatch(/^malformed JSON body: /);
    expect(parsePayload(Buffer.from('[1]'), undefined)).toEqual({
      ok: false,
      message: 'the JSON body must be an object',
    });
    expect(parsePayload(Buffer.from('a=b'), 'application/x-www-form-urlencoded')).toEqual({
      ok: false,
      message: 'form-encoded body has no "payload" field',
    });
  });

  it('GIVEN a namespace and name THEN the hook path is /hooks/<namespace>/<name>, and parses back', () => {
    expect(receiverPath('team', 'app')).toBe('/hooks/team/app');
    expect(hookTarget(receiverPath('team', 'app'))).toEqual({ namespace: 'team', name: 'app' });
    for (const bad of [
      '/hooks/team',
      '/hooks/team/app/x',
      '/hooks//app',
      '/hooks/team/%E0%A4%A',
      '/other/team/app',
    ])
      expect(hookTarget(bad)).toBeUndefined();
  });
});
