import { describe, expect, it } from '@jest/globals';
import { ApiException } from '@kubernetes/client-node';
import {
  KubeError,
  isAlreadyExists,
  isConflict,
  isGone,
  isInvalid,
  isNotFound,
  isUnreachable,
  normalizeKubeError,
  type KubeErrorReason,
} from './errors.js';

const HEADERS = {
  authorization: 'Bearer s3cr3t-token',
  'audit-id': 'a1b2c3',
  'content-type': 'application/json',
};

function status(code: number, reason: string, message: string, causes?: unknown[]): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    status: 'Failure',
    code,
    reason,
    message,
    ...(causes ? { details: { name: 'web', kind: 'canaryreleases', causes } } : {}),
  });
}

describe('normalizeKubeError', () => {
  it.each<[string, number, string, KubeErrorReason, string]>([
    [
      'a 404 Status',
      404,
      status(404, 'NotFound', 'canaryreleases.sluice.dev "web" not found'),
      'NotFound',
      'canaryreleases.sluice.dev "web" not found',
    ],
    [
      'a 409 AlreadyExists Status',
      409,
      status(409, 'AlreadyExists', 'leases.coordination.k8s.io "leader" already exists'),
      'AlreadyExists',
      'leases.coordination.k8s.io "leader" already exists',
    ],
    [
      'a 409 Conflict Status',
      409,
      status(
        409,
        'Conflict',
        'Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has been modified',
      ),
      'Conflict',
      'Operation cannot be fulfilled on leases.coordination.k8s.io "leader": the object has been modified',
    ],
    [
      'a 410 Gone Status',
      410,
      status(410, 'Expired', 'too old resource version: 10 (200)'),
      'Gone',
      'too old resource version: 10 (200)',
    ],
    ['a 401', 401, status(401, 'Unauthorized', 'Unauthorized'), 'Unauthorized', 'Unauthorized'],
    [
      'a 403',
      403,
      status(403, 'Forbidden', 'forbidden: User "x" cannot list'),
      'Forbidden',
      'forbidden: User "x" cannot list',
    ],
    ['a 429', 429, status(429, 'TooManyRequests', 'slow down'), 'TooManyRequests', 'slow down'],
    ['a 500', 500, status(500, 'InternalError', 'etcd is down'), 'ServerError', 'etcd is down'],
    ['a 504', 504, status(504, 'Timeout', 'timed out'), 'Timeout', 'timed out'],
    ['a raw-text body', 404, '404 page not found\n', 'NotFound', '404 page not found\n'],
    ['an empty body', 503, '', 'ServerError', 'HTTP 503'],
  ])(
    'GIVEN an ApiException with %s THEN reason and message come from the body, never the headers',
    (_name, code, body, reason, message) => {
      const err = new ApiException(code, 'Unsuccessful HTTP Request', body, HEADERS);
      expect(err.message).toContain('s3cr3t-token'); // the raw exception does carry them
      const e = normalizeKubeError(err, 'patch CanaryRelease prod/web');
      expect(e).toBeInstanceOf(KubeError);
      expect(e.status).toBe(code);
      expect(e.reason).toBe(reason);
      expect(e.message).toBe(`patch CanaryRelease prod/web: ${message}`);
      expect(e.message).not.toMatch(/s3cr3t|audit-id|Headers|HTTP-Code/);
      expect(e.cause).toBe(err);
    },
  );

  it('GIVEN a 422 Status with causes THEN they are kept field by field', () => {
    const causes = [
      { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.targetService' },
      {
        reason: 'FieldValueInvalid',
        message: 'must be between 0 and 100',
        field: 'spec.trafficSplit.canary',
      },
    ];
    const body = status(
      422,
      'Invalid',
      'CanaryRelease.sluice.dev "web" is invalid: [spec.targetService: Required value, …]',
      causes,
    );
    const e = normalizeKubeError(new ApiException(422, 'Unprocessable Entity', body, HEADERS));
    expect(e.reason).toBe('Invalid');
    expect(e.status).toBe(422);
    expect(e.causes).toEqual(causes);
    expect(isInvalid(e)).toBe(true);
  });

  it('GIVEN a body that is already parsed THEN it is read as a Status', () => {
    const e = normalizeKubeError(
      new ApiException(404, 'x', JSON.parse(status(404, 'NotFound', 'gone fishing')), HEADERS),
    );
    expect(e.reason).toBe('NotFound');
    expect(e.message).toBe('gone fishing');
  });

  it('GIVEN a long raw-text body THEN the message is bounded', () => {
    const e = normalizeKubeError(new ApiException(502, 'Bad Gateway', '<html>' + 'x'.repeat(5000), HEADERS));
    expect(e.reason).toBe('ServerError');
    expect(e.message.length).toBeLessThanOrEqual(500);
  });

  it('GIVEN ECONNREFUSED nested in a fetch error cause THEN it is Unreachable with status 0', () => {
    const socket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    const fetchErr = new Error('request to https://127.0.0.1:6443/api failed', { cause: socket });
    const e = normalizeKubeError(fetchErr, 'list Pods');
    expect(e.reason).toBe('Unreachable');
    expect(e.status).toBe(0);
    expect(e.message).toBe(
      'list Pods: API server unreachable (ECONNREFUSED): request to https://127.0.0.1:6443/api failed',
    );
    expect(isUnreachable(e)).toBe(true);
  });

  it('GIVEN a node-fetch FetchError with code ECONNRESET THEN it is Unreachable', () => {
    const err = Object.assign(new Error('request failed, reason: socket hang up'), {
      type: 'system',
      code: 'ECONNRESET',
      errno: 'ECONNRESET',
    });
    expect(normalizeKubeError(err).reason).toBe('Unreachable');
  });

  it('GIVEN an aborted request (node-fetch AbortError) THEN it is a Timeout, which counts as unreachable', () => {
    const err = Object.assign(new Error('The user aborted a request.'), {
      name: 'AbortError',
      type: 'aborted',
    });
    const e = normalizeKubeError(err);
    expect(e.reason).toBe('Timeout');
    expect(isUnreachable(e)).toBe(true);
  });

  it.each<[string, unknown, KubeErrorReason, number]>([
    [
      'a plain {code, body} object with a Status body',
      { code: 409, body: status(409, 'Conflict', 'modified') },
      'Conflict',
      409,
    ],
    ['a plain {code, body} object with a raw body', { code: 410, body: 'gone' }, 'Gone', 410],
    [
      'a plain object whose code is not a number takes the body code',
      { code: 'x', body: { code: 404, message: 'nope' } },
      'NotFound',
      404,
    ],
  ])('GIVEN %s THEN it is read like an ApiException', (_name, err, reason, code) => {
    const e = normalizeKubeError(err);
    expect(e.reason).toBe(reason);
    expect(e.status).toBe(code);
  });

  it.each<[string, unknown, string]>([
    ['a string', 'something odd', 'something odd'],
    ['a plain Error', new Error('plain'), 'plain'],
    ['undefined', undefined, 'undefined'],
  ])('GIVEN %s THEN it is Unknown with status 0', (_name, err, message) => {
    const e = normalizeKubeError(err);
    expect(e.reason).toBe('Unknown');
    expect(e.status).toBe(0);
    expect(e.message).toBe(message);
  });

  it('GIVEN a KubeError THEN it is returned as is', () => {
    const e = new KubeError('x', { status: 404, reason: 'NotFound' });
    expect(normalizeKubeError(e, 'ignored context')).toBe(e);
  });

  it.each<[string, (e: unknown) => boolean, number, string]>([
    ['isNotFound', isNotFound, 404, 'NotFound'],
    ['isConflict', isConflict, 409, 'Conflict'],
    ['isAlreadyExists', isAlreadyExists, 409, 'AlreadyExists'],
    ['isGone', isGone, 410, 'Expired'],
  ])('GIVEN a raw ApiException THEN %s recognises it', (_name, is, code, reason) => {
    const err = new ApiException(code, 'x', status(code, reason, 'm'), HEADERS);
    expect(is(err)).toBe(true);
    expect(is(new Error('other'))).toBe(false);
  });
});
