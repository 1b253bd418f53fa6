import { join } from 'node:path';
import * as A from '@automerge/automerge';
import {
  cryptoRandomBytes,
  decodeBundle,
  decodePayload,
  generateSigningKeyPair,
  monotonicUlid,
  type SigningKeyPair,
} from '@driftline/protocol';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { renderStatus } from '../src/commands/status.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { runId, summary, tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

let agentKeys: SigningKeyPair;
beforeAll(async () => {
  agentKeys = await generateSigningKeyPair();
});
const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const RETRY_MS = 300_000;

async function setup() {
  const hub = await TestHub.start(agentKeys.publicKey);
  cleanup.push(() => hub.close());
  const clock = { t: Date.now() };
  const now = () => clock.t;
  const { ledger: store, db } = openSqliteLedger({
    path: join(tempDir(), 'agent.sqlite'),
    site: 'ship-7',
    agent: 'a1',
    rejectedRetryMs: RETRY_MS,
    now,
  });
  cleanup.push(() => store.close());
  const warnings: string[] = [];
  const engine = new SyncEngine({
    site: 'ship-7',
    agent: 'a1',
    store,
    uplinks: [new HttpUplink({ url: hub.url, token: 'agent-token', urlStorage: new SqliteUrlStorage(db) })],
    privateKey: agentKeys.privateKey,
    hubPublicKey: hub.keys.publicKey,
    allowsCell: () => true,
    onPlanRequest: () => {},
    newBundleId: monotonicUlid(now, cryptoRandomBytes),
    now,
    log: { info: () => {}, warn: (_o, m) => warnings.push(m) },
  });
  /** Pushes what is pending; returns the ids of the bundles the upstream receipted. */
  const push = async () => {
    const r = await engine.pushOnce();
    return r.kind === 'pushed' ? r.receipts.map((x) => x.bundleId as string) : r;
  };
  return { hub, store, engine, clock, warnings, push };
}

/** The changes a stored bundle carries, loaded into an empty document: complete only if nothing is missing. */
function loadAlone(bytes: Uint8Array) {
  const d = decodeBundle(bytes);
  if (!d.ok) throw d.error;
  const p = decodePayload('doc-delta', d.value.payload);
  if (!p.ok) throw p.error;
  const doc = A.loadIncremental(A.init(), p.value.changes);
  return { heads: A.getHeads(doc), missing: A.getMissingDeps(doc, []) };
}

describe('a hub rejection on the downlink', () => {
  it('is recorded, holds the push until its retry time, then sends everything the hub has not acknowledged', async () => {
    const { hub, store, engine, clock, push } = await setup();
    store.record({ runId: runId(), summary: summary() });
    const [first] = (await push()) as string[];
    store.record({ runId: runId(), summary: summary({ component: 'dns' }) });
    clock.t += 1_000;
    await push(); // a relay receipted both: nothing would go up again for six hours
    expect(await engine.pushOnce()).toEqual({ kind: 'idle' });

    await hub.queueRejection('unknown-agent', [first!]);
    const pulled = await engine.pullOnce();
    expect(pulled).toMatchObject({ rejections: 1, refused: 0 });
    const [r] = store.status().rejections;
    expect(r).toMatchObject({
      state: 'waiting for enrolment',
      code: 'unknown-agent',
      bundleIds: [first],
      receivedAt: clock.t,
      retryAt: clock.t + RETRY_MS,
    });
    expect(renderStatus(store.status())).toMatch(/hub\s+waiting for enrolment \(unknown-agent\) since/);

    clock.t += RETRY_MS - 1;
    expect(await engine.pushOnce()).toEqual({ kind: 'held', code: 'unknown-agent', retryInMs: 1 });
    clock.t += 1;
    const heads = store.pending()[0]!.heads;
    const resent = (await push()) as string[];
    expect(resent).toHaveLength(1);
    // The resent bundle carries every change since the hub's (empty) ack: both runs, nothing missing.
    const alone = loadAlone(hub.backend.stored.get(resent[0]!)!);
    expect(alone.missing).toEqual([]);
    expect(alone.heads.sort()).toEqual([...heads].sort());
    expect(store.status().unackedRuns).toBe(2); // nothing lost meanwhile

    // Still waiting until the hub acknowledges: then the rejection is outdated and the runs are acked.
    expect(store.status().rejections).toHaveLength(1);
    await hub.processArrivals();
    const acked = await engine.pullOnce();
    expect(acked).toMatchObject({ resumed: true });
    expect(store.status()).toMatchObject({ rejections: [], unackedRuns: 0 });
  });

  it('ignores a rejection not signed by the pinned hub key', async () => {
    const { hub, store, engine, push, warnings } = await setup();
    store.record({ runId: runId(), summary: summary() });
    const [id] = (await push()) as string[];
    const forger = await generateSigningKeyPair();
    await hub.queueRejection('unknown-agent', [id!], { key: forger.privateKey });
    expect(await engine.pullOnce()).toMatchObject({ rejections: 0, refused: 1 });
    expect(warnings.join('\n')).toContain('not signed by the pinned hub key');
    expect(store.status().rejections).toEqual([]);
    expect(await engine.pushOnce()).toEqual({ kind: 'idle' }); // the relay's receipt still counts
  });

  it('ignores a rejection about another agent or one a newer hub ack outdated', async () => {
    const { hub, store, engine, push } = await setup();
    store.record({ runId: runId(), summary: summary() });
    const [id] = (await push()) as string[];
    await hub.queueRejection('unknown-agent', [id!], { agent: 'b2' });
    await hub.processArrivals(); // acked now
    await hub.queueRejection('unknown-agent', [id!], { at: Date.now() - 60_000 }); // delivered late
    const pulled = await engine.pullOnce();
    expect(pulled).toMatchObject({ acks: 1, rejections: 0, refused: 0 });
    expect(store.status()).toMatchObject({ rejections: [], unackedRuns: 0 });
  });

  it('does not count a relay receipt for a bundle built before the rejection arrived', async () => {
    const { hub, store, engine, clock, push } = await setup();
    store.record({ runId: runId(), summary: summary() });
    const [id] = (await push()) as string[];
    const builtAt = clock.t;
    await hub.queueRejection('bad-signature', [id!]);
    clock.t += 10;
    await engine.pullOnce();
    // A push that left before the rejection came in gets its receipt only now.
    store.recordPush({
      bundleId: 'late',
      epoch: 1,
      heads: store.pending()[0]!.heads,
      bytes: 1,
      upstream: hub.url,
      receipt: 'stored',
      blobs: [],
      sentAt: builtAt,
    });
    clock.t += RETRY_MS;
    const again = (await push()) as string[];
    expect(loadAlone(hub.backend.stored.get(again[0]!)!).missing).toEqual([]);
    expect(store.status().rejections).toMatchObject([{ state: 'rejected', code: 'bad-signature' }]);
  });

  it('keeps the rejection and its hold across a restart of the agent', async () => {
    const dir = tempDir();
    const path = join(dir, 'agent.sqlite');
    const t = Date.now();
    const a = openSqliteLedger({ path, site: 'ship-7', agent: 'a1', now: () => t }).ledger;
    a.record({ runId: runId(), summary: summary() });
    expect(
      a.recordRejection({
        type: 'rejection',
        site: 'ship-7' as never,
        agent: 'a1' as never,
        code: 'unknown-agent',
        bundleIds: ['01JC0000000000000000000010' as never],
        count: 1,
        firstAt: t,
        lastAt: t,
      }),
    ).toBe(true);
    a.close();
    const b = openSqliteLedger({
      path,
      site: 'ship-7',
      agent: 'a1',
      rejectedRetryMs: 5_000,
      now: () => t,
    }).ledger;
    cleanup.push(() => b.close());
    expect(b.rejections()).toMatchObject([{ code: 'unknown-agent', retryAt: t + 5_000 }]);
    expect(b.pending()).toHaveLength(1);
  });
});
