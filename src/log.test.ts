import { describe, expect, it } from '@jest/globals';
import { captureLogs } from '../test/support/capture-logs.js';
import { parseLogLevel } from './log.js';

const capture = (level: 'info' | 'debug' = 'info') =>
  captureLogs({ level, defaultMeta: { component: 'test' } });

describe('createLogger', () => {
  it('GIVEN a child logger WHEN it logs THEN one JSON line has the level, message, timestamp, default and child fields', () => {
    const { lines, logger } = capture();
    logger.child({ controller: 'delivery' }).info('reconciled', { key: 'ns/a' });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 'info',
      message: 'reconciled',
      component: 'test',
      controller: 'delivery',
      key: 'ns/a',
    });
    expect(typeof lines[0]!.timestamp).toBe('string');
  });

  it('GIVEN level info WHEN debug is logged THEN nothing is written', () => {
    const { lines, logger } = capture('info');
    logger.debug('noise');
    expect(lines).toHaveLength(0);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    ['a token field', { token: 'abc123' }, /abc123/],
    ['a nested password', { git: { url: 'https://example.com/r.git', password: 'hunter2' } }, /hunter2/],
    ['a camelCase access token', { accessToken: 'ghp_xyz' }, /ghp_xyz/],
    ['an Authorization header', { headers: { Authorization: 'Bearer eyJhbGciOi' } }, /eyJhbGciOi/],
    [
      'a bearer token inside a message',
      { error: 'request failed: Authorization: Bearer eyJabc.def' },
      /eyJabc/,
    ],
    ['URL userinfo', { remote: 'https://bot:s3cr3t@git.example.com/app.git' }, /s3cr3t/],
    ['a kubeconfig', { kubeconfig: 'apiVersion: v1\nusers: [...]' }, /users/],
  ])('GIVEN %s in the metadata THEN it is redacted', (_name, meta, secret) => {
    const { lines, logger } = capture();
    logger.info('x', meta);
    expect(JSON.stringify(lines[0])).not.toMatch(secret);
    expect(JSON.stringify(lines[0])).toContain('[REDACTED]');
  });

  it('GIVEN a reference to a secret by name THEN it is kept (it is not the secret)', () => {
    const { lines, logger } = capture();
    logger.info('x', { secretName: 'git-credentials', url: 'https://git.example.com/app.git' });
    expect(lines[0]).toMatchObject({ secretName: 'git-credentials', url: 'https://git.example.com/app.git' });
  });

  it('GIVEN an Error in the metadata THEN only its message is written', () => {
    const { lines, logger } = capture();
    logger.warn('failed', {
      error: new Error('boom', { cause: new Error('Headers: {"authorization":"x"}') }),
    });
    expect(lines[0]!.error).toBe('boom');
  });
});

describe('parseLogLevel', () => {
  it('GIVEN a known level THEN it is returned; GIVEN another THEN the error lists the valid ones', () => {
    expect(parseLogLevel('debug')).toBe('debug');
    expect(() => parseLogLevel('verbose')).toThrow(
      'unknown log level "verbose": use one of error, warn, info, debug',
    );
  });
});
