import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { Queries } from '../src/core/Queries.js';
import { cell } from './storeFixtures.js';

const T0 = Date.parse('2026-11-29T00:00:00Z');
const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0)) await f();
});

describe('/api/fleet reads each attention kind once', () => {
  it('serves the attention list and the grouping from one read per kind', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hub-attention-'));
    const store = new SqliteHubStore(join(dir, 'hub.db'));
    cleanup.push(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });
    await store.commit({
      sites: [{ site: 'ship-7', lastContactAt: T0, upstream: null, unreachableNotifiedFor: null }],
      cells: [
        { ...cell('R1', T0, 'drift'), component: 'dns' },
        { ...cell('R2', T0, 'drift'), component: 'net' },
        { ...cell('R3', T0, 'failed'), component: 'ntp', reason: 'boom' },
      ],
    });
    const read = vi.spyOn(store, 'attentionCells');
    const fleet = await new Queries(store, 120).fleet.fleet(T0 + 1000, 200);
    expect(fleet.attention.map((a) => `${a.kind} ${a.component}`).sort()).toEqual([
      'drift dns',
      'drift net',
      'failed ntp',
    ]);
    expect(fleet.attentionCounts).toMatchObject({ drift: 2, failed: 1 });
    const kinds = read.mock.calls.map(([q]) => q.kind);
    expect(kinds).toContain('drift');
    expect(kinds).toEqual([...new Set(kinds)]);
  });
});
