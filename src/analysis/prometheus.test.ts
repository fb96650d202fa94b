import { MetricConfigError } from './errors.js';
import {
  authFromSecret,
  formatSampleValue,
  parseSampleValue,
  PrometheusProvider,
  ProviderCache,
} from './prometheus.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('authFromSecret', () => {
  it('GIVEN username and password WHEN read THEN basic auth (a trailing newline from `echo` dropped)', () => {
    expect(authFromSecret('ns/s', { username: b64('sluice'), password: b64('pw\n') })).toEqual({
      type: 'basic',
      username: 'sluice',
      password: 'pw',
    });
  });

  it('GIVEN token WHEN read THEN bearer', () => {
    expect(authFromSecret('ns/s', { token: b64('abc') })).toEqual({ type: 'bearer', token: 'abc' });
  });

  it.each<[string, Record<string, string>, RegExp]>([
    [
      'no known key',
      { user: b64('x') },
      /ns\/s: needs keys username and password .* or token .*; it has user$/,
    ],
    ['no keys', {}, /it has no keys$/],
    [
      'username only',
      { username: b64('x') },
      /basic auth needs both username and password; it has username only/,
    ],
    ['both kinds', { token: b64('t'), username: b64('u'), password: b64('p') }, /either token .* not both/],
    ['bad base64', { token: 'not base64!' }, /key token is not valid base64/],
    ['empty value', { token: '' }, /key token is empty/],
  ])(
    'GIVEN a Secret with %s WHEN read THEN a MetricConfigError says what is wrong',
    (_what, data, message) => {
      expect(() => authFromSecret('ns/s', data)).toThrow(MetricConfigError);
      expect(() => authFromSecret('ns/s', data)).toThrow(message);
    },
  );

  it('GIVEN a bad Secret WHEN the error is made THEN no value appears in it', () => {
    try {
      authFromSecret('ns/s', { username: b64('topsecretuser') });
    } catch (err) {
      expect(String(err)).not.toContain('topsecretuser');
    }
  });
});

describe('ProviderCache', () => {
  it('GIVEN 200 releases × 3 metrics on one Prometheus WHEN clients are asked for THEN one client per (address, auth)', () => {
    const cache = new ProviderCache();
    const clients = new Set();
    for (let i = 0; i < 600; i++) clients.add(cache.get('http://prom:9090/', { type: 'none' }));
    clients.add(cache.get('http://prom:9090', { type: 'none' }));
    expect(clients.size).toBe(1);
    cache.get('http://prom:9090', { type: 'bearer', token: 't' });
    cache.get('http://prom:9090', { type: 'bearer', token: 'u' });
    expect(cache.size).toBe(3);
  });

  it('GIVEN a bound WHEN exceeded THEN the least recently used client is dropped', () => {
    const cache = new ProviderCache({ max: 2 });
    const a = cache.get('http://a:9090');
    cache.get('http://b:9090');
    cache.get('http://a:9090');
    cache.get('http://c:9090');
    expect(cache.size).toBe(2);
    expect(cache.get('http://a:9090')).toBe(a);
  });
});

describe('PrometheusProvider', () => {
  it('GIVEN an address that is not an http(s) URL WHEN created THEN a MetricConfigError', () => {
    expect(() => new PrometheusProvider('prom:9090')).toThrow(MetricConfigError);
    expect(() => new PrometheusProvider('ftp://prom')).toThrow(/must be http/);
  });
});

describe('sample values', () => {
  it.each([
    ['NaN', NaN],
    ['+Inf', Infinity],
    ['-Inf', -Infinity],
    ['0.5', 0.5],
  ])('GIVEN %p THEN it parses and formats back', (text, value) => {
    expect(parseSampleValue(text)).toBe(value);
    expect(formatSampleValue(value)).toBe(text);
  });
  it('GIVEN many digits THEN 6 significant digits are kept', () => {
    expect(formatSampleValue(0.123456789)).toBe('0.123457');
    expect(formatSampleValue(1e21)).toBe('1e+21');
  });
});
