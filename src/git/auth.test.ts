import { authFromSecretData, authHeaders, authSecrets } from './auth.js';
import { GitError } from './errors.js';

const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const data = (values: Record<string, string>) =>
  Object.fromEntries(Object.entries(values).map(([k, v]) => [k, b64(v)]));

describe('authFromSecretData', () => {
  it('GIVEN username and password THEN basic auth, sent as one Authorization header', () => {
    const auth = authFromSecretData(data({ username: 'bot', password: 's3cret!' }), 'apps/git');
    expect(auth).toEqual({ type: 'basic', username: 'bot', password: 's3cret!' });
    expect(authHeaders(auth)).toEqual({ Authorization: `Basic ${b64('bot:s3cret!')}` });
    expect(authSecrets(auth)).toEqual(['s3cret!', b64('bot:s3cret!')]);
  });

  it('GIVEN bearerToken THEN bearer auth', () => {
    const auth = authFromSecretData(data({ bearerToken: 'ghp_abc' }), 'apps/git');
    expect(auth).toEqual({ type: 'bearer', token: 'ghp_abc' });
    expect(authHeaders(auth)).toEqual({ Authorization: 'Bearer ghp_abc' });
  });

  it('GIVEN extra unrelated keys THEN they are ignored', () => {
    expect(authFromSecretData(data({ username: 'u', password: 'p', 'ca.crt': 'x' }), 'a/b').type).toBe(
      'basic',
    );
  });

  it('GIVEN headers are requested twice THEN each call gets a fresh object (isomorphic-git mutates them)', () => {
    const auth = authFromSecretData(data({ bearerToken: 't0k' }), 'a/b');
    expect(authHeaders(auth)).not.toBe(authHeaders(auth));
  });

  it.each<[string, Record<string, string> | undefined, RegExp]>([
    ['no data', undefined, /Secret apps\/git: has none of the keys "username"\/"password" or "bearerToken"/],
    ['only username', data({ username: 'bot' }), /key "password" is missing/],
    ['only password', data({ password: 'hunter22' }), /key "username" is missing/],
    [
      'both kinds',
      data({ username: 'bot', password: 'hunter22', bearerToken: 'tok' }),
      /both "bearerToken" and "username"\/"password"/,
    ],
    ['an empty password', { username: b64('bot'), password: '' }, /key "password" is empty/],
    ['a trailing newline', data({ bearerToken: 'tok-123\n' }), /key "bearerToken" contains a newline/],
    ['invalid base64', { bearerToken: 'not base64!' }, /key "bearerToken" is not valid base64/],
    [
      'a colon in the username',
      data({ username: 'a:b', password: 'hunter22' }),
      /key "username" must not contain ":"/,
    ],
    [
      'SSH keys',
      data({ identity: 'KEY', known_hosts: 'h' }),
      /SSH keys \(identity, known_hosts\).*HTTP\(S\) only/,
    ],
  ])(
    'GIVEN %s THEN a terminal AuthFailed error naming the Secret and the key',
    (_what, secretData, message) => {
      let err: unknown;
      try {
        authFromSecretData(secretData, 'apps/git');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(GitError);
      expect(err).toMatchObject({ reason: 'AuthFailed', terminal: true });
      expect((err as Error).message).toMatch(/^Secret apps\/git: /);
      expect((err as Error).message).toMatch(message);
      // Never a value: the password and token must not leak into the message.
      expect((err as Error).message).not.toMatch(/hunter22|tok-123|KEY/);
    },
  );
});
