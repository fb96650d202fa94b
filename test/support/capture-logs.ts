import { Writable } from 'node:stream';
import { createLogger, type Logger, type LoggerOptions } from '../../src/log.js';

/**
 * A real logger (the product's JSON format and redaction) whose output is kept for
 * assertions: `raw` holds every line as written, `lines` the same lines parsed.
 */
export function captureLogs<L extends object = Record<string, unknown>>(
  opts: Omit<LoggerOptions, 'stream'> = {},
): { logger: Logger; lines: L[]; raw: string[] } {
  const lines: L[] = [];
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n')) {
        if (!l.trim()) continue;
        raw.push(l);
        lines.push(JSON.parse(l) as L);
      }
      cb();
    },
  });
  return { logger: createLogger({ level: 'debug', ...opts, stream }), lines, raw };
}
