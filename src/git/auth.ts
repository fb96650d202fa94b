import { GitError } from './errors.js';

/**
 * Credentials for a Git server over HTTP(S). `none` sends nothing; `basic` and `bearer` are
 * sent as an `Authorization` header on every request (see {@link authHeaders}).
 */
export type GitAuth =
  | { readonly type: 'none' }
  | { readonly type: 'basic'; readonly username: string; readonly password: string }
  | { readonly type: 'bearer'; readonly token: string };

/** Anonymous access. */
export const NO_AUTH: GitAuth = Object.freeze({ type: 'none' });

/** Secret keys read by {@link authFromSecretData} (Flux's GitRepository names). */
export const SECRET_KEYS = {
  username: 'username',
  password: 'password',
  bearerToken: 'bearerToken',
} as const;

// Keys Flux reads for SSH; isomorphic-git speaks HTTP(S) only, so they are an error here.
const SSH_KEYS = ['identity', 'identity.pub', 'known_hosts'];

function configError(secret: string, detail: string): GitError {
  return new GitError(`Secret ${secret}: ${detail}`, { reason: 'AuthFailed', terminal: true });
}

function decode(secret: string, data: Readonly<Record<string, string>>, key: string): string | undefined {
  const raw = data[key];
  if (raw === undefined) return undefined;
  // Secret `.data` values are base64 (the API server turns `stringData` into `data`).
  const bytes = Buffer.from(raw, 'base64');
  if (bytes.toString('base64') !== raw.replace(/\s+/g, '')) {
    throw configError(secret, `key "${key}" is not valid base64`);
  }
  const value = bytes.toString('utf8');
  if (value === '') throw configError(secret, `key "${key}" is empty`);
  // A trailing newline (`echo token | base64`) would make an invalid HTTP header; say so
  // rather than trimming a credential silently.
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(value)) {
    throw configError(
      secret,
      `key "${key}" contains a newline or control character (create it with --from-literal or \`echo -n\`)`,
    );
  }
  return value;
}

/**
 * Reads Git credentials from a Kubernetes Secret's `data` (base64 values), with Flux's
 * keys: `username` + `password` for basic auth, or `bearerToken`. Guarantees: returns
 * `basic` or `bearer`, never `none`; every mistake (no known key, one of username/password
 * missing, both kinds present, empty or non-base64 values, control characters, SSH keys)
 * throws a terminal `GitError` with reason `AuthFailed` naming the Secret and the key —
 * never a value.
 *
 * @param secret the Secret's `namespace/name`, for messages.
 */
export function authFromSecretData(
  data: Readonly<Record<string, string>> | undefined,
  secret: string,
): GitAuth {
  const d = data ?? {};
  const username = decode(secret, d, SECRET_KEYS.username);
  const password = decode(secret, d, SECRET_KEYS.password);
  const token = decode(secret, d, SECRET_KEYS.bearerToken);

  if (token !== undefined && (username !== undefined || password !== undefined)) {
    throw configError(
      secret,
      'has both "bearerToken" and "username"/"password": keep one kind of credentials',
    );
  }
  if (token !== undefined) return { type: 'bearer', token };
  if (username !== undefined && password === undefined)
    throw configError(secret, 'key "password" is missing');
  if (password !== undefined && username === undefined)
    throw configError(secret, 'key "username" is missing');
  if (username !== undefined && password !== undefined) {
    // RFC 7617: the user-id of Basic credentials cannot contain a colon.
    if (username.includes(':')) throw configError(secret, 'key "username" must not contain ":"');
    return { type: 'basic', username, password };
  }
  const ssh = SSH_KEYS.filter((k) => k in d);
  if (ssh.length > 0) {
    throw configError(
      secret,
      `has SSH keys (${ssh.join(', ')}) but Sluice fetches over HTTP(S) only: use "username"/"password" or "bearerToken"`,
    );
  }
  throw configError(secret, 'has none of the keys "username"/"password" or "bearerToken"');
}

/**
 * The HTTP headers that carry `auth`: a fresh object per call (isomorphic-git mutates the
 * headers it is given). They must go on every request up front, because isomorphic-git
 * calls `onAuth` only after a 401.
 */
export function authHeaders(auth: GitAuth): Record<string, string> {
  switch (auth.type) {
    case 'none':
      return {};
    case 'basic':
      return {
        Authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`,
      };
    case 'bearer':
      return { Authorization: `Bearer ${auth.token}` };
  }
}

/** Strings that must never appear in a message or log line about an operation using `auth`. */
export function authSecrets(auth: GitAuth): string[] {
  switch (auth.type) {
    case 'none':
      return [];
    case 'basic':
      return [auth.password, Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')];
    case 'bearer':
      return [auth.token];
  }
}
