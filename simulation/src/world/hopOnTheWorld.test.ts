import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHopServer, type HopServer, MemoryHopBackend } from '@driftline/hop';
import { HopClient } from '@driftline/hop/client';
import { makeBundle } from '@driftline/hop/testing';
import { encodeBatch } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { seededRandom } from '../core/rng.js';
import { VirtualTime } from './VirtualTime.js';
import { WorldLink } from './WorldLink.js';
import { WorldNetwork, worldUrl } from './WorldNetwork.js';

const START = Date.UTC(2026, 0, 1);
const TOKEN = 'secret-token';
const ONE_WAY_MS = 12 * 60_000;
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/**
 * hop's own client and server, unchanged, on the world's network and clock (docs/decisions/540-deterministic-world.md):
 * the client's transport port carries v1 requests, tus uploads and Range fetches over a Mars-like link.
 */
describe('a hop client and server on the world', () => {
  const time = new VirtualTime();
  let hop: HopServer | undefined;
  afterEach(async () => {
    time.uninstall();
    await hop?.close();
  });

  function world(seed: number) {
    time.install(START);
    const backend = new MemoryHopBackend({ name: 'hub' });
    backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
    hop = createHopServer(backend, {
      uploads: { directory: mkdtempSync(join(tmpdir(), 'world-hop-')), maxSize: 8 * 1024 * 1024 },
    });
    const server = hop.server;
    const net = new WorldNetwork(seededRandom(seed));
    net.attach('hub', (req, res) => {
      server.emit('request', req, res);
    });
    const link = new WorldLink(
      'ship-7>hub',
      { uplink: { delayMs: ONE_WAY_MS }, downlink: { delayMs: ONE_WAY_MS } },
      START,
    );
    net.connect('ship-7', 'hub', link);
    const client = new HopClient({
      url: worldUrl('hub'),
      token: TOKEN,
      transport: net.transport('ship-7'),
      timeoutMs: 3_600_000,
    });
    return { backend, net, link, client };
  }

  /** Runs the world until `p` settles (bounded in virtual time), and returns what it gave. */
  async function settle<T>(p: Promise<T>, withinMs = 6 * 3_600_000): Promise<T> {
    let done = false;
    let value: T | undefined;
    void p.then((v) => {
      value = v;
      done = true;
    });
    await time.until(() => done, withinMs);
    if (!done) throw new Error(`not settled within ${withinMs} ms of world time`);
    return value as T;
  }

  it('posts a batch, uploads a blob by tus and fetches a Range, each in its exact round trips of world time', async () => {
    const { backend, link, client } = world(1);
    const bundles = [await makeBundle(), await makeBundle()];
    const sent = Date.now();
    const posted = await settle(client.postBatch(encodeBatch(bundles.map((b) => b.bytes)), { count: 2 }));
    expect(posted.ok && posted.value.receipts.map((x) => x.status)).toEqual(['stored', 'stored']);
    expect(backend.stored.size).toBe(2);
    expect(Date.now() - sent).toBe(2 * ONE_WAY_MS);

    const data = randomBytes(200_000);
    const before = Date.now();
    const up = await settle(client.upload({ sha256: sha256(data), size: data.length, body: data }));
    expect(up).toEqual({ ok: true, value: undefined });
    expect(backend.blobData.get(sha256(data))?.bytes.equals(data)).toBe(true);
    // tus: a POST that creates the upload, a PATCH with the bytes: two round trips
    expect(Date.now() - before).toBe(4 * ONE_WAY_MS);

    const got: Buffer[] = [];
    const r = await settle(
      client.fetchRange(sha256(data), 1000, 60_999, {
        write: async (c: Uint8Array) => got.push(Buffer.from(c)),
      }),
    );
    expect(r).toMatchObject({ ok: true, offset: 61_000 });
    expect(Buffer.concat(got).equals(data.subarray(1000, 61_000))).toBe(true);
    expect(link.exchanges).toBe(4);
  });

  it('a cut link fails the exchange at the client’s own timeout, on world time, and nothing reaches the server', async () => {
    const { backend, link, client } = world(2);
    link.cut();
    const sent = Date.now();
    const r = await settle(client.postBatch(encodeBatch([(await makeBundle()).bytes]), { count: 1 }));
    expect(r.ok).toBe(false);
    expect(Date.now() - sent).toBe(3_600_000);
    expect(backend.stored.size).toBe(0);
  });
});
