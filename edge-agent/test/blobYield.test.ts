import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { cryptoRandomBytes, generateSigningKeyPair, monotonicUlid } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { runId, summary, tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

function blobOf(text: string) {
  const bytes = new TextEncoder().encode(text);
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes,
    contentType: 'application/octet-stream',
  };
}

describe('blob uploads yield to results', () => {
  it('stops before the next blob while a result waits to be pushed, and uploads them all otherwise', async () => {
    const keys = await generateSigningKeyPair();
    const hub = await TestHub.start(keys.publicKey);
    cleanup.push(() => hub.close());
    const { ledger: store, db } = openSqliteLedger({
      path: join(tempDir(), 'agent.sqlite'),
      site: 'ship-7',
      agent: 'a1',
    });
    cleanup.push(() => store.close());
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
      now: Date.now,
      log: { info: () => {}, warn: () => {} },
    });
    for (const component of ['network', 'dns', 'compute'])
      store.record({
        runId: runId(),
        summary: summary({ component }),
        detail: blobOf(`{"c":"${component}"}`.repeat(100)),
      });
    expect(store.blobsToUpload()).toHaveLength(3);
    expect(await engine.uploadBlobsOnce(undefined, undefined, () => true)).toBe(0);
    let asked = 0;
    expect(await engine.uploadBlobsOnce(undefined, undefined, () => asked++ > 0)).toBe(1);
    expect(store.blobsToUpload()).toHaveLength(2);
    expect(await engine.uploadBlobsOnce(undefined, undefined, () => false)).toBe(2);
    expect(store.blobsToUpload()).toEqual([]);
  });
});
