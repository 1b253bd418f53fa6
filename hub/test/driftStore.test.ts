import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryDriftStore } from '../src/adapters/memory/MemoryDriftStore.js';
import { SqliteDriftStore } from '../src/adapters/sqlite/SqliteDriftStore.js';
import type { EpisodeRow } from '../src/core/drift/episodes.js';
import type { DriftStore } from '../src/ports/DriftStore.js';

const ep = (n: number, o: Partial<EpisodeRow> = {}): EpisodeRow => ({
  id: `drift|s-${n}|prod|net|a.b|r${n}`,
  kind: 'drift',
  site: `s-${n}`,
  environment: 'prod',
  component: 'net',
  address: 'a.b',
  type: 'a',
  attributes: ['x'],
  signature: 'drift a a.b {x}',
  state: 'open',
  firstSeen: n,
  lastSeen: n,
  resolvedAt: null,
  firstRunId: `r${n}`,
  lastRunId: `r${n}`,
  acknowledgedBy: null,
  acknowledgedAt: null,
  ...o,
});

/** The DriftStore contract, run against every adapter. */
function contract(name: string, make: () => { store: DriftStore; done(): void }) {
  describe(`DriftStore contract: ${name}`, () => {
    it('upserts episodes by id, pages newest first, filters, keeps marks monotonic and waivers', async () => {
      const { store, done } = make();
      try {
        await store.record({
          episodes: [ep(1), ep(2), ep(3, { site: 's-1' })],
          marks: [{ site: 's-1', environment: 'prod', component: 'net', plannedAt: 5 }],
        });
        await store.record({
          episodes: [ep(2, { state: 'resolved', resolvedAt: 9 })],
          marks: [{ site: 's-1', environment: 'prod', component: 'net', plannedAt: 4 }],
        });
        expect(await store.markOf('s-1', 'prod', 'net')).toBe(5);
        expect(await store.markOf('s-9', 'prod', 'net')).toBeNull();
        expect((await store.openOf('s-1', 'prod', 'net')).map((e) => e.firstRunId).sort()).toEqual([
          'r1',
          'r3',
        ]);
        const page1 = await store.list({}, 2);
        expect(page1.map((p) => p.row.firstRunId)).toEqual(['r3', 'r2']);
        const page2 = await store.list({}, 2, page1[1]?.seq);
        expect(page2.map((p) => p.row.firstRunId)).toEqual(['r1']);
        expect((await store.list({ state: 'resolved' }, 10)).map((p) => p.row.resolvedAt)).toEqual([9]);
        expect((await store.list({ site: 's-1', kind: 'drift' }, 10)).length).toBe(2);
        expect((await store.listOpen()).length).toBe(2);
        expect(await store.get(ep(2).id)).toMatchObject({ state: 'resolved' });
        const w = {
          id: 'w-1',
          pattern: '*',
          attributes: null,
          sites: [],
          environments: [],
          components: [],
          expiresAt: 10,
          reason: 'r',
          author: 'a',
          createdAt: 1,
          removedAt: null,
          removedBy: null,
        };
        await store.putWaiver(w);
        await store.putWaiver({ ...w, removedAt: 2, removedBy: 'b' });
        expect(await store.listWaivers()).toEqual([{ ...w, removedAt: 2, removedBy: 'b' }]);
        expect(await store.getWaiver('w-2')).toBeNull();
      } finally {
        done();
      }
    });
  });
}

contract('memory', () => ({ store: new MemoryDriftStore(), done: () => {} }));
contract('sqlite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'drift-store-'));
  const store = new SqliteDriftStore(join(dir, 'drift.db'));
  return {
    store,
    done: () => {
      void store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
