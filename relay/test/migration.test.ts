import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteCustody } from '../src/adapters/sqlite/SqliteCustody.js';
import { migrate } from '../src/adapters/sqlite/schema.js';
import { describeBundle } from '../src/core/describeBundle.js';
import { makeBundle, tmp } from './helpers.js';

const open: SqliteCustody[] = [];
afterEach(() => {
  for (const c of open.splice(0)) c.close();
});

describe('upgrading a store from before bundles were known by content hash', () => {
  it('keeps held bundles, their order, the downlink cursors, and still finds a held bundle a duplicate', async () => {
    const path = join(tmp(), 'relay.sqlite');
    const held = await makeBundle();
    const forwarded = await makeBundle();
    const old = new Database(path);
    migrate(old, 2);
    const now = Date.now();
    old
      .prepare('INSERT INTO seen (id, expires_at) VALUES (?, ?), (?, ?)')
      .run(held.id, now + 9e6, forwarded.id, now + 9e6);
    old
      .prepare(
        `INSERT INTO uplink (seq, id, rank, dest, kind, size, received_at, expires_at, from_peer, bytes)
         VALUES (41, ?, 2, 'hub', 'doc-delta', ?, ?, ?, 'ship-7', ?)`,
      )
      .run(held.id, held.bytes.length, now, now + 9e6, Buffer.from(held.bytes));
    old
      .prepare(
        `INSERT INTO downlink (seq, id, site, rank, size, received_at, expires_at, bytes)
         VALUES (77, 'x', 'ship-7', 0, 1, ?, ?, x'00')`,
      )
      .run(now, now + 9e6);
    old.close();

    const c = new SqliteCustody(path);
    open.push(c);
    expect(c.nextBatch(now, 1 << 20, 10).map((b) => [b.seq, b.id])).toEqual([[41, held.id]]);
    const item = (b: { bytes: Uint8Array }) => {
      const d = describeBundle(b.bytes);
      if (!d.ok) throw new Error(d.message);
      return d.value;
    };
    expect(c.accept('ship-7', [item(held)], now)).toEqual(['duplicate']);
    // a forwarded bundle's hash was never kept: a resend is taken again, and the hub answers duplicate
    expect(c.accept('ship-7', [item(forwarded)], now)).toEqual(['stored']);
    expect(c.downlink('ship-7', 0, 10).cursor).toBe(77);
    expect(c.db.prepare('SELECT scope FROM tokens').all()).toEqual([]);
    expect(c.held('ship-7').bundles).toBe(2);
  });
});

describe('upgrading a store from before the downlink was known by content hash', () => {
  it('keeps held downlink rows and carries the seq sequence on, so cursors held downstream stay valid', async () => {
    const path = join(tmp(), 'relay.sqlite');
    const old = new Database(path);
    migrate(old, 5);
    const now = Date.now();
    // Site A's rows up to 100 were pulled and released; site B still holds row 50.
    old
      .prepare(
        `INSERT INTO downlink (seq, id, site, rank, size, received_at, expires_at, bytes)
         VALUES (100, 'a', 'ship-a', 0, 1, ?, ?, x'00'), (50, 'b', 'ship-b', 0, 1, ?, ?, x'01')`,
      )
      .run(now, now + 9e6, now, now + 9e6);
    old.prepare('DELETE FROM downlink WHERE seq = 100').run();
    old.close();

    const c = new SqliteCustody(path);
    open.push(c);
    expect(c.downlink('ship-b', 0, 10)).toEqual({ bundles: [Uint8Array.of(1)], cursor: 50 });
    const fresh = await makeBundle({ source: 'hub', destination: { site: 'ship-a' } } as never);
    const d = describeBundle(fresh.bytes);
    if (!d.ok) throw new Error(d.message);
    c.storeDownlink('hub', 'ship-a', [{ ...d.value, dest: 'ship-a' }], '1', now);
    // ship-a's puller comes back with cursor 100: the new row is after it, not lost below it.
    expect(c.downlink('ship-a', 100, 10).bundles).toEqual([fresh.bytes]);
  });
});
