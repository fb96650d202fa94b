import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../log.js';
import { ArtifactStore } from './artifact.js';
import { ArtifactCollector } from './artifact-gc.js';

/** Lets every queued promise callback run (no timers involved). */
const flush = () => new Promise((r) => setImmediate(r));

describe('ArtifactCollector', () => {
  let root: string;
  let store: ArtifactStore;
  const digests: string[] = [];
  beforeEach(async () => {
    root = mkdtempSync(join(tmpdir(), 'sluice-artifact-gc-'));
    store = new ArtifactStore(root);
    digests.length = 0;
    for (let i = 0; i < 4; i++) {
      const { digest, path } = await store.put([
        { path: 'a.yaml', kind: 'file', content: Buffer.from(`v${i}\n`) },
      ]);
      // Oldest first: v0 was used longest ago.
      utimesSync(path, 1000 + i, 1000 + i);
      digests.push(digest);
    }
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('GIVEN artifacts in use and old ones THEN it keeps those in use and the most recent others', async () => {
    const gc = new ArtifactCollector({ store, inUse: () => [digests[0]!], keep: 1, logger: silentLogger() });
    const removed = await gc.collect();
    expect(removed.sort()).toEqual([digests[1]!, digests[2]!].sort());
    expect(await store.has(digests[0]!)).toBe(true); // in use, however old
    expect(await store.has(digests[3]!)).toBe(true); // the most recent other
  });

  it('GIVEN a fetch in flight WHEN a collection is asked for THEN it waits for the fetch, and later fetches wait for it', async () => {
    const gc = new ArtifactCollector({ store, inUse: () => [], keep: 1, logger: silentLogger() });
    const order: string[] = [];
    let release!: () => void;
    const first = gc.use(async () => {
      order.push('fetch 1 start');
      await new Promise<void>((r) => (release = r));
      order.push('fetch 1 end');
    });
    await flush();
    const collected = gc.collect().then((removed) => order.push(`collected ${removed.length}`));
    await flush();
    const second = gc.use(async () => {
      order.push('fetch 2');
    });
    await flush();
    expect(order).toEqual(['fetch 1 start']);
    release();
    await Promise.all([first, collected, second]);
    expect(order).toEqual(['fetch 1 start', 'fetch 1 end', 'collected 3', 'fetch 2']);
  });

  it('GIVEN a failing fetch THEN a collection still runs after it', async () => {
    const gc = new ArtifactCollector({ store, inUse: () => digests, logger: silentLogger() });
    await expect(gc.use(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await gc.collect()).toEqual([]);
  });
});
