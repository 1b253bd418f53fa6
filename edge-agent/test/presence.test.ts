import { join } from 'node:path';
import * as A from '@automerge/automerge';
import {
  cryptoRandomBytes,
  decodeBundle,
  decodePayload,
  generateSigningKeyPair,
  monotonicUlid,
  type SigningKeyPair,
  verifyBundle,
} from '@driftline/protocol';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { WindowAim } from '../src/core/sync/windowAim.js';
import { runId, summary, tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

/**
 * A quiet site proves its path in each contact window: with nothing pending, the agent signs and pushes
 * its presence (`presentAt`, one scalar change), once per window (docs/decisions/450-contact-the-agent-proves.md).
 */
let keys: SigningKeyPair;
beforeAll(async () => {
  keys = await generateSigningKeyPair();
});
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const FROM = Date.parse('2026-11-27T00:00:00Z');

async function setup() {
  const hub = await TestHub.start(keys.publicKey);
  cleanup.push(() => hub.close());
  let now = FROM + 30_000; // inside the first window
  const { ledger: store, db } = openSqliteLedger({
    path: join(tempDir(), 'agent.sqlite'),
    site: 'ship-7',
    agent: 'a1',
    now: () => now,
  });
  cleanup.push(() => store.close());
  const aim = new WindowAim(['every 5m for 1m from 2026-11-27T00:00:00Z'], 900_000);
  const engine = new SyncEngine({
    site: 'ship-7',
    agent: 'a1',
    store,
    uplinks: [new HttpUplink({ url: hub.url, token: 'agent-token', urlStorage: new SqliteUrlStorage(db) })],
    privateKey: keys.privateKey,
    hubPublicKey: hub.keys.publicKey,
    allowsCell: () => true,
    onPlanRequest: () => {},
    newBundleId: monotonicUlid(Date.now, cryptoRandomBytes),
    now: () => now,
    log: { info: () => {}, warn: () => {} },
    presenceDue: (at, t) => aim.presenceDue(at, t),
  });
  return { hub, store, engine, at: (t: number) => (now = t) };
}

describe('presence in a contact window', () => {
  it('goes up signed, one small change, once in each window with nothing else to say', async () => {
    const { hub, store, engine, at } = await setup();
    store.record({ runId: runId(), summary: summary({ component: 'network' }) });
    expect((await engine.pushOnce()).kind).toBe('pushed'); // the result itself: no presence owed after it
    await hub.processArrivals();
    expect((await engine.pullOnce()).acks).toBe(1);
    expect(await engine.pushOnce()).toEqual({ kind: 'idle' });
    at(FROM + 3 * 60_000); // between windows: nothing owed
    expect(await engine.pushOnce()).toEqual({ kind: 'idle' });
    at(FROM + 5 * 60_000 + 1000); // the next window opened
    const before = hub.backend.stored.size;
    const pushed = await engine.pushOnce();
    expect(pushed.kind).toBe('pushed');
    expect(hub.backend.stored.size).toBe(before + 1);
    const bytes = [...hub.backend.stored.values()].at(-1) as Uint8Array;
    const d = decodeBundle(bytes);
    if (!d.ok) throw d.error;
    expect(await verifyBundle(d.value, keys.publicKey)).toBe(true);
    expect(d.value.header.kind).toBe('doc-delta');
    const p = decodePayload('doc-delta', d.value.payload);
    if (!p.ok) throw p.error;
    expect(p.value.blobs).toEqual([]);
    // One change: the presence, which the hub merges (a change every hub takes) and hears the agent by.
    expect(A.decodeChange(p.value.changes).message).toBe('presence');
    await hub.processArrivals();
    const replica = hub.replicas.get(d.value.header.doc as string) as A.Doc<{ presentAt?: number }>;
    expect(replica.presentAt).toBe(FROM + 5 * 60_000 + 1000);
    expect(bytes.length).toBeLessThan(600);
    // Once per window: a second cycle in the same window has nothing to say again.
    at(FROM + 5 * 60_000 + 20_000);
    expect(await engine.pushOnce()).toEqual({ kind: 'idle' });
    at(FROM + 10 * 60_000 + 1000);
    expect((await engine.pushOnce()).kind).toBe('pushed');
  });

  it("counts a push of results as the window's contact: no presence beside it", async () => {
    const { store, engine } = await setup();
    store.record({ runId: runId(), summary: summary() });
    await engine.pushOnce();
    // The push in this window counts: nothing more goes up in it.
    expect(await engine.pushOnce()).toEqual({ kind: 'idle' });
  });
});
