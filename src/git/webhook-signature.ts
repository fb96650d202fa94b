import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** The result of checking a webhook's credentials: a message for the 401 when it fails. */
export type SignatureCheck = { readonly ok: true } | { readonly ok: false; readonly message: string };

const SHA256_HEX = /^[0-9a-f]{64}$/i;

/** `HMAC-SHA256(secret, body)` as lower-case hex: what a sender puts after `sha256=`. */
export function hmacSha256Hex(secret: string, body: Uint8Array): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}

/**
 * Checks a `sha256=<hex>` HMAC signature header (GitHub's `X-Hub-Signature-256`, the generic
 * `X-Signature`) against the raw request body. Guarantees: the comparison of the digests is
 * constant-time (`timingSafeEqual` over two 32-byte buffers); a missing header, another
 * algorithm prefix or a value that is not 64 hex digits is rejected before any comparison;
 * the message names the header and never contains the secret, the expected digest or the
 * value received.
 *
 * @param headerName as sent, for the message (e.g. `X-Hub-Signature-256`).
 */
export function verifyHmacSignature(
  headerName: string,
  header: string | undefined,
  body: Uint8Array,
  secret: string,
): SignatureCheck {
  if (header === undefined || header === '') return { ok: false, message: `missing ${headerName} header` };
  const eq = header.indexOf('=');
  const algorithm = eq < 0 ? '' : header.slice(0, eq).toLowerCase();
  const hex = eq < 0 ? '' : header.slice(eq + 1).trim();
  if (algorithm !== 'sha256') {
    return { ok: false, message: `${headerName} must have the form sha256=<hex HMAC-SHA256 of the body>` };
  }
  if (!SHA256_HEX.test(hex)) {
    return { ok: false, message: `${headerName} must carry 64 hex digits after sha256=` };
  }
  const given = Buffer.from(hex, 'hex');
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(given, expected)
    ? { ok: true }
    : { ok: false, message: `${headerName} does not match the request body: wrong secret or altered body` };
}

/**
 * Checks a shared-token header (GitLab's `X-Gitlab-Token`) in constant time: both values are
 * hashed to 32 bytes first, so neither the content nor the length of the secret leaks
 * through timing. The message never contains either value.
 */
export function verifyToken(headerName: string, header: string | undefined, secret: string): SignatureCheck {
  if (header === undefined || header === '') return { ok: false, message: `missing ${headerName} header` };
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  return timingSafeEqual(digest(header), digest(secret))
    ? { ok: true }
    : { ok: false, message: `${headerName} does not match the webhook secret` };
}
