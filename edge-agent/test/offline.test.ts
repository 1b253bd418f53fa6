import { createHash } from 'node:crypto';
import { join } from 'node:path';
import * as A from '@automerge/automerge';
import { cryptoRandomBytes, encodeUlid, generateSigningKeyPair, plainAgentDoc } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { summary, tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

let hub: TestHub;
afterAll(() => hub?.close());

describe('weeks without a link (synthetic time)', () => {
  it('keeps the queue within its bound while offline and drains it completely when the link returns', {
    timeout: 180_000,
  }, async () => {
    const agentKeys = await generateSigningKeyPair();
    hub = await TestHub.start(agentKeys.publicKey);
    let now = Date.parse('2026-10-01T00:00:00Z');
    const maxQueueBytes = 256 * 1024;
    const { ledger: store, db } = openSqliteLedger({
      path: join(tempDir(), 'agent.sqlite'),
      site: 'ship-7',
      agent: 'a1',
      maxDocBytes: 8 * 1024,
      maxQueueBytes,
      now: () => now,
    });
    const engine = new SyncEngine({
      site: 'ship-7',
      agent: 'a1',
      store,
      uplinks: [
        new HttpUplink({
          url: 'http://127.0.0.1:9',
          token: 'agent-token',
          urlStorage: new SqliteUrlStorage(db),
        }),
      ],
      privateKey: agentKeys.privateKey,
      hubPublicKey: hub.keys.publicKey,
      allowsCell: () => true,
      onPlanRequest: () => {},
      newBundleId: () => encodeUlid(now, cryptoRandomBytes(10)),
      now: () => now,
      log: { info: () => {}, warn: () => {} },
    });

    // 14 days, 3 cells planned every 2 hours; the link is down the whole time.
    const days = 14;
    let peak = 0;
    let recorded = 0;
    let failures = 0;
    for (let h = 0; h < days * 24; h += 2) {
      now += 2 * 3600_000;
      for (const cell of ['network', 'dns', 'database']) {
        // Mostly the same plan as before; a real change every ~9 hours; a failure now and then.
        const variant = Math.floor(h / 9);
        const failed = h % 50 === 0 && cell === 'dns';
        const detail = new TextEncoder().encode(`detail ${cell} ${variant} `.repeat(200) + h);
        const sha = createHash('sha256').update(detail).digest('hex');
        store.record({
          runId: encodeUlid(now, cryptoRandomBytes(10)),
          summary: summary({
            component: cell,
            status: failed ? 'failed' : variant % 3 ? 'changes' : 'clean',
            reason: failed ? 'exit-1' : undefined,
            planHash: failed
              ? undefined
              : (createHash('sha256').update(`${cell}${variant}`).digest('hex') as never),
            finishedAt: new Date(now).toISOString(),
          }),
          detail: failed ? undefined : { sha256: sha, bytes: detail, contentType: 'text/plain' },
        });
        recorded++;
        if (failed) failures++;
      }
      if (h % 12 === 0) expect((await engine.pushOnce()).kind).toBe('unreachable'); // a probe, nothing else
      peak = Math.max(peak, store.status().queueBytes);
    }
    const offline = store.status();
    expect(offline.unackedRuns).toBe(recorded); // every result kept
    expect(peak).toBeLessThanOrEqual(maxQueueBytes + 64 * 1024); // within the bound (one run of slack)
    expect(offline.boundInForce).toBe(true);
    expect(offline.dropped.blobs).toBeGreaterThan(0);
    expect(offline.epoch).toBeGreaterThan(1); // epochs sealed along the way (C1)

    // The link returns: the agent pushes everything, the hub acks, the agent prunes.
    const live = new SyncEngine({
      ...(engine as unknown as { deps: ConstructorParameters<typeof SyncEngine>[0] }).deps,
      uplinks: [new HttpUplink({ url: hub.url, token: 'agent-token', urlStorage: new SqliteUrlStorage(db) })],
    });
    for (let round = 0; round < 10 && store.status().unackedRuns > 0; round++) {
      await live.pushOnce();
      await hub.processArrivals();
      await live.pullOnce();
      await live.uploadBlobsOnce();
    }
    const after = store.status();
    expect(after.unackedRuns).toBe(0);
    expect(store.pending()).toEqual([]);
    const pruned = store.storage.epochs('all').filter((e) => e.prunedAt !== null).length;
    expect(pruned).toBe(offline.epoch - 1); // every sealed epoch deleted locally after the hub held it

    // The hub holds every failure record, and the latest result of every cell.
    const latest = [...hub.replicas.entries()]
      .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }))
      .at(-1)![1];
    const doc = plainAgentDoc(A.toJS(latest)) as { cells: Record<string, unknown> };
    expect(Object.keys(doc.cells).sort()).toEqual(['prod/database', 'prod/dns', 'prod/network']);
    let failedAtHub = 0;
    for (const r of hub.replicas.values()) {
      const d = plainAgentDoc(A.toJS(r)) as { runs: Record<string, { summary: { status: string } }> };
      failedAtHub += Object.values(d.runs).filter((x) => x.summary.status === 'failed').length;
    }
    expect(failedAtHub).toBe(failures);
    store.close();
  });
});
