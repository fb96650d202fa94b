import { createHmac } from 'node:crypto';
import { hmacSha256Hex, verifyHmacSignature, verifyToken } from './webhook-signature.js';

const secret = "It's a Secret to Everybody";
const body = Buffer.from('Hello, World!', 'utf8');
// GitHub's documented example: secret "It's a Secret to Everybody", payload "Hello, World!".
const github = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';
const H = 'X-Hub-Signature-256';

describe('hmacSha256Hex', () => {
  it("GIVEN GitHub's documented example THEN it computes the documented signature", () => {
    expect(`sha256=${hmacSha256Hex(secret, body)}`).toBe(github);
  });
});

describe('verifyHmacSignature', () => {
  it.each<[string, boolean, string | undefined, string | undefined]>([
    ['the right signature', true, github, undefined],
    [
      'upper-case hex and prefix',
      true,
      github.replace('sha256', 'SHA256').toUpperCase().replace('SHA256', 'sha256'),
      undefined,
    ],
    ['no header', false, undefined, `missing ${H} header`],
    ['an empty header', false, '', `missing ${H} header`],
    [
      'the sha1 prefix of X-Hub-Signature',
      false,
      `sha1=${'a'.repeat(40)}`,
      `${H} must have the form sha256=<hex HMAC-SHA256 of the body>`,
    ],
    [
      'no prefix',
      false,
      github.slice('sha256='.length),
      `${H} must have the form sha256=<hex HMAC-SHA256 of the body>`,
    ],
    ['a short digest', false, github.slice(0, -2), `${H} must carry 64 hex digits after sha256=`],
    ['a long digest', false, `${github}00`, `${H} must carry 64 hex digits after sha256=`],
    ['non-hex digits', false, `sha256=${'z'.repeat(64)}`, `${H} must carry 64 hex digits after sha256=`],
    [
      'one digit off',
      false,
      github.slice(0, -1) + '8',
      `${H} does not match the request body: wrong secret or altered body`,
    ],
  ])('GIVEN %s THEN ok=%s', (_what, ok, header, message) => {
    const check = verifyHmacSignature(H, header, body, secret);
    expect(check.ok).toBe(ok);
    if (!check.ok) expect(check.message).toBe(message);
  });

  it('GIVEN a signature made with another secret or over another body THEN it is rejected, and the message holds neither secret nor digest', () => {
    const other = `sha256=${createHmac('sha256', 'other').update(body).digest('hex')}`;
    const check = verifyHmacSignature(H, other, body, secret);
    expect(check).toEqual({ ok: false, message: expect.stringContaining('does not match') });
    expect(verifyHmacSignature(H, github, Buffer.from('Hello, World?'), secret).ok).toBe(false);
    const text = JSON.stringify(check);
    expect(text).not.toContain(secret);
    expect(text).not.toContain(github.slice(7));
    expect(text).not.toContain(other.slice(7));
  });
});

describe('verifyToken', () => {
  it.each<[string, boolean, string | undefined]>([
    ['the token', true, secret],
    ['another token of the same length', false, secret.replace('E', 'e')],
    ['a prefix of the token', false, secret.slice(0, 5)],
    ['a longer token', false, `${secret}x`],
    ['no header', false, undefined],
  ])('GIVEN %s THEN ok=%s', (_what, ok, header) => {
    const check = verifyToken('X-Gitlab-Token', header, secret);
    expect(check.ok).toBe(ok);
    if (!check.ok) expect(JSON.stringify(check)).not.toContain(secret);
  });

  it('GIVEN a wrong token THEN the message names the header only', () => {
    expect(verifyToken('X-Gitlab-Token', 'nope', secret)).toEqual({
      ok: false,
      message: 'X-Gitlab-Token does not match the webhook secret',
    });
    expect(verifyToken('X-Gitlab-Token', undefined, secret)).toEqual({
      ok: false,
      message: 'missing X-Gitlab-Token header',
    });
  });
});
