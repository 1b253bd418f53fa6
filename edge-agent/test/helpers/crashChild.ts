/**
 * A stand-in agent process for the crash-safety test: records runs and pushes them, printing
 * `committed <runId>` after each commit, until it is killed. Reads its setup from the environment.
 */
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import {
  cryptoRandomBytes,
  importPrivateKeyPem,
  importPublicKeyPem,
  monotonicUlid,
} from '@driftline/protocol';
import { HttpUplink } from '../../src/adapters/http/HttpUplink.js';
import { openSqliteLedger } from '../../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../../src/adapters/tus/SqliteUrlStorage.js';
import { SyncEngine } from '../../src/core/sync/SyncEngine.js';
import { summary } from './storeFixtures.js';

const env = process.env as Record<string, string>;
const { ledger: store, db } = openSqliteLedger({
  path: join(env.DIR!, 'agent.sqlite'),
  site: 'ship-7',
  agent: 'a1',
  maxDocBytes: 4096,
});
const newId = monotonicUlid(Date.now, cryptoRandomBytes);
const engine = new SyncEngine({
  site: 'ship-7',
  agent: 'a1',
  store,
  uplinks: [new HttpUplink({ url: env.HUB!, token: 'agent-token', urlStorage: new SqliteUrlStorage(db) })],
  privateKey: await importPrivateKeyPem(env.AGENT_KEY!),
  hubPublicKey: await importPublicKeyPem(env.HUB_KEY!),
  allowsCell: () => true,
  onPlanRequest: () => {},
  newBundleId: newId,
  now: Date.now,
  log: { info: () => {}, warn: () => {} },
});

const only = env.MODE === 'drain';
for (let i = 0; only ? i < 1 : i < 10_000; i++) {
  if (!only) {
    const id = newId();
    // Every third run repeats its cell's last plan: recorded as an "unchanged" confirmation, not a new run.
    const repeat = i % 3 === 2;
    const planHash = createHash('sha256')
      .update(repeat ? `same-${i % 7}` : id)
      .digest('hex');
    const r = store.record({
      runId: id,
      summary: summary({
        component: `c${i % 7}`,
        planHash: planHash as never,
        status: i % 5 ? 'changes' : 'failed',
      }),
    });
    process.stdout.write(`committed ${id} ${r.unchanged ? 'unchanged' : 'new'}\n`);
  }
  if (only || i % 3 === 0) {
    await engine.pushOnce();
    await engine.pullOnce();
  }
}
if (only) {
  // Drain: push until nothing is owed, pulling acks in between.
  for (let i = 0; i < 50 && store.pending().length > 0; i++) {
    await engine.pushOnce();
    await engine.pullOnce();
  }
  process.stdout.write(`drained ${store.pending().length}\n`);
}
store.close();
