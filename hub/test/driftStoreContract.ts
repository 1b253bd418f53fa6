import { describe, expect, it } from 'vitest';
import type { EpisodeRow } from '../src/core/drift/episodes.js';
import type { WaiverRow } from '../src/core/drift/waivers.js';
import { cellKey, type DriftStore } from '../src/ports/DriftStore.js';

export const ep = (n: number, o: Partial<EpisodeRow> = {}): EpisodeRow => ({
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

export const waiver = (o: Partial<WaiverRow> = {}): WaiverRow => ({
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
  ...o,
});

/** One adapter under test: `other` opens a second store on the same storage (another process, another hub). */
export interface DriftStoreSetup {
  store: DriftStore;
  other(): DriftStore | Promise<DriftStore>;
  done(): Promise<void> | void;
}

/** The DriftStore contract (hub/src/ports/DriftStore.ts), run against every adapter. */
export function runDriftStoreContract(name: string, make: () => Promise<DriftStoreSetup> | DriftStoreSetup) {
  describe(`DriftStore contract: ${name}`, () => {
    it('upserts episodes by id, pages newest first, filters, keeps marks monotonic and waivers', async () => {
      const { store, done } = await make();
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
        // Many cells in one read: the same marks and open episodes (oldest first), none for unknown cells.
        const cell = (site: string) => ({ site, environment: 'prod', component: 'net' });
        const state = await store.cellsState([cell('s-1'), cell('s-9'), cell('s-1')]);
        expect([...state.marks]).toEqual([[cellKey(cell('s-1')), 5]]);
        expect([...state.open.keys()]).toEqual([cellKey(cell('s-1'))]);
        expect(state.open.get(cellKey(cell('s-1')))?.map((e) => e.firstRunId)).toEqual(['r1', 'r3']);
        expect(await store.cellsState([])).toEqual({ marks: new Map(), open: new Map() });
        const page1 = await store.list({}, 2);
        expect(page1.map((p) => p.row.firstRunId)).toEqual(['r3', 'r2']);
        const page2 = await store.list({}, 2, page1[1]?.seq);
        expect(page2.map((p) => p.row.firstRunId)).toEqual(['r1']);
        expect((await store.list({ state: 'resolved' }, 10)).map((p) => p.row.resolvedAt)).toEqual([9]);
        expect((await store.list({ site: 's-1', kind: 'drift' }, 10)).length).toBe(2);
        expect((await store.list({ site: 's-1', kind: 'check' }, 10)).length).toBe(0);
        expect((await store.listOpen()).length).toBe(2);
        expect(await store.get(ep(2).id)).toEqual(ep(2, { state: 'resolved', resolvedAt: 9 }));
        expect(await store.get('nope')).toBeNull();
        const w = waiver();
        await store.putWaiver(w);
        await store.putWaiver({ ...w, removedAt: 2, removedBy: 'b' });
        expect(await store.listWaivers()).toEqual([{ ...w, removedAt: 2, removedBy: 'b' }]);
        expect(await store.getWaiver('w-2')).toBeNull();
      } finally {
        await done();
      }
    });

    it('moves its stamp on every write, its own or another store’s on the same storage, and not on reads', async () => {
      const { store, other, done } = await make();
      try {
        const second = await other();
        const s0 = await store.stamp();
        await store.listOpen();
        expect(await store.stamp()).toBe(s0);
        await second.putWaiver(waiver({ id: 'w-2' }));
        const s1 = await store.stamp();
        expect(s1).not.toBe(s0);
        expect((await store.listWaivers()).map((w) => w.id)).toEqual(['w-2']);
        await second.record({ episodes: [ep(4)], marks: [] });
        const s2 = await store.stamp();
        expect(s2).not.toBe(s1);
        expect((await store.listOpen()).map((e) => e.id)).toEqual([ep(4).id]);
        await store.putWaiver(waiver({ id: 'w-3' }));
        expect(await store.stamp()).not.toBe(s2);
        if (second !== store) await second.close();
      } finally {
        await done();
      }
    });
  });
}
