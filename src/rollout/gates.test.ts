import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { CanaryGate, CanaryRelease } from '../api/canary-release.js';
import { callGate, gatePayload } from './gates.js';

/** A local hook whose answers are scripted per path: a list of statuses (or 'hang'), the last one repeating. */
let server: Server;
let base: string;
const scripts = new Map<string, Array<number | 'hang'>>();
const received = new Map<string, Array<{ body: unknown; contentType?: string }>>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      const log = received.get(path) ?? [];
      log.push({ body: JSON.parse(text) as unknown, contentType: req.headers['content-type'] });
      received.set(path, log);
      const script = scripts.get(path) ?? [200];
      const answer = script[Math.min(log.length - 1, script.length - 1)]!;
      if (answer === 'hang') return; // never answers: the client's timeout must end it
      res.writeHead(answer, { 'Content-Type': 'text/plain' });
      res.end(answer < 300 ? 'approved' : `no (${answer})`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const gate = (path: string, webhook: Partial<CanaryGate['webhook']> = {}): CanaryGate => ({
  name: 'load-test',
  at: 'confirmPromotion',
  type: 'webhook',
  webhook: { url: `${base}${path}`, timeout: '2s', retries: 2, ...webhook },
});
const fast = { backoffMs: () => 10 };

describe('callGate', () => {
  it('GIVEN a hook answering 200 THEN open after one call, the JSON payload POSTed', async () => {
    const out = await callGate(gate('/ok'), { name: 'web', namespace: 'shop' }, fast);
    expect(out).toEqual({ open: true, attempts: 1, message: 'HTTP 200: approved' });
    expect(received.get('/ok')).toEqual([
      { body: { name: 'web', namespace: 'shop' }, contentType: 'application/json' },
    ]);
  });

  it('GIVEN 503 then 200 THEN retried and open on attempt 2', async () => {
    scripts.set('/flaky', [503, 200]);
    const out = await callGate(gate('/flaky'), {}, fast);
    expect(out).toEqual({ open: true, attempts: 2, message: 'HTTP 200: approved (after 2 attempts)' });
  });

  it('GIVEN 500 every time THEN closed after 1 + retries calls, saying the last answer', async () => {
    scripts.set('/down', [500]);
    const out = await callGate(gate('/down', { retries: 3 }), {}, fast);
    expect(out).toEqual({ open: false, attempts: 4, message: 'HTTP 500: no (500) (after 4 attempts)' });
    expect(received.get('/down')).toHaveLength(4);
  });

  it('GIVEN a 4xx THEN closed at once, no retry', async () => {
    scripts.set('/denied', [403, 200]);
    const out = await callGate(gate('/denied'), {}, fast);
    expect(out).toEqual({ open: false, attempts: 1, message: 'HTTP 403: no (403)' });
    expect(received.get('/denied')).toHaveLength(1);
  });

  it('GIVEN a hook that never answers THEN each call ends at webhook.timeout and is retried', async () => {
    scripts.set('/hang', ['hang', 'hang', 200]);
    const started = Date.now();
    const out = await callGate(gate('/hang', { timeout: '200ms', retries: 2 }), {}, fast);
    expect(out.open).toBe(true);
    expect(out.attempts).toBe(3);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('GIVEN nothing listening THEN closed after retries with the network error', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const out = await callGate(gate('', { url: `http://127.0.0.1:${port}/x`, retries: 1 }), {}, fast);
    expect(out.open).toBe(false);
    expect(out.attempts).toBe(2);
    expect(out.message).toContain('ECONNREFUSED');
  });

  it('GIVEN a manual gate THEN never open and no call', async () => {
    const out = await callGate({ name: 'ok', at: 'confirmPromotion', type: 'manual' }, {});
    expect(out).toEqual({
      open: false,
      attempts: 0,
      message: 'gate ok is manual: run sluice promote to open it',
    });
  });
});

describe('gatePayload', () => {
  it("GIVEN a release at a gate THEN Flagger's payload shape with Sluice's revision, weight and step", () => {
    const release = {
      metadata: { name: 'web', namespace: 'shop' },
      status: {
        phase: 'Progressing',
        templateHash: 'abc123',
        revision: 'main@sha1:ff',
        canaryWeight: 20,
        step: '2/4',
      },
    } as Pick<CanaryRelease, 'metadata' | 'status'>;
    expect(gatePayload(release, gate('/x'))).toEqual({
      name: 'web',
      namespace: 'shop',
      phase: 'Progressing',
      checksum: 'abc123',
      revision: 'main@sha1:ff',
      type: 'confirm-promotion',
      gate: 'load-test',
      canaryWeight: 20,
      step: '2/4',
      metadata: {},
    });
  });
});
