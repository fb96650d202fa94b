import { afterEach, describe, expect, it } from '@jest/globals';
import { Registry, Counter } from 'prom-client';
import { HttpServer, parseListenAddress } from './http.js';

describe('parseListenAddress', () => {
  it.each<[string, string | undefined, number]>([
    [':8080', undefined, 8080],
    ['127.0.0.1:0', '127.0.0.1', 0],
    ['localhost:9090', 'localhost', 9090],
    ['[::1]:8443', '::1', 8443],
    ['0.0.0.0:65535', '0.0.0.0', 65535],
  ])('GIVEN %s THEN host %s and port %i', (addr, host, port) => {
    expect(parseListenAddress(addr)).toEqual({ host, port });
  });

  it.each(['8080', 'host', ':70000', ':', 'a:b', '::1:80'])(
    'GIVEN %s THEN it is rejected with the address named',
    (addr) => {
      expect(() => parseListenAddress(addr)).toThrow(`listen address "${addr}"`);
    },
  );
});

describe('HttpServer', () => {
  let server: HttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(ready: () => boolean) {
    const registry = new Registry();
    new Counter({ name: 'test_things_total', help: 'things', registers: [registry] }).inc(3);
    server = new HttpServer({ registry, ready });
    const port = await server.listen('127.0.0.1:0');
    expect(port).toBeGreaterThan(0);
    return { url: (path: string) => `http://127.0.0.1:${port}${path}`, server };
  }

  it('GIVEN a running server THEN /healthz, /readyz and /metrics answer', async () => {
    let isReady = false;
    const { url } = await start(() => isReady);
    expect((await fetch(url('/healthz'))).status).toBe(200);
    expect((await fetch(url('/readyz'))).status).toBe(503);
    isReady = true;
    expect((await fetch(url('/readyz'))).status).toBe(200);
    const metrics = await fetch(url('/metrics'));
    expect(metrics.headers.get('content-type')).toContain('text/plain');
    expect(await metrics.text()).toContain('test_things_total 3');
  });

  it('GIVEN routes added after listen THEN exact and prefix routes are served, others are 404/405', async () => {
    const { url, server: s } = await start(() => true);
    s.route('POST', '/hooks/*', (req, res) => {
      res.end(`hook ${req.url}`);
    });
    s.route('POST', '/hooks/github/special', (_req, res) => {
      res.end('exact');
    });
    expect(await (await fetch(url('/hooks/github/abc'), { method: 'POST' })).text()).toBe(
      'hook /hooks/github/abc',
    );
    expect(await (await fetch(url('/hooks/github/special'), { method: 'POST' })).text()).toBe('exact');
    expect((await fetch(url('/hooks/github/abc'))).status).toBe(405);
    expect((await fetch(url('/nothing'))).status).toBe(404);
    expect(() => s.route('GET', '/healthz', () => undefined)).toThrow(
      'route GET /healthz is already registered',
    );
  });

  it('GIVEN a handler that throws THEN the answer is a 500 without the error text', async () => {
    const { url, server: s } = await start(() => true);
    s.route('GET', '/boom', () => {
      throw new Error('secret detail');
    });
    const res = await fetch(url('/boom'));
    expect(res.status).toBe(500);
    expect(await res.text()).not.toContain('secret detail');
  });

  it('GIVEN a port in use THEN listen rejects naming the address', async () => {
    const { url } = await start(() => true);
    const port = new URL(url('/')).port;
    const other = new HttpServer({ registry: new Registry() });
    await expect(other.listen(`127.0.0.1:${port}`)).rejects.toThrow(`cannot listen on 127.0.0.1:${port}`);
  });
});
