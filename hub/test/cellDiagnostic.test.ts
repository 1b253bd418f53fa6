import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { Queries } from '../src/core/Queries.js';
import { cell, run } from './storeFixtures.js';

describe('a failure tile says more than exit-1', () => {
  it("gives a failed cell its run's first diagnostic summary (real SQLite)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-diag-'));
    const store = new SqliteHubStore(join(dir, 'hub.db'));
    try {
      const r = run('R1', 1000, 'failed');
      r.reason = 'exit-1';
      r.summary = { ...r.summary, reason: 'exit-1', errorExcerpt: '╷\n│ Error: Unsupported argument\n│ \n╵' };
      await store.commit({ runs: [r], cells: [{ ...cell('R1', 1000, 'failed'), reason: 'exit-1' }] });
      const [c] = await new Queries(store, null).matrix({}, 2000);
      expect(c).toMatchObject({
        status: 'failed',
        reason: 'exit-1',
        diagnostic: 'Error: Unsupported argument',
      });
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
