import {
  FleetResponseSchema,
  type FleetSiteInput,
  type MatrixCell,
  MatrixResponseSchema,
  SitesResponseSchema,
  summariseFleet,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { Queries } from '../src/core/Queries.js';
import type { AgentRow, CellRow } from '../src/ports/HubStore.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

const agent = (site: string, cadenceS: Record<string, number>, lastContactAt: number | null): AgentRow => ({
  site,
  agent: 'a1',
  publicKey: 'ed25519:x',
  enrolledAt: 1,
  revokedAt: null,
  version: '0.1.0',
  lastContactAt,
  queueDepth: 2,
  oldestUnsentAt: null,
  clockOffsetMs: 0,
  offsetSampledAt: null,
  upstream: null,
  cadenceS,
  contactIntervalS: 600,
  contactWindows: [],
});

/**
 * 24 sites × up to 12 cells with every status, drift in `changes`, a stuck lock, stale plans, cells
 * declared but not planned, a silent site and one enrolled but never heard from: committed to the store
 * as ingest would, so the read model's answers can be checked against the cells themselves.
 */
async function fleetFixture(h: TestHub) {
  const now = h.clock.now();
  const statuses: CellRow['status'][] = ['clean', 'changes', 'drift', 'failed', 'blocked', 'locked'];
  for (let s = 0; s < 24; s++) {
    const site = `site-${String(s).padStart(2, '0')}`;
    const cadenceS: Record<string, number> = {};
    const cells: CellRow[] = [];
    for (let c = 0; c < 12; c++) {
      const environment = ['prod', 'staging', 'dev'][c % 3] as string;
      const component = `comp-${Math.floor(c / 3)}`;
      cadenceS[`${environment}/${component}`] = 3600;
      // The last two declared cells of every third site are not planned yet (no-data).
      if (s % 3 === 0 && c >= 10) continue;
      const status = statuses[(s * 5 + c * 7) % statuses.length] as CellRow['status'];
      const old = (s + c) % 5 === 0;
      cells.push({
        site,
        environment,
        component,
        agent: 'a1',
        status,
        counts:
          status === 'changes' && c % 2 === 0
            ? { add: 1, change: 0, destroy: 0, replace: 0, import: 0, drift: 1 }
            : null,
        reason: status === 'failed' && c === 3 ? 'stuck-lock' : status === 'failed' ? 'exit-1' : null,
        runId: `01JD${String(s).padStart(3, '0')}${String(c).padStart(3, '0')}`.padEnd(26, '0'),
        plannedAt: now - (old ? 3 * 3600_000 : 60_000) - s * 1000 - c,
        receivedAt: now - 30_000,
        expectedIntervalS: 3600,
        planHash: null,
        staleNotifiedFor: null,
      });
    }
    const lastContactAt = s === 7 ? now - 3 * 3600_000 : now - 30_000;
    await h.hub.store.commit({
      cells,
      agents: [agent(site, cadenceS, lastContactAt)],
      sites: [{ site, lastContactAt, upstream: 'relay-1', unreachableNotifiedFor: null }],
    });
  }
  await h.hub.store.commit({ agents: [agent('site-never', {}, null)] });
  // Time passes a little: the sweeper moves the stale flags of the cells whose deadline passed.
  await h.hub.sweeper.sweep();
}

describe('fleet views from the read model', () => {
  it('answer /api/fleet with the counts, attention and sites the cells themselves give', async () => {
    const h = await startHub();
    hubs.push(h);
    await fleetFixture(h);
    const viewer = await addTestUser(h.hub.store, 'wall', ['viewer']);
    const res = await fetch(`${h.url}/api/fleet`, { headers: { authorization: viewer.authorization } });
    expect(res.status).toBe(200);
    const got = FleetResponseSchema.parse(await res.json());

    // The same summary computed the old way, from every cell of the matrix.
    const now = h.clock.now();
    const queries = new Queries(h.hub.store, null);
    const cells = await queries.matrix({}, now);
    const agents = await h.hub.store.listAgents();
    const input: FleetSiteInput[] = (await queries.sites(now)).map((s) => {
      const a = agents.filter((x) => x.site === s.site);
      return { ...s, agents: a.length, agentsHeardFrom: a.filter((x) => x.lastContactAt !== null).length };
    });
    const want = summariseFleet(cells, input, new Date(now).toISOString(), 200);

    expect(got.totals).toEqual(want.totals);
    expect(got.totals.stale).toBeGreaterThan(0);
    expect(got.totals.statusCounts['no-data']).toBe(16);
    expect(got.totals.unreachableSites).toBe(1);
    expect(got.environments).toEqual(want.environments);
    expect(got.components).toEqual(want.components);
    expect(got.attentionCounts).toEqual(want.attentionCounts);
    const pick = (s: (typeof want.sites)[number]) => [
      s.site,
      s.cells,
      s.statusCounts,
      s.stale,
      s.link,
      s.environments,
    ];
    expect(got.sites.map(pick)).toEqual(want.sites.map(pick));
    const item = (a: (typeof want.attention)[number]) =>
      `${a.kind} ${a.site} ${a.environment}/${a.component}`;
    expect(got.attention.map(item)).toEqual(want.attention.map(item));
    expect(got.silentSites).toEqual(want.silentSites);
  });

  it('pages /api/sites on the server: sorted, bounded, with a cursor and the total', async () => {
    const h = await startHub();
    hubs.push(h);
    await fleetFixture(h);
    const viewer = await addTestUser(h.hub.store, 'wall', ['viewer']);
    const get = async (query: string) => {
      const res = await fetch(`${h.url}/api/sites${query}`, {
        headers: { authorization: viewer.authorization },
      });
      expect(res.status).toBe(200);
      return SitesResponseSchema.parse(await res.json());
    };
    const seen: string[] = [];
    let page = await get('?limit=10');
    expect(page.total).toBe(26);
    for (let i = 0; i < 5 && page; i++) {
      seen.push(...page.sites.map((s) => s.site));
      if (!page.next) break;
      page = await get(`?limit=10&cursor=${page.next}`);
    }
    expect(seen).toEqual(
      [
        'ship-7',
        ...Array.from({ length: 24 }, (_, i) => `site-${String(i).padStart(2, '0')}`),
        'site-never',
      ].sort(),
    );
    // Counts of a page agree with the fleet view's, no-data included.
    const first = (await get('?limit=1&contains=site-00')).sites[0];
    expect(first?.cells).toBe(12);
    expect(first?.statusCounts['no-data']).toBe(2);
    // The site with most failed, drifted or stale cells first; the silent one last by last contact.
    const worst = (await get('?sort=problems&limit=1')).sites[0]?.site;
    const fleet = FleetResponseSchema.parse(
      await (await fetch(`${h.url}/api/fleet`, { headers: { authorization: viewer.authorization } })).json(),
    );
    const problems = (s: (typeof fleet.sites)[number]) =>
      (s.statusCounts.failed ?? 0) + (s.statusCounts.drift ?? 0);
    expect(fleet.sites.find((s) => s.site === worst)).toBeDefined();
    expect((await get('?sort=lastContact&limit=1')).sites[0]?.site).toBe('site-07');
    expect(problems(fleet.sites.find((s) => s.site === worst) as never)).toBeGreaterThan(0);
    expect(
      (await fetch(`${h.url}/api/sites?limit=501`, { headers: { authorization: viewer.authorization } }))
        .status,
    ).toBe(400);
  });

  it('answers /api/matrix windows and filters from the index, paged with a cursor, as the whole matrix filtered', async () => {
    const h = await startHub();
    hubs.push(h);
    await fleetFixture(h);
    h.clock.advance(1000);
    const viewer = await addTestUser(h.hub.store, 'wall', ['viewer']);
    const get = async (query: string) => {
      const res = await fetch(`${h.url}/api/matrix${query}`, {
        headers: { authorization: viewer.authorization },
      });
      expect(res.status).toBe(200);
      return MatrixResponseSchema.parse(await res.json());
    };
    const all = async (query: string, limit: number) => {
      const out: MatrixCell[] = [];
      let page = await get(`${query}&limit=${limit}`);
      for (let i = 0; i < 200; i++) {
        out.push(...page.cells);
        if (!page.next) return out;
        page = await get(`${query}&limit=${limit}&cursor=${page.next}`);
      }
      throw new Error('more than 200 pages');
    };
    const whole = await new Queries(h.hub.store, null).matrix({}, h.clock.now());
    const key = (c: MatrixCell) =>
      `${c.site}/${c.environment}/${c.component} ${c.status}${c.stale ? ' stale' : ''}`;
    const sorted = (cs: MatrixCell[]) => cs.map(key).sort();
    expect(whole.length).toBe(24 * 12 + 1);
    expect(sorted(await all('?', 37))).toEqual(sorted(whole));
    const drift = whole.filter((c) => c.status === 'drift');
    expect(drift.length).toBeGreaterThan(10);
    expect((await all('?status=drift', 7)).map(key)).toEqual(drift.map(key).sort());
    expect(sorted(await all('?stale=true', 5))).toEqual(sorted(whole.filter((c) => c.stale)));
    expect(sorted(await all('?status=no-data', 5))).toEqual(
      sorted(whole.filter((c) => c.status === 'no-data')),
    );
    // A window: two sites' rows × one environment's columns, no-data cells included.
    const window = await get('?sites=site-00,site-04&environment=dev');
    expect(window.next).toBeNull();
    expect(window.cells.map(key)).toEqual(
      whole
        .filter((c) => ['site-00', 'site-04'].includes(c.site) && c.environment === 'dev')
        .map(key)
        .sort(),
    );
    expect(window.cells.some((c) => c.status === 'no-data')).toBe(true);
    const bad = await fetch(`${h.url}/api/matrix?limit=5001`, {
      headers: { authorization: viewer.authorization },
    });
    expect(bad.status).toBe(400);
  });
});
