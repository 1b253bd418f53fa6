import { join } from 'node:path';
import {
  type ApprovalClaims,
  cryptoRandomBytes,
  encodeUlid,
  generateSigningKeyPair,
  monotonicUlid,
  type SigningKeyPair,
  signApproval,
} from '@driftline/protocol';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { laterCursor } from '../src/core/sync/downlinkAnswers.js';
import { type ApprovalPayload, SyncEngine } from '../src/core/sync/SyncEngine.js';
import { tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

/**
 * Two pulls of one upstream in flight at once (docs/decisions/340-no-gap-between-held-pulls.md): both may
 * carry the same bundles, and the one answered last may have been sent after an older cursor.
 */
let agentKeys: SigningKeyPair;
beforeAll(async () => {
  agentKeys = await generateSigningKeyPair();
});
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup() {
  const hub = await TestHub.start(agentKeys.publicKey);
  cleanup.push(() => hub.close());
  const { ledger: store, db } = openSqliteLedger({
    path: join(tempDir(), 'agent.sqlite'),
    site: 'ship-7',
    agent: 'a1',
  });
  cleanup.push(() => store.close());
  const approvals: ApprovalPayload[] = [];
  const up = new HttpUplink({ url: hub.url, token: 'agent-token', urlStorage: new SqliteUrlStorage(db) });
  const engine = new SyncEngine({
    site: 'ship-7',
    agent: 'a1',
    store,
    uplinks: [up],
    privateKey: agentKeys.privateKey,
    hubPublicKey: hub.keys.publicKey,
    allowsCell: () => true,
    onPlanRequest: () => {},
    onApproval: async (a) => {
      approvals.push(a);
    },
    newBundleId: monotonicUlid(Date.now, cryptoRandomBytes),
    now: Date.now,
    log: { info: () => {}, warn: () => {} },
  });
  return { hub, store, engine, approvals, url: up.url };
}

async function approval(): Promise<unknown> {
  const approver = await generateSigningKeyPair();
  const now = Date.now();
  const claims = {
    v: 1,
    approvalId: encodeUlid(now, cryptoRandomBytes(10)),
    site: 'ship-7',
    environment: 'prod',
    component: 'network',
    ref: 'main',
    commit: 'c'.repeat(40),
    runId: encodeUlid(now, cryptoRandomBytes(10)),
    planFileSha256: '0'.repeat(64),
    approvedAt: now,
    expiresAt: now + 3600_000,
  } as unknown as ApprovalClaims;
  return signApproval(claims, approver.privateKey, approver.publicKey);
}

describe('two answers of one upstream in flight at once', () => {
  it('hands a bundle that both carry to its handler once, and keeps the later cursor', async () => {
    const { hub, store, engine, approvals, url } = await setup();
    await hub.queueApproval(await approval());
    const [a, b] = await Promise.all([engine.pullOnce(), engine.pullOnce()]);
    expect(a.errors).toEqual([]);
    expect(b.errors).toEqual([]);
    expect(approvals).toHaveLength(1);
    expect(a.approvals + b.approvals).toBe(1);
    const cursor = store.downlinkCursor(url);
    expect(cursor).toBeDefined();
    expect((await engine.pullOnce()).approvals).toBe(0);
    expect(store.downlinkCursor(url)).toBe(cursor);
  });

  it('never moves the cursor back for an answer to a pull sent after an older one', () => {
    expect(laterCursor('7', '7', '9', 2)).toBe('9'); // the usual case: sent after what is held
    expect(laterCursor('9', '7', '7', 0)).toBe('9'); // an empty answer to an older pull (superseded)
    expect(laterCursor('9', '7', '8', 1)).toBe('9'); // a shorter page of an older pull
    expect(laterCursor('9', '7', '12', 3)).toBe('12'); // a longer one
    expect(laterCursor(undefined, undefined, '3', 1)).toBe('3');
  });
});
