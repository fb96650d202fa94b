import { resolve } from 'node:path';

const tails = new Map<string, Promise<void>>();

/**
 * Runs `fn` while holding the lock for directory `path` (compared after `path.resolve`).
 * Guarantees: two calls for the same directory never overlap; they run in call order; a
 * failing `fn` releases the lock; different directories never wait for each other. Needed
 * because isomorphic-git is not safe with two operations on one repository at once
 * (isomorphic-git#1278). In-process only: one controller process owns a work directory.
 */
export async function withPathLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const key = resolve(path);
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const held = new Promise<void>((r) => {
    release = r;
  });
  const tail = previous.then(() => held);
  tails.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}
