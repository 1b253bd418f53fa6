import { FleetResponseSchema } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRow, CellRow } from '../src/ports/HubStore.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});

const SITES = 1005;
const CELLS = 12;
const site = (i: number) => `site-${String(i).padStart(4, '0')}`;

function agent(name: string, cadenceS: Record<string, number>, lastContactAt: number): AgentRow {
  return {
    site: name,
    agent: 'a1',
    publicKey: 'ed25519:x',
    enrolledAt: 1,
    revokedAt: null,
    version: '0.1.0',
    lastContactAt,
    queueDepth: 0,
    oldestUnsentAt: null,
    clockOffsetMs: 0,
    offsetSampledAt: null,
    upstream: null,
    cadenceS,
    contactIntervalS: 600,
    contactWindows: [],
  };
}

/**
 * 1,005 sites × 12 cells, committed as ingest would: every site has one cell `failed: exit-1` and the
 * first 17 a second (1,022 in all), every site three drifted cells (3,015: past the cap of cells read one
 * by one, so grouped from the counts), two sites behind relay-9 which has been silent for 6 minutes, and
 * relay-8 forwarding for a site its token does not act for.
 */
async function fleet(h: TestHub) {
  const now = h.clock.now();
  for (let from = 0; from < SITES; from += 100) {
    const cells: CellRow[] = [];
    const agents: AgentRow[] = [];
    const sites = [];
    for (let s = from; s < Math.min(SITES, from + 100); s++) {
      const cadenceS: Record<string, number> = {};
      for (let c = 0; c < CELLS; c++) {
        const environment = ['prod', 'staging', 'dev', 'qa'][c % 4] as string;
        const component = `comp-${Math.floor(c / 4)}`;
        cadenceS[`${environment}/${component}`] = 3600;
        const failed = c === 0 || (c === 1 && s < 17);
        const status: CellRow['status'] = failed ? 'failed' : c >= 9 ? 'drift' : 'clean';
        cells.push({
          site: site(s),
          environment,
          component,
          agent: 'a1',
          status,
          counts: null,
          reason: failed ? 'exit-1' : null,
          runId: `01JD${String(s).padStart(4, '0')}${String(c).padStart(3, '0')}`.padEnd(26, '0'),
          plannedAt: now - 60_000 - c,
          receivedAt: now - 30_000,
          expectedIntervalS: 3600,
          planHash: null,
          staleNotifiedFor: null,
        });
      }
      agents.push(agent(site(s), cadenceS, now - 30_000));
      sites.push({
        site: site(s),
        lastContactAt: now - 30_000,
        upstream: s < 2 ? 'relay-9' : 'direct',
        unreachableNotifiedFor: null,
      });
    }
    await h.hub.store.commit({ cells, agents, sites });
  }
  const peer = (tokenSha256: string, name: string, sites: string[]) => ({
    tokenSha256,
    name,
    sites,
    createdAt: 1,
    lastUsedAt: null,
    revokedAt: null,
  });
  const status = (sitesRefused: string[], at: number) => ({
    at,
    version: '0.1.0',
    custody: { bundles: 0, bytes: 0, oldestAt: null },
    upstreamRefusals: {},
    sitesRefused,
    sites: [],
    upstreams: [],
  });
  await h.hub.store.commit({
    peers: [peer('t1', 'relay-9', [site(0), site(1)]), peer('t2', 'relay-8', [site(2)])],
  });
  await h.hub.store.commit({
    peerStatuses: [
      { tokenSha256: 't1', status: status([], now - 6 * 60_000), at: now - 6 * 60_000 },
      { tokenSha256: 't2', status: status([site(1004)], now), at: now },
    ],
  });
}

describe("the overview's attention list, grouped by cause (issue 44)", () => {
  it('answers a fleet of 1,005 sites with one row per cause, at most 30, relay problems counted', async () => {
    const h = await startHub();
    hubs.push(h);
    await fleet(h);
    const viewer = await addTestUser(h.hub.store, 'wall', ['viewer']);
    const res = await fetch(`${h.url}/api/fleet`, { headers: { authorization: viewer.authorization } });
    expect(res.status).toBe(200);
    const got = FleetResponseSchema.parse(await res.json());
    const groups = got.attentionGroups;
    if (!groups) throw new Error('no attentionGroups in /api/fleet');
    const texts = groups.rows.map((r) => r.text);
    expect(groups.rows.length).toBeLessThanOrEqual(30);
    expect(texts).toEqual([
      'relay-9 silent for 6 min: 2 sites behind it',
      'site-1004 refused at relay-8: its token does not act for the site',
      '3,015 cells drift at 1,005 sites',
      '1,022 cells failed: exit-1 at 1,005 sites',
    ]);
    expect(groups.rows[0]?.filter).toEqual({ view: 'links', relay: 'relay-9' });
    expect(groups.rows[3]?.filter).toEqual({ view: 'matrix', status: 'failed', reason: 'exit-1' });
    expect(groups.counts).toEqual({
      silentRelays: 1,
      refusedSites: 1,
      custodyUpstreams: 0,
      overdueSites: 0,
      cells: 4037,
    });
    expect(groups.more).toBe(0);
    // The per-kind totals agree with the groups built from them.
    expect(got.attentionCounts.failed).toBe(1022);
    expect(got.attentionCounts.drift).toBe(3015);
  });
});
