import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as A from '@automerge/automerge';
import { AgentDocSchema, plainAgentDoc } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { openAgentDatabase } from '../src/adapters/sqlite/openDatabase.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteAgentStorage } from '../src/adapters/sqlite/SqliteAgentStorage.js';
import { AgentLedger } from '../src/core/ledger/AgentLedger.js';
import { sqliteLedger } from './agentStorageFixtures.js';
import { detail, runId, summary, tempDir } from './helpers/storeFixtures.js';

/** The ledger over its SQLite file: what survives a reopen, what a file refuses, what a commit costs. */
describe('AgentLedger on SQLite', () => {
  it('keeps every recorded run across a reopen, with the document rebuilt from its chunks', () => {
    const dir = tempDir();
    const { ledger: s } = sqliteLedger(dir);
    const ids = [runId(), runId(), runId()];
    for (const [i, id] of ids.entries())
      s.record({
        runId: id,
        summary: summary({ component: `c${i}`, planHash: String(i).repeat(64) as never }),
      });
    s.close();
    const { ledger: again } = sqliteLedger(dir);
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(again.loadEpoch(1))));
    expect(Object.keys(doc.runs).sort()).toEqual([...ids].sort());
    expect(again.status().unackedRuns).toBe(3);
  });

  it('lets two processes open one fresh store at once: one starts epoch 1, the other records into it', () => {
    const dir = tempDir();
    const path = join(dir, 'agent.sqlite');
    const first = runId();
    // Both found no epoch; before the daemon writes one, the other process starts it and records.
    class Interleaved extends SqliteAgentStorage {
      override commitFirst(writes: Parameters<SqliteAgentStorage['commitFirst']>[0]): boolean {
        const other = sqliteLedger(dir).ledger;
        other.record({ runId: first, summary: summary({ component: 'web' }) });
        other.close();
        return super.commitFirst(writes);
      }
    }
    const daemon = new AgentLedger(new Interleaved(openAgentDatabase(path), path), {
      site: 'ship-7',
      agent: 'a1',
    });
    const id = runId();
    daemon.record({ runId: id, summary: summary({ component: 'db' }) });
    daemon.close();
    const { ledger: again } = sqliteLedger(dir);
    expect(again.storage.chunks(1)).toHaveLength(3); // one snapshot, two changes
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(again.loadEpoch(again.status().epoch))));
    expect(Object.keys(doc.runs).sort()).toEqual([first, id].sort());
  });

  it('refuses a corrupt store file with a message that says what to do, and a store of another agent', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'agent.sqlite'), 'this is not sqlite '.repeat(100));
    expect(() => sqliteLedger(dir)).toThrow(/corrupt or not a Driftline store; move it aside/);
    const other = tempDir();
    sqliteLedger(other).ledger.close();
    expect(() =>
      openSqliteLedger({ path: join(other, 'agent.sqlite'), site: 'ship-8', agent: 'a1' }),
    ).toThrow(/belongs to ship-7\/a1/);
  });

  it('records a batch in one transaction and one document change, and keeps all of it across a reopen', () => {
    const dir = tempDir();
    const { ledger: s, storage } = sqliteLedger(dir);
    // Loading it starts a fresh store's first epoch (the ledger opens its document at the first use).
    const changesBefore = A.getBackend(s.loadEpoch(1)).stats().numChanges;
    const commits = s.stats().commits;
    const chunksBefore = storage.chunkCount(1);
    const batch = Array.from({ length: 200 }, (_, i) => ({
      runId: runId(),
      summary: summary({ component: `c${i}`, planHash: i.toString(16).padStart(64, '0') as never }),
      detail: detail(`d${i}x`),
    }));
    const results = s.recordMany(batch);
    expect(results).toHaveLength(200);
    expect(s.stats().commits - commits).toBe(1);
    expect(storage.chunkCount(1) - chunksBefore).toBe(1);
    s.close();
    const { ledger: again } = sqliteLedger(dir);
    const doc = again.loadEpoch(1);
    expect(A.getBackend(doc).stats().numChanges - changesBefore).toBe(1);
    const plain = AgentDocSchema.parse(plainAgentDoc(A.toJS(doc)));
    expect(Object.keys(plain.runs).sort()).toEqual(batch.map((b) => b.runId).sort());
    expect(again.status().unackedRuns).toBe(200);
    expect(again.status().blobsPending).toBe(200);
  });

  it('keeps acks, pruning and the queue bound’s drops across a reopen', () => {
    const dir = tempDir();
    const { ledger: s } = sqliteLedger(dir, { maxDocChanges: 5, maxDocBytes: 1 << 30, maxQueueBytes: 3000 });
    for (let i = 0; i < 6; i++)
      s.record({
        runId: runId(),
        summary: summary({
          component: `c${i}`,
          status: 'clean',
          planHash: i.toString(16).padStart(64, '0') as never,
        }),
        detail: detail(`${i}e`, 800),
      });
    const sealed = s.pending().find((p) => p.sealed)!;
    expect(
      s.applyAck({ agent: 'a1', doc: sealed.docId, heads: sealed.heads, blobs: [], committedAt: 0 } as never),
    ).toMatchObject({ runsAcked: 5, epochsPruned: [1] });
    const before = s.status();
    s.close();
    const { ledger: again } = sqliteLedger(dir, { maxQueueBytes: 3000 });
    const after = again.status();
    expect(after).toMatchObject({
      epoch: 2,
      unackedRuns: 1,
      dropped: before.dropped,
      queueBytes: before.queueBytes,
    });
    expect(after.dropped.blobs).toBeGreaterThan(0);
    expect(again.pending().map((p) => p.epoch)).toEqual([2]);
  });

  it('bounds its SQLite page cache (better-sqlite3 defaults to 16 MB per connection)', () => {
    expect(sqliteLedger().db.pragma('cache_size', { simple: true })).toBe(-4096);
    expect(sqliteLedger(tempDir(), { cacheKiB: 1024 }).db.pragma('cache_size', { simple: true })).toBe(-1024);
  });
});
