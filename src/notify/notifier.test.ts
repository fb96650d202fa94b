import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../log.js';
import { parseNotifyFlags } from './flags.js';
import { Notifier } from './notifier.js';
import type { Notification } from './payload.js';

/** A local receiver whose answers are scripted per path (the last one repeats), recording bodies. */
let server: Server;
let base: string;
const scripts = new Map<string, Array<number | 'hang'>>();
const received = new Map<string, unknown[]>();

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (d: Buffer) => (text += d.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      const log = received.get(path) ?? [];
      log.push(JSON.parse(text));
      received.set(path, log);
      const script = scripts.get(path) ?? [200];
      const answer = script[Math.min(log.length - 1, script.length - 1)]!;
      if (answer === 'hang') return;
      res.writeHead(answer);
      res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const rolledBack: Notification = {
  namespace: 'shop',
  name: 'web',
  reason: 'AnalysisFailed',
  message: 'error-rate = 0.2 (threshold <= 0.01) at step 2/4',
  phase: 'RolledBack',
  severity: 'warning',
};
const NOW = new Date('2026-11-30T12:00:00.000Z');
const fast = { backoffMs: () => 10, now: () => NOW };

function logLines() {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: createLogger({ stream, level: 'debug' }) };
}

describe('Notifier', () => {
  it('GIVEN a slack and a generic receiver THEN {"text": …} to one and every field as JSON to the other', async () => {
    const n = new Notifier(
      [
        { kind: 'slack', url: `${base}/slack` },
        { kind: 'generic', url: `${base}/generic` },
      ],
      fast,
    );
    n.notify(rolledBack);
    await n.idle();
    expect(received.get('/slack')).toEqual([
      {
        text: ':warning: CanaryRelease *shop/web* is RolledBack (AnalysisFailed): error-rate = 0.2 (threshold <= 0.01) at step 2/4',
      },
    ]);
    expect(received.get('/generic')).toEqual([
      {
        kind: 'CanaryRelease',
        namespace: 'shop',
        name: 'web',
        phase: 'RolledBack',
        reason: 'AnalysisFailed',
        message: 'error-rate = 0.2 (threshold <= 0.01) at step 2/4',
        severity: 'warning',
        timestamp: '2026-11-30T12:00:00.000Z',
      },
    ]);
  });

  it('GIVEN a receiver answering 500 twice THEN delivered on attempt 3', async () => {
    scripts.set('/flaky', [500, 503, 200]);
    const n = new Notifier([{ kind: 'slack', url: `${base}/flaky` }], fast);
    n.notify(rolledBack);
    await n.idle();
    expect(received.get('/flaky')).toHaveLength(3);
    expect(n.results()).toEqual([
      expect.objectContaining({ delivered: true, attempts: 3, message: 'HTTP 200' }),
    ]);
  });

  it('GIVEN a receiver that always answers 500 THEN it gives up after maxAttempts with one warn line naming only the origin', async () => {
    scripts.set('/down/T000/B000/secret-path', [500]);
    const { lines, logger } = logLines();
    const n = new Notifier([{ kind: 'slack', url: `${base}/down/T000/B000/secret-path` }], {
      ...fast,
      maxAttempts: 4,
      logger,
    });
    n.notify(rolledBack);
    await n.idle();
    expect(received.get('/down/T000/B000/secret-path')).toHaveLength(4);
    expect(n.results()).toEqual([
      expect.objectContaining({ delivered: false, attempts: 4, message: 'HTTP 500' }),
    ]);
    const warns = lines.filter((l) => l.level === 'warn');
    expect(warns).toHaveLength(1);
    expect(warns[0]).toMatchObject({ message: 'notification not delivered', receiver: base, attempts: 4 });
    expect(JSON.stringify(lines)).not.toContain('secret-path');
  });

  it('GIVEN a 404 THEN no retry', async () => {
    scripts.set('/gone', [404, 200]);
    const n = new Notifier([{ kind: 'generic', url: `${base}/gone` }], fast);
    n.notify(rolledBack);
    await n.idle();
    expect(received.get('/gone')).toHaveLength(1);
    expect(n.results()[0]).toMatchObject({ delivered: false, attempts: 1, message: 'HTTP 404' });
  });

  it('GIVEN a receiver that hangs THEN notify returns at once, and the delivery ends at the timeout', async () => {
    scripts.set('/hang', ['hang']);
    const n = new Notifier([{ kind: 'slack', url: `${base}/hang` }], {
      ...fast,
      timeoutMs: 150,
      maxAttempts: 2,
    });
    const started = Date.now();
    n.notify(rolledBack);
    expect(Date.now() - started).toBeLessThan(50);
    await n.idle();
    expect(n.results()[0]).toMatchObject({
      delivered: false,
      attempts: 2,
      message: 'no answer within 150 ms',
    });
  });

  it('GIVEN more deliveries than maxPending THEN the excess is dropped with a warning, never queued without bound', async () => {
    scripts.set('/slow', ['hang']);
    const { lines, logger } = logLines();
    const n = new Notifier([{ kind: 'generic', url: `${base}/slow` }], {
      ...fast,
      timeoutMs: 100,
      maxAttempts: 1,
      maxPending: 2,
      logger,
    });
    for (let i = 0; i < 5; i++) n.notify(rolledBack);
    await n.idle();
    expect(n.results()).toHaveLength(2);
    expect(
      lines.filter((l) => l.message === 'notification dropped: too many deliveries pending'),
    ).toHaveLength(3);
  });

  it('GIVEN no receivers THEN not enabled and notify is a no-op', async () => {
    const n = new Notifier([]);
    expect(n.enabled).toBe(false);
    n.notify(rolledBack);
    await n.idle();
    expect(n.results()).toEqual([]);
  });
});

describe('parseNotifyFlags', () => {
  it('GIVEN slack= and generic= values THEN targets in order, duplicates once', () => {
    expect(
      parseNotifyFlags([
        'slack=https://hooks.slack.com/services/T/B/x',
        'generic=http://h:8080/n',
        'generic=http://h:8080/n',
      ]),
    ).toEqual([
      { kind: 'slack', url: 'https://hooks.slack.com/services/T/B/x' },
      { kind: 'generic', url: 'http://h:8080/n' },
    ]);
    expect(parseNotifyFlags(undefined)).toEqual([]);
  });

  it.each([
    [['https://x'], '--notify #1: want KIND=URL with KIND one of slack, generic'],
    [['slack=http://a', 'teams=http://b'], '--notify #2: unknown kind "teams": use one of slack, generic'],
    [
      ['slack=hooks.slack.com/services/T/B/secret'],
      '--notify #1 (slack): the URL must be an absolute http:// or https:// URL',
    ],
    [['generic=ftp://x/y'], '--notify #1 (generic): the URL must be an absolute http:// or https:// URL'],
  ])('GIVEN %j THEN %s', (values, message) => {
    expect(() => parseNotifyFlags(values)).toThrow(message);
  });

  it('GIVEN a bad URL THEN the message does not echo it (a Slack URL path is a secret)', () => {
    let message = '';
    try {
      parseNotifyFlags(['slack=hooks.slack.com/services/T/B/secret']);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain('--notify #1 (slack)');
    expect(message).not.toContain('secret');
  });
});
