import { createHash } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { SqlitePublicationCache } from '../src/adapters/sqlite/SqlitePublicationCache.js';
import { migrate } from '../src/adapters/sqlite/schema.js';
import { type FetchUpstream, publicationFetchStep } from '../src/core/publications/publicationFetch.js';
import { tmp } from './helpers.js';

/** Undone after each test, last first (register with `afterEach(runCleanup)` in the test file). */
export const cleanup: (() => void | Promise<void>)[] = [];
export async function runCleanup(): Promise<void> {
  for (const f of cleanup.splice(0).reverse()) await f();
}

export const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
export const MB = 1024 * 1024;

/** A Range server for one blob that cuts each answer after `dropEvery` bytes; counts what it sent. */
export async function blobServer(data: Buffer, dropEvery = Number.POSITIVE_INFINITY) {
  const stats = { bytes: 0, starts: [] as number[] };
  const server: Server = createServer((req, res) => {
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    const start = m ? Number(m[1]) : 0;
    const end = m?.[2] ? Math.min(Number(m[2]), data.length - 1) : data.length - 1;
    stats.starts.push(start);
    res.writeHead(m ? 206 : 200, { 'content-length': end - start + 1 });
    const body = data.subarray(start, end + 1);
    if (body.length > dropEvery) {
      stats.bytes += dropEvery;
      // cut once those bytes have left (destroying at once would drop them unsent)
      res.write(body.subarray(0, dropEvery), () => res.socket?.destroy());
      return;
    }
    stats.bytes += body.length;
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 't', stats };
}

export function cache(quotaBytes = 1024 * MB) {
  const dir = tmp('relay-publications-');
  const db = new Database(join(dir, 'relay.sqlite'));
  migrate(db);
  cleanup.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const counters = new Map<string, number>();
  const clock = { t: 1_000 };
  const c = new SqlitePublicationCache(
    db,
    quotaBytes,
    () => clock.t,
    (n, by) => counters.set(n, (counters.get(n) ?? 0) + by),
  );
  return { dir, cache: c, counters, clock };
}

export const up = (url: string): FetchUpstream => ({
  name: 'hub',
  url,
  token: 't',
  plan: { windows: [] },
  retryAt: () => 0,
});

/** Runs fetch steps until the blob is no longer being fetched (bounded). */
export async function fetchAll(d: Parameters<typeof publicationFetchStep>[0]) {
  for (let i = 0; i < 200 && d.cache.nextToFetch(); i++) await publicationFetchStep(d);
}
