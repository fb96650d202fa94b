import { jest } from '@jest/globals';

/** Captures what the code under test writes to stdout and stderr (for CLI unit tests). */
export function captureOutput() {
  const out: string[] = [];
  const err: string[] = [];
  const o = jest.spyOn(process.stdout, 'write').mockImplementation((s) => (out.push(String(s)), true));
  const e = jest.spyOn(process.stderr, 'write').mockImplementation((s) => (err.push(String(s)), true));
  return {
    out: () => out.join(''),
    err: () => err.join(''),
    restore: () => (o.mockRestore(), e.mockRestore()),
  };
}
