import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  type BlobManifest,
  type BundleHeader,
  encodeBundle,
  encodeUlid,
  generateSigningKeyPair,
} from '@driftline/protocol';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { RangeFetcher } from '../src/adapters/http/RangeFetcher.js';
import { SqliteBundleCache } from '../src/adapters/sqlite/SqliteBundleCache.js';
import { migrate } from '../src/adapters/sqlite/schema.js';
import { announcedBlobs, bundleFetchStep, type FetchUpstream } from '../src/core/bundles/bundleFetch.js';
import { startRelay, startTerminal, tmp, until, upstreamOf } from './helpers.js';

const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const MB = 1024 * 1024;

/** A Range server for one blob that cuts each answer after `dropEvery` bytes; counts what it sent. */
async function blobServer(data: Buffer, dropEvery = Number.POSITIVE_INFINITY) {
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

function cache(quotaBytes = 1024 * MB) {
  const dir = tmp('relay-bundles-');
  const db = new Database(join(dir, 'relay.sqlite'));
  migrate(db);
  cleanup.push(() => {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const counters = new Map<string, number>();
  const clock = { t: 1_000 };
  const c = new SqliteBundleCache(
    db,
    quotaBytes,
    () => clock.t,
    (n, by) => counters.set(n, (counters.get(n) ?? 0) + by),
  );
  return { dir, cache: c, counters, clock };
}

const up = (url: string): FetchUpstream => ({
  name: 'hub',
  url,
  token: 't',
  plan: { windows: [] },
  retryAt: () => 0,
});

/** Runs fetch steps until the blob is no longer being fetched (bounded). */
async function fetchAll(d: Parameters<typeof bundleFetchStep>[0]) {
  for (let i = 0; i < 200 && d.cache.nextToFetch(); i++) await bundleFetchStep(d);
}

describe('relay bundle fetching (bundles to outposts)', () => {
  it('fetches a blob in Range chunks, resuming after every drop, and keeps it once verified', async () => {
    const data = randomBytes(3 * MB + 12_345);
    const server = await blobServer(data, 300_000);
    const { dir, cache: c } = cache();
    const fetcher = new RangeFetcher(dir);
    const sha = sha256(data);
    c.note([{ sha256: sha, size: data.length, name: 'm.zip', site: 'ship-7', expiresAt: 10_000 }]);
    const events: string[] = [];
    await fetchAll({
      cache: c,
      fetcher,
      upstreams: [up(server.url)],
      now: () => 1_000,
      uplinkBusy: () => false,
      chunkBytes: MB,
      emit: (e) => events.push(e.type),
    });
    expect(c.list()[0]).toMatchObject({ state: 'held', fetched: data.length });
    expect(readFileSync(join(dir, sha)).equals(data)).toBe(true);
    expect(existsSync(fetcher.partialPath(sha))).toBe(false);
    expect(events).toContain('failed'); // the drops happened …
    // … and only what was in flight at each drop was sent again
    expect(server.stats.bytes).toBeLessThanOrEqual(1.05 * data.length);
  });

  it('resumes from the partial file after a restart, asking only for the bytes it lacks', async () => {
    const data = randomBytes(3 * MB);
    const sha = sha256(data);
    const server = await blobServer(data);
    const { dir } = cache();
    const first = new RangeFetcher(dir);
    const r = await first.fetchChunk(server, sha, data.length, MB);
    expect(r).toMatchObject({ ok: true, offset: MB, complete: false });
    first.abort(); // the relay stops; what arrived stays on disk
    expect(await first.fetchChunk(server, sha, data.length, MB)).toMatchObject({ ok: false, offset: MB });

    const again = new RangeFetcher(dir);
    expect(await again.offset(sha)).toBe(MB);
    let last = await again.fetchChunk(server, sha, data.length, MB);
    for (let i = 0; i < 10 && last.ok && !last.complete; i++)
      last = await again.fetchChunk(server, sha, data.length, MB);
    expect(last).toMatchObject({ ok: true, complete: true, offset: data.length });
    expect(server.stats.starts).toEqual([0, MB, 2 * MB]);
    expect(server.stats.bytes).toBe(data.length);
    expect(readFileSync(join(dir, sha)).equals(data)).toBe(true);
  });

  it('discards bytes that do not hash to the announced sha256 and refuses the blob, counted', async () => {
    const announced = randomBytes(2 * MB);
    const served = Buffer.from(announced);
    served[MB] = (served[MB] ?? 0) ^ 0xff; // one byte changed on the way
    const server = await blobServer(served);
    const { dir, cache: c, counters } = cache();
    const fetcher = new RangeFetcher(dir);
    const sha = sha256(announced);
    c.note([{ sha256: sha, size: announced.length, name: 'm.zip', site: 'ship-7', expiresAt: 10_000 }]);
    const refused: string[] = [];
    await fetchAll({
      cache: c,
      fetcher,
      upstreams: [up(server.url)],
      now: () => 1_000,
      uplinkBusy: () => false,
      chunkBytes: MB,
      emit: (e) => {
        if (e.type === 'refused') refused.push(e.reason);
      },
    });
    expect(refused).toEqual(['the fetched bytes do not match the sha256']);
    expect(c.list()[0]).toMatchObject({ state: 'refused' });
    expect(counters.get('bundles_refused')).toBe(1);
    expect(existsSync(join(dir, sha))).toBe(false);
    expect(existsSync(fetcher.partialPath(sha))).toBe(false);
    expect(c.nextToFetch()).toBeNull();
  });

  it('keeps one copy for several sites and refuses, counted, a blob over the quota', () => {
    const { cache: c, counters } = cache(5 * MB);
    const a = 'a'.repeat(64);
    const b = 'b'.repeat(64);
    c.note([{ sha256: a, size: 3 * MB, name: 'a', site: 'ship-7', expiresAt: 10_000 }]);
    c.note([{ sha256: a, size: 3 * MB, name: 'a', site: 'ship-8', expiresAt: 20_000 }]);
    c.note([{ sha256: b, size: 3 * MB, name: 'b', site: 'ship-7', expiresAt: 10_000 }]);
    const [first, second] = c.list();
    expect(first).toMatchObject({
      sha256: a,
      sites: ['ship-7', 'ship-8'],
      state: 'fetching',
      expiresAt: 20_000,
    });
    expect(second).toMatchObject({ sha256: b, state: 'refused' });
    expect(second?.reason).toMatch(/over the relay's bundle quota/);
    expect(counters.get('bundles_refused_quota')).toBe(1);
    expect(c.nextToFetch()?.sha256).toBe(a);
  });

  it('removes expired blobs with their files and counts them', async () => {
    const data = randomBytes(MB / 2);
    const sha = sha256(data);
    const server = await blobServer(data);
    const { dir, cache: c, counters, clock } = cache();
    const fetcher = new RangeFetcher(dir);
    c.note([{ sha256: sha, size: data.length, name: 'm', site: 'ship-7', expiresAt: 5_000 }]);
    const d = {
      cache: c,
      fetcher,
      upstreams: [up(server.url)],
      now: () => clock.t,
      uplinkBusy: () => false,
      chunkBytes: MB,
      emit: () => {},
    };
    await fetchAll(d);
    expect(existsSync(join(dir, sha))).toBe(true);
    clock.t = 5_000;
    await bundleFetchStep(d);
    expect(c.list()).toEqual([]);
    expect(existsSync(join(dir, sha))).toBe(false);
    expect(counters.get('bundles_expired')).toBe(1);
  });

  it('drops a superseded blob with its files, counted, and fetches its successor', async () => {
    const v1 = randomBytes(MB / 2);
    const v2 = randomBytes(MB / 2);
    const s1 = await blobServer(v1);
    const s2 = await blobServer(v2);
    const { dir, cache: c, counters } = cache();
    const fetcher = new RangeFetcher(dir);
    const step = (url: string) => ({
      cache: c,
      fetcher,
      upstreams: [up(url)],
      now: () => 1_000,
      uplinkBusy: () => false,
      chunkBytes: MB,
      emit: () => {},
    });
    const item = { size: v1.length, name: 'cfg', site: 'ship-7', expiresAt: 10_000 };
    c.note([{ ...item, sha256: sha256(v1), bundleId: 'b1' }]);
    await fetchAll(step(s1.url));
    expect(existsSync(join(dir, sha256(v1)))).toBe(true);

    c.note([{ ...item, sha256: sha256(v2), bundleId: 'b2', supersedes: ['b1'] }]);
    expect(c.list().map((b) => [b.sha256, b.state])).toEqual([
      [sha256(v1), 'superseded'],
      [sha256(v2), 'fetching'],
    ]);
    expect(counters.get('bundles_superseded')).toBe(1);
    await fetchAll(step(s2.url));
    expect(c.list().map((b) => [b.sha256, b.state])).toEqual([[sha256(v2), 'held']]);
    expect(existsSync(join(dir, sha256(v1)))).toBe(false);
    expect(readFileSync(join(dir, sha256(v2))).equals(v2)).toBe(true);
    // The same announcement again (a re-pulled downlink) neither revives b1 nor counts twice.
    c.note([{ ...item, sha256: sha256(v1), bundleId: 'b1' }]);
    c.note([{ ...item, sha256: sha256(v2), bundleId: 'b2', supersedes: ['b1'] }]);
    expect(c.list().map((b) => b.sha256)).toEqual([sha256(v2)]);
    expect(counters.get('bundles_superseded')).toBe(1);
  });

  it('keeps a superseded blob while another live bundle still needs it (one copy)', () => {
    const { cache: c, counters } = cache();
    const a = 'a'.repeat(64);
    const b = 'b'.repeat(64);
    const item = { size: 10, name: 'cfg', expiresAt: 10_000 };
    c.note([
      { ...item, sha256: a, site: 'ship-7', bundleId: 'b1' },
      { ...item, sha256: a, site: 'ship-8', bundleId: 'b1' },
      { ...item, sha256: a, site: 'ship-9', bundleId: 'other' },
    ]);
    // b2 replaces b1 at ship-7 only: ship-8 (and the unrelated bundle at ship-9) still need the bytes.
    c.note([{ ...item, sha256: b, site: 'ship-7', bundleId: 'b2', supersedes: ['b1'] }]);
    c.note([{ ...item, sha256: b, site: 'ship-8', bundleId: 'b2', supersedes: ['b1'] }]);
    expect(c.list().find((x) => x.sha256 === a)?.state).toBe('fetching');
    expect(c.removeSuperseded()).toEqual([]);
    // Once the last live one is replaced too, the blob goes.
    c.note([{ ...item, sha256: b, site: 'ship-9', bundleId: 'o2', supersedes: ['other'] }]);
    expect(c.list().find((x) => x.sha256 === a)?.state).toBe('superseded');
    expect(c.removeSuperseded().map((x) => x.sha256)).toEqual([a]);
    expect(counters.get('bundles_superseded')).toBe(1);

    // A republication with the same bytes keeps the one copy it needs.
    c.note([{ ...item, sha256: b, site: 'ship-7', bundleId: 'b3', supersedes: ['b2'] }]);
    expect(c.list().find((x) => x.sha256 === b)?.state).toBe('fetching');
    expect(counters.get('bundles_superseded')).toBe(1);
  });

  it('stops fetching a superseded blob, removes its partial file, and ignores it if announced late', async () => {
    const v1 = randomBytes(3 * MB);
    const s1 = await blobServer(v1);
    const { dir, cache: c, counters } = cache();
    const fetcher = new RangeFetcher(dir);
    const d = {
      cache: c,
      fetcher,
      upstreams: [up(s1.url)],
      now: () => 1_000,
      uplinkBusy: () => false,
      chunkBytes: MB,
      emit: () => {},
    };
    const item = { size: v1.length, name: 'cfg', site: 'ship-7', expiresAt: 10_000 };
    c.note([{ ...item, sha256: sha256(v1), bundleId: 'b1' }]);
    await bundleFetchStep(d);
    expect(await fetcher.offset(sha256(v1))).toBe(MB);
    const v2 = 'c'.repeat(64);
    c.note([{ ...item, sha256: v2, bundleId: 'b2', supersedes: ['b1'] }]);
    // An older manifest that arrives after what replaced it (b0 was never announced here) is not fetched.
    c.note([{ ...item, sha256: v2, bundleId: 'b3', supersedes: ['b0'] }]);
    c.note([{ ...item, sha256: 'd'.repeat(64), bundleId: 'b0' }]);
    expect(c.nextToFetch()?.sha256).toBe(v2);
    await bundleFetchStep({ ...d, uplinkBusy: () => true }); // sweeps even when it may not fetch
    expect(existsSync(fetcher.partialPath(sha256(v1)))).toBe(false);
    expect(c.list().map((b) => b.sha256)).toEqual([v2]);
    expect(s1.stats.starts).toEqual([0]);
    expect(counters.get('bundles_superseded')).toBe(1);
  });

  it('carries the bundle id and what it supersedes from a hub manifest', async () => {
    const { privateKey } = await generateSigningKeyPair();
    const header = {
      id: encodeUlid(1, randomBytes(10)),
      kind: 'blob',
      source: 'hub',
      destination: { site: 'ship-7' },
      created: 1,
      lifetimeS: 3600,
      priority: 'bulk',
    } as unknown as BundleHeader & { kind: 'blob' };
    const m: BlobManifest = {
      sha256: 'e'.repeat(64) as BlobManifest['sha256'],
      size: 1,
      contentType: 'application/octet-stream',
      name: 'cfg',
      fileKind: 'config',
      bundleId: 'b2',
      supersedes: ['b1'],
      expiresAt: 9,
    };
    const bytes = await encodeBundle(header, m, privateKey);
    expect(announcedBlobs('ship-7', [{ kind: 'blob', bytes, expiresAt: 1 } as never])).toEqual([
      {
        sha256: m.sha256,
        size: 1,
        name: 'cfg',
        site: 'ship-7',
        expiresAt: 9,
        bundleId: 'b2',
        supersedes: ['b1'],
      },
    ]);
  });

  it('fetches nothing while an uplink bundle waits: bundles are the lowest priority', async () => {
    const data = randomBytes(1000);
    const server = await blobServer(data);
    const { dir, cache: c } = cache();
    c.note([{ sha256: sha256(data), size: data.length, name: 'm', site: 'ship-7', expiresAt: 10_000 }]);
    const moved = await bundleFetchStep({
      cache: c,
      fetcher: new RangeFetcher(dir),
      upstreams: [up(server.url)],
      now: () => 1_000,
      uplinkBusy: () => true,
      chunkBytes: MB,
      emit: () => {},
    });
    expect(moved).toBe(false);
    expect(server.stats.starts).toEqual([]);
  });
});

describe('relay bundles end to end (in process)', () => {
  async function manifest(data: Buffer, source: 'hub' | { site: string }, key: CryptoKey) {
    const header = {
      id: encodeUlid(Date.now(), randomBytes(10)),
      kind: 'blob',
      source,
      destination: { site: 'ship-7' },
      created: Date.now(),
      lifetimeS: 3600,
      priority: 'bulk',
    } as unknown as BundleHeader & { kind: 'blob' };
    const m: BlobManifest = {
      sha256: sha256(data) as BlobManifest['sha256'],
      size: data.length,
      contentType: 'application/octet-stream',
      name: 'mirror.zip',
      fileKind: 'provider-mirror',
      bundleId: 'b1',
      expiresAt: Date.now() + 3_600_000,
    };
    return encodeBundle(header, m, key);
  }

  it('notes only hub-sourced blob manifests from the downlink', async () => {
    const { privateKey } = await generateSigningKeyPair();
    const data = randomBytes(10);
    const fromHub = await manifest(data, 'hub', privateKey);
    const fromSite = await manifest(data, { site: 'ship-9' }, privateKey);
    const got = announcedBlobs('ship-7', [
      { kind: 'blob', bytes: fromHub, expiresAt: 1 } as never,
      { kind: 'blob', bytes: fromSite, expiresAt: 1 } as never,
    ]);
    expect(got).toEqual([
      expect.objectContaining({ sha256: sha256(data), size: 10, name: 'mirror.zip', site: 'ship-7' }),
    ]);
  });

  it('fetches an announced blob from its upstream once and serves it to its site with Range', async () => {
    const term = await startTerminal();
    cleanup.push(() => term.hop.close());
    const data = randomBytes(2 * MB + 7);
    const sha = sha256(data);
    term.backend.blobData.set(sha, { bytes: data, metadata: {}, mtimeMs: 0 });
    const { privateKey } = await generateSigningKeyPair();
    term.backend.enqueueDownlink('ship-7', await manifest(data, 'hub', privateKey));
    const r = await startRelay({ sites: ['ship-7'], bundles: { intervalMs: 50, chunkBytes: 512 * 1024 } }, [
      upstreamOf('hub', term.url, term.token),
    ]);
    cleanup.push(() => r.relay.stop());
    const token = r.relay.tokens.add('ship-7', ['ship-7']);
    await until(() => r.relay.bundleCache.list()[0]?.state === 'held', 10_000, 'the blob to be held');
    const res = await fetch(`${r.url}/v1/blobs/${sha}`, {
      headers: { authorization: `Bearer ${token}`, range: `bytes=${MB}-` },
    });
    expect(res.status).toBe(206);
    expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(MB))).toBe(true);
  });
});
