import { afterEach, describe, expect, it } from 'vitest';
import { describeBundle } from '../src/core/describeBundle.js';
import { type Custody, type IncomingBundle, OutOfSpace, QuotaExceeded } from '../src/ports/Custody.js';
import { makeBundle } from './helpers.js';

/** A fresh adapter for one test; `maxBytes` caps what it keeps. */
export type CustodySetup = (opts?: { maxBytes?: number }) => { custody: Custody; cleanup?: () => void };

const T0 = Date.parse('2025-01-01T00:00:00Z');

async function incoming(over: Parameters<typeof makeBundle>[0] = {}): Promise<IncomingBundle> {
  const d = describeBundle((await makeBundle({ created: T0, ...over })).bytes);
  if (!d.ok) throw new Error(d.message);
  return d.value;
}

/**
 * What every `Custody` adapter promises (ports/Custody.ts). `SqliteCustody` and `MemoryCustody` both run
 * it; a new adapter (another database) runs it too before the relay may use it.
 */
export function runCustodyContract(name: string, setup: CustodySetup): void {
  describe(`Custody contract: ${name}`, () => {
    const opened: ReturnType<CustodySetup>[] = [];
    afterEach(() => {
      for (const s of opened.splice(0)) {
        s.custody.close();
        s.cleanup?.();
      }
    });
    const open = (opts?: { maxBytes?: number }) => {
      const s = setup(opts);
      opened.push(s);
      return { c: s.custody };
    };

    it('stores a bundle once: the same bytes again are a duplicate, an altered copy under its id is held too', async () => {
      const s = open();
      const b = await incoming();
      expect(s.c.accept('p', [b, b], T0)).toEqual(['stored', 'duplicate']);
      const altered = { ...b, bytes: new Uint8Array([...b.bytes.slice(0, -1), (b.bytes.at(-1) ?? 0) ^ 1]) };
      expect(s.c.accept('p', [altered], T0)).toEqual(['stored']);
      expect(s.c.nextBatch(T0, 1 << 20, 10).map((q) => q.id)).toEqual([b.id, b.id]);
    });

    it('refuses a bundle past its lifetime as expired, counted', async () => {
      const s = open();
      const late = await incoming({ lifetimeS: 1 });
      expect(s.c.accept('p', [late], T0 + 2000)).toEqual(['expired']);
      expect(s.c.counter('expired_on_arrival')).toBe(1);
      expect(s.c.nextBatch(T0, 1 << 20, 10)).toEqual([]);
    });

    it('hands out control, failure, status, bulk, oldest first within one, up to the byte cap (at least one)', async () => {
      const s = open();
      const [bulk, status1, failure, status2, control] = await Promise.all(
        (['bulk', 'status', 'failure', 'status', 'control'] as const).map((priority) =>
          incoming({ priority }),
        ),
      );
      s.c.accept('p', [bulk!, status1!, failure!, status2!, control!], T0);
      const all = s.c.nextBatch(T0, 1 << 20, 10);
      expect(all.map((q) => q.id)).toEqual([control, failure, status1, status2, bulk].map((b) => b!.id));
      expect(all.map((q) => q.priority)).toEqual(['control', 'failure', 'status', 'status', 'bulk']);
      expect(all[0]).toMatchObject({
        dest: 'hub',
        size: control!.bytes.length,
        receivedAt: T0,
        source: 'ship-7/a1',
      });
      expect(s.c.nextBatch(T0, 1, 10)).toHaveLength(1);
      expect(s.c.nextBatch(T0, 1 << 20, 2)).toHaveLength(2);
    });

    it('keeps a source clock estimate with its bundle', async () => {
      const s = open();
      const b = { ...(await incoming()), clock: { offsetMs: -1200, uncertaintyMs: 40 } };
      s.c.accept('p', [b], T0);
      expect(s.c.nextBatch(T0, 1 << 20, 1)[0]?.clock).toMatchObject({ offsetMs: -1200, uncertaintyMs: 40 });
    });

    it('lets go of forwarded and refused bundles by seq, counted; a copy sent again is still a duplicate', async () => {
      const s = open();
      const [a, b] = [await incoming(), await incoming()];
      s.c.accept('p', [a!, b!], T0);
      const [qa, qb] = s.c.nextBatch(T0, 1 << 20, 10);
      s.c.forwarded([qa!.seq]);
      s.c.refused([qb!.seq]);
      expect(s.c.nextBatch(T0, 1 << 20, 10)).toEqual([]);
      expect([s.c.counter('forwarded'), s.c.counter('refused_upstream')]).toEqual([1, 1]);
      expect(s.c.accept('p', [a!], T0)).toEqual(['duplicate']);
    });

    it('drops what outlived its lifetime, both ways, and reports it for counting', async () => {
      const s = open();
      const up = await incoming({ lifetimeS: 60 });
      const down = await incoming({ lifetimeS: 60, source: 'hub', destination: { site: 'ship-7' } } as never);
      s.c.accept('p', [up], T0);
      s.c.storeDownlink('hub', 'ship-7', [{ ...down, dest: 'ship-7' }], '1', T0);
      const r = s.c.expire(T0 + 61_000);
      expect(r.uplink).toEqual([{ id: up.id, dest: 'hub', priority: 'status' }]);
      expect(r.downlink).toEqual([{ id: down.id, dest: 'ship-7', priority: 'status' }]);
      expect([s.c.counter('expired_uplink'), s.c.counter('expired_downlink')]).toEqual([1, 1]);
      expect(s.c.queueStats(T0 + 61_000)).toEqual([]);
      expect(s.c.accept('p', [up], T0 + 61_000)).toEqual(['duplicate']); // its id is still known
    });

    it('holds pulled downlink with the upstream cursor, and releases it when the puller comes back after it', async () => {
      const s = open();
      const items = await Promise.all(
        [1, 2, 3].map(async () => ({
          ...(await incoming({ source: 'hub', destination: { site: 'ship-7' } } as never)),
          dest: 'ship-7',
        })),
      );
      s.c.storeDownlink('hub', 'ship-7', [...items, items[0]!], 'c-9', T0);
      expect(s.c.upstreamCursor('hub', 'ship-7')).toBe('c-9');
      expect(s.c.upstreamCursor('other', 'ship-7')).toBeUndefined();
      const first = s.c.downlink('ship-7', 0, 2);
      expect(first.bundles).toEqual(items.slice(0, 2).map((i) => i.bytes));
      const rest = s.c.downlink('ship-7', first.cursor, 10);
      expect(rest.bundles).toEqual([items[2]!.bytes]);
      expect(s.c.queueStats(T0)).toEqual([{ dest: 'ship-7', priority: 'status', count: 1, oldestMs: 0 }]);
      expect(s.c.downlink('ship-7', rest.cursor, 10)).toEqual({ bundles: [], cursor: rest.cursor });
      expect(s.c.downlink('ship-8', 0, 10)).toEqual({ bundles: [], cursor: 0 });
    });

    it('holds two downlink copies under one id as two candidates, serves both, and drops the same bytes again, even after release', async () => {
      const s = open();
      const genuine = {
        ...(await incoming({ source: 'hub', destination: { site: 'ship-7' } } as never)),
        dest: 'ship-7',
      };
      const altered = {
        ...genuine,
        bytes: new Uint8Array([...genuine.bytes.slice(0, -1), (genuine.bytes.at(-1) ?? 0) ^ 1]),
      };
      expect(s.c.storeDownlink('up-a', 'ship-7', [altered], '1', T0)).toEqual({ conflicts: [] });
      expect(s.c.storeDownlink('up-b', 'ship-7', [genuine], '1', T0)).toEqual({ conflicts: [genuine.id] });
      const all = s.c.downlink('ship-7', 0, 10);
      expect(all.bundles).toEqual([altered.bytes, genuine.bytes]);
      s.c.downlink('ship-7', all.cursor, 10); // the site has both: released
      expect(s.c.storeDownlink('up-a', 'ship-7', [genuine, altered], '2', T0)).toEqual({ conflicts: [] });
      expect(s.c.downlink('ship-7', all.cursor, 10).bundles).toEqual([]);
      // Another site's copy under the same id is that site's own.
      expect(s.c.storeDownlink('up-a', 'ship-8', [genuine], '1', T0)).toEqual({ conflicts: [] });
      expect(s.c.downlink('ship-8', 0, 10).bundles).toEqual([genuine.bytes]);
    });

    it('adds up bytes sent per key and counters per name', () => {
      const s = open();
      s.c.addSent(['u|w|1', 'u|d|2025-01-01'], 100);
      s.c.addSent(['u|w|1'], 50);
      expect([s.c.sent('u|w|1'), s.c.sent('u|d|2025-01-01'), s.c.sent('none')]).toEqual([150, 100, 0]);
      s.c.count('bundles_fetched', 2);
      s.c.count('bundles_fetched', 1);
      expect(s.c.counter('bundles_fetched')).toBe(3);
    });

    it("refuses a peer's batch past its quota with nothing written, and leaves other peers alone", async () => {
      const s = open();
      const q = { maxBundles: 2, maxBytes: 1 << 20 };
      s.c.accept('p', [await incoming(), await incoming()], T0, q);
      const third = await incoming();
      expect(() => s.c.accept('p', [third], T0, q)).toThrow(QuotaExceeded);
      expect(s.c.held('p').bundles).toBe(2);
      expect(s.c.accept('other', [await incoming()], T0, q)).toEqual(['stored']);
      const b = await incoming();
      try {
        s.c.accept('q', [b], T0, { maxBundles: 9, maxBytes: b.bytes.length - 1 });
        expect.unreachable();
      } catch (e) {
        expect(e).toBeInstanceOf(QuotaExceeded);
        expect((e as QuotaExceeded).what).toBe('bytes');
      }
      expect(s.c.heldByPeer().sort((x, y) => x.peer.localeCompare(y.peer))).toEqual([
        { peer: 'other', bundles: 1, bytes: expect.any(Number) },
        { peer: 'p', bundles: 2, bytes: expect.any(Number) },
      ]);
    });

    it('keeps blobs until one upstream has them, resumable, visible to their uploader only', async () => {
      const s = open();
      const [a, b] = ['a'.repeat(64), 'b'.repeat(64)];
      s.c.blobs.record(a, 100, '/blobs/a', { contentType: 'x' }, 'ship-7', T0);
      s.c.blobs.record(b, 50, '/blobs/b', {}, 'ship-8', T0 + 1);
      s.c.blobs.record(a, 100, '/blobs/a', {}, 'ship-7', T0 + 2); // again: no effect
      s.c.blobs.setUploadUrl(a, 'hub', 'http://hub/v1/uploads/1');
      expect(s.c.blobs.pending('hub', 10)).toEqual([
        {
          sha256: a,
          size: 100,
          path: '/blobs/a',
          metadata: { contentType: 'x' },
          url: 'http://hub/v1/uploads/1',
        },
        { sha256: b, size: 50, path: '/blobs/b', metadata: {}, url: null },
      ]);
      expect(s.c.blobs.pending('relay-b', 1)).toEqual([expect.objectContaining({ sha256: a, url: null })]);
      expect(s.c.held('ship-7').bytes).toBe(100);
      expect(s.c.usage().blobBytes).toBeGreaterThanOrEqual(150);
      expect(s.c.blobs.visibleTo(a, { name: 'ship-7', sites: ['ship-7'] })).toBe(true);
      expect(s.c.blobs.visibleTo(a, { name: 'ship-8', sites: ['ship-8'] })).toBe(false);
      expect(s.c.blobs.forwarded(a)).toBe('/blobs/a');
      expect(s.c.counter('blobs_forwarded')).toBe(1);
      expect(s.c.blobs.pending('hub', 10).map((p) => p.sha256)).toEqual([b]);
      expect(s.c.held('ship-7').bytes).toBe(0);
    });

    it('sets a blob aside for one upstream until a time, with the reason, keeping it for every other', async () => {
      const s = open();
      const [a, b] = ['a'.repeat(64), 'b'.repeat(64)];
      s.c.blobs.record(a, 100, '/blobs/a', {}, 'ship-7', T0);
      s.c.blobs.record(b, 50, '/blobs/b', {}, 'ship-7', T0 + 1);
      s.c.blobs.setUploadUrl(a, 'hub', 'http://hub/v1/uploads/1');
      s.c.blobs.setAside(a, 'hub', T0 + 3_600_000, 'HTTP 413 payload-too-large');
      expect(s.c.blobs.pending('hub', 10, T0).map((p) => p.sha256)).toEqual([b]);
      expect(s.c.blobs.pending('relay-b', 10, T0).map((p) => p.sha256)).toEqual([a, b]);
      expect(s.c.blobs.setAsideFor('hub', T0)).toEqual([
        { sha256: a, until: T0 + 3_600_000, reason: 'HTTP 413 payload-too-large' },
      ]);
      // Its time over, it is tried again, resuming where it was; still held and counted meanwhile.
      expect(s.c.blobs.pending('hub', 10, T0 + 3_600_000)).toEqual([
        expect.objectContaining({ sha256: a, url: 'http://hub/v1/uploads/1' }),
        expect.objectContaining({ sha256: b }),
      ]);
      expect(s.c.held('ship-7').bytes).toBe(150);
      expect(s.c.blobs.setAsideFor('hub', T0 + 3_600_000)).toEqual([]);
    });

    it('counts outside bytes against maxBytes, and refuses a batch once full with nothing half-written', async () => {
      const s = open({ maxBytes: 256 * 1024 });
      expect(s.c.maxBytes).toBe(256 * 1024);
      s.c.externalBytes = () => 1000;
      expect(s.c.usage().externalBytes).toBe(1000);
      const accepted: string[] = [];
      let full = false;
      for (let i = 0; i < 400 && !full; i++) {
        const batch = await Promise.all(Array.from({ length: 10 }, () => incoming()));
        try {
          s.c.accept('p', batch, T0);
          accepted.push(...batch.map((b) => b.id));
        } catch (e) {
          expect(e).toBeInstanceOf(OutOfSpace);
          full = true;
        }
      }
      expect(full).toBe(true);
      expect(s.c.usage().total).toBeLessThanOrEqual(256 * 1024);
      const held = s.c.nextBatch(T0, Number.MAX_SAFE_INTEGER, 100_000);
      expect(held.map((q) => q.id)).toEqual(accepted);
      s.c.forwarded(held.map((q) => q.seq));
      expect(s.c.accept('p', [await incoming()], T0)).toEqual(['stored']);
    });
  });
}
