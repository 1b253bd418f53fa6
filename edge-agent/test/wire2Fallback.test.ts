import { join } from 'node:path';
import {
  cryptoRandomBytes,
  generateSigningKeyPair,
  monotonicUlid,
  publicKeyToText,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { readWire2Links, Wire2State } from '../src/adapters/http/wire2State.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { runId, summary, tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

describe('an agent set to hop v2 (sync.wire: 2) behind an upstream that does not speak it', () => {
  it('speaks v1 to it: the push, the ack and the pruning go as before', async () => {
    const keys = await generateSigningKeyPair();
    const hub = await TestHub.start(keys.publicKey);
    cleanup.push(() => hub.close());
    const dir = tempDir();
    const { ledger: store, db } = openSqliteLedger({
      path: join(dir, 'agent.sqlite'),
      site: 'ship-7',
      agent: 'a1',
    });
    cleanup.push(() => store.close());
    const state = new Wire2State(join(dir, 'wire2-state.json'));
    const uplink = new HttpUplink({
      url: hub.url,
      token: 'agent-token',
      urlStorage: new SqliteUrlStorage(db),
      wire2: {
        site: 'ship-7',
        agent: 'a1',
        privateKey: keys.privateKey,
        publicKey: await publicKeyToText(keys.publicKey),
        state,
      },
    });
    const engine = new SyncEngine({
      site: 'ship-7',
      agent: 'a1',
      store,
      uplinks: [uplink],
      wire2: state,
      privateKey: keys.privateKey,
      hubPublicKey: hub.keys.publicKey,
      allowsCell: () => true,
      onPlanRequest: () => {},
      newBundleId: monotonicUlid(Date.now, cryptoRandomBytes),
      now: Date.now,
      log: { info: () => {}, warn: () => {} },
    });
    store.record({ runId: runId(), summary: summary({ component: 'network' }) });
    expect((await engine.pushOnce()).kind).toBe('pushed');
    expect(hub.backend.stored.size).toBe(1); // a v1 bundle, taken by the v1-only node
    // what `edge-agent status` shows: v1 with that upstream, and why
    const links = readWire2Links(join(dir, 'wire2-state.json'));
    const link = links[hub.url];
    expect(link?.wire).toBe(1);
    expect(link?.wire === 1 ? link.reason : '').toMatch(/does not take hop v2/);
    expect(await hub.processArrivals()).toBe(1);
    expect((await engine.pullOnce()).acks).toBe(1);
    expect(store.status().unackedRuns).toBe(0);
    store.record({ runId: runId(), summary: summary({ component: 'dns' }) });
    await engine.pushOnce();
    expect(hub.backend.stored.size).toBe(2);
    expect(hub.rejected).toEqual([]);
  });
});
