import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { summariseFleet } from '@driftline/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryWebhookSender } from '../src/adapters/memory/MemoryWebhookSender.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { parseConfig } from '../src/config.js';
import { contactPlanSettings } from '../src/configContact.js';
import { ContactPlans } from '../src/core/contact/ContactPlans.js';
import { Queries } from '../src/core/Queries.js';
import { Sweeper } from '../src/core/Sweeper.js';
import type { AgentRow } from '../src/ports/HubStore.js';
import { cell } from './storeFixtures.js';

const T0 = Date.parse('2026-11-27T00:00:00Z');
const S = 1000;
const MIN = 60 * S;
const POLAR = 'every 4m for 40s from 2026-11-27T00:00:00Z';

function agent(site: string, contactWindows: string[]): AgentRow {
  return {
    site,
    agent: 'a1',
    publicKey: 'ed25519:x',
    enrolledAt: 1,
    revokedAt: null,
    version: null,
    lastContactAt: null,
    queueDepth: null,
    oldestUnsentAt: null,
    clockOffsetMs: null,
    offsetSampledAt: null,
    upstream: null,
    cadenceS: { 'prod/net': 40 },
    contactIntervalS: 120,
    contactWindows,
  };
}

describe('silence judged against the contact plan (real SQLite)', () => {
  let dir: string;
  let store: SqliteHubStore;
  const settings = (sites: Record<string, string[]> = {}) =>
    contactPlanSettings({
      graceS: 30,
      unreachableAfterMissed: 3,
      learnSilenceS: 60,
      minConfidence: 0.6,
      sites,
    });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hub-contact-'));
    store = new SqliteHubStore(join(dir, 'hub.db'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function heardAt(site: string, windows: string[], at: number, hubWindows?: string[]) {
    const c = { ...cell('R1', at), site, expectedIntervalS: 40 };
    await store.commit({
      agents: [{ ...agent(site, windows), ...(hubWindows ? { hubWindows } : {}) }],
      sites: [{ site, lastContactAt: at, upstream: 'relay-1', unreachableNotifiedFor: null }],
      cells: [c],
    });
  }

  it('reads a site between its declared windows as waiting, not stale or unreachable', async () => {
    await heardAt('polar-1', [POLAR], T0 + 20 * S);
    const q = new Queries(store, 120, null, new ContactPlans(settings()));
    const now = T0 + 3 * MIN;
    const [c] = await q.matrix({}, now);
    expect(c).toMatchObject({
      stale: false,
      siteUnreachable: false,
      contact: 'waiting',
      nextWindowAt: new Date(T0 + 4 * MIN).toISOString(),
    });
    const [site] = await q.sites(now);
    expect(site?.unreachable).toBe(false);
    expect(site?.contact).toMatchObject({
      source: 'declared',
      judged: true,
      state: 'waiting',
      missedWindows: 0,
    });
    // Without the plan the same silence is an outage: the interval (120 s) has passed.
    const plain = new Queries(store, 120);
    expect((await plain.matrix({}, now))[0]).toMatchObject({ stale: true, siteUnreachable: true });
  });

  it('counts no stale cells for a site between its windows on /api/fleet, as its matrix shows them', async () => {
    await heardAt('polar-1', [POLAR], T0 + 20 * S);
    // A second cell already stale when the site was last heard from: it stays stale.
    const old = { ...cell('R0', T0 - 10 * MIN), site: 'polar-1', component: 'dns', expectedIntervalS: 40 };
    await store.commit({ cells: [old] });
    const q = new Queries(store, 120, null, new ContactPlans(settings()));
    const now = T0 + 3 * MIN;
    // The read model's flag is judged at now (the sweeper): both cells are past twice their cadence.
    await store.advanceStale(now, 100);
    const fleet = await q.fleet.fleet(now, 30);
    expect(fleet.sites[0]).toMatchObject({ site: 'polar-1', stale: 1, cells: 2 });
    expect(fleet.totals.stale).toBe(1);
    expect(fleet.environments[0]).toMatchObject({ environment: 'prod', stale: 1 });
    const matrix = await q.matrix({}, now);
    expect(matrix.filter((c) => c.stale).map((c) => c.component)).toEqual(['dns']);
    // Without a plan the same cells are both stale at now.
    const plain = new Queries(store, 120);
    expect((await plain.fleet.fleet(now, 30)).totals.stale).toBe(2);
  });

  it('calls the site overdue after a missed window and unreachable after three', async () => {
    // Declared in the hub's config this time, not by the agent, which says it holds them (decision 590).
    await heardAt('polar-1', [], T0 + 20 * S, [POLAR]);
    const q = new Queries(store, 120, null, new ContactPlans(settings({ 'polar-1': [POLAR] })));
    const overdue = await q.matrix({}, T0 + 4 * MIN + 71 * S);
    expect(overdue[0]).toMatchObject({ contact: 'overdue', siteUnreachable: false });
    const gone = await q.matrix({}, T0 + 12 * MIN + 71 * S);
    expect(gone[0]).toMatchObject({ contact: 'unreachable', siteUnreachable: true });
    const sites = await q.sites(T0 + 12 * MIN + 71 * S);
    expect(sites[0]?.contact).toMatchObject({ state: 'unreachable', missedWindows: 3 });
  });

  it('never judges a site by windows declared at the hub that its agent does not say it holds', async () => {
    await heardAt('polar-1', [], T0 + 20 * S);
    const q = new Queries(store, 120, null, new ContactPlans(settings({ 'polar-1': [POLAR] })));
    const now = T0 + 12 * MIN + 71 * S;
    const [site] = await q.sites(now);
    // three windows passed without contact: were they judged, the site would read unreachable
    expect(site?.contact).toMatchObject({ judged: false, state: 'unplanned', unconfirmed: [POLAR] });
    const [c] = await q.matrix({}, now);
    expect(c?.contact).toBeUndefined();
    // an agent that holds an older list confirms nothing of the new one
    await heardAt('polar-1', [], T0 + 20 * S, ['every 10m for 1m from 2026-11-27T00:00:00Z']);
    expect((await q.sites(now))[0]?.contact).toMatchObject({ judged: false, unconfirmed: [POLAR] });
    // once it holds them they judge the site, and nothing is waiting
    await heardAt('polar-1', [], T0 + 20 * S, [POLAR]);
    const held = (await q.sites(now))[0]?.contact;
    expect(held).toMatchObject({ judged: true, state: 'unreachable', windows: [POLAR] });
    expect(held?.unconfirmed).toBeUndefined();
  });

  it('groups a silent site into one attention row, whatever its cell count', async () => {
    await heardAt('polar-1', [POLAR], T0 + 20 * S);
    const q = new Queries(store, 120, null, new ContactPlans(settings()));
    const now = T0 + 12 * MIN + 71 * S;
    const fleet = summariseFleet(await q.matrix({}, now), await q.sites(now), new Date(now).toISOString());
    expect(fleet.attention.filter((a) => a.kind === 'stale')).toEqual([]);
    expect(fleet.silentSites).toEqual([
      expect.objectContaining({ site: 'polar-1', cells: 1, state: 'unreachable', missedWindows: 3 }),
    ]);
    const waiting = T0 + 3 * MIN;
    const calm = summariseFleet(
      await q.matrix({}, waiting),
      await q.sites(waiting),
      new Date(waiting).toISOString(),
    );
    expect(calm.silentSites).toEqual([expect.objectContaining({ site: 'polar-1', state: 'waiting' })]);
    expect(calm.sites[0]?.link).toBe('waiting');
  });

  it('learns the windows of a site that declares none from its contacts, and says so', async () => {
    const plans = new ContactPlans(settings());
    // Four passes seen: contacts every 5 s for 30 s, every 4 minutes.
    for (let w = 0; w < 6; w++)
      for (let t = 0; t <= 30; t += 5) plans.record('polar-1', T0 + w * 4 * MIN + t * S);
    await heardAt('polar-1', [], T0 + 5 * 4 * MIN + 30 * S);
    const q = new Queries(store, 120, null, plans);
    const [site] = await q.sites(T0 + 22 * MIN);
    expect(site?.contact).toMatchObject({
      source: 'learned',
      judged: true,
      state: 'waiting',
      nextWindowAt: new Date(T0 + 24 * MIN).toISOString(),
    });
    expect(site?.contact?.confidence).toBeGreaterThanOrEqual(0.6);
    expect(site?.contact?.windows[0]).toMatch(/^every 4m for 30s from /);
  });

  it('sends no stale or unreachable webhook for expected silence, and the unreachable one after three missed windows', async () => {
    await heardAt('polar-1', [POLAR], T0 + 20 * S);
    let now = T0 + 3 * MIN;
    const sweeper = new Sweeper({
      store,
      clock: { now: () => now },
      webhookUrls: ['http://127.0.0.1:1/hook'],
      sender: new MemoryWebhookSender(),
      defaultContactIntervalS: 120,
      retention: { maxRunsPerCell: 10, maxAgeMs: 1e12, failureMaxAgeMs: 1e12 },
      contactPlans: new ContactPlans(settings()),
    });
    expect(await sweeper.sweep()).toMatchObject({ staleCells: [], unreachableSites: [] });
    now = T0 + 12 * MIN + 71 * S;
    const r = await sweeper.sweep();
    expect(r.unreachableSites).toEqual(['polar-1']);
    // The cell was fresh when the site was last heard from: it is not stale, the site is silent.
    expect(r.staleCells).toEqual([]);
  });

  it('refuses a hub config with a window it cannot read, saying what to write', () => {
    const r = parseConfig({ contactPlans: { sites: { 'polar-1': ['every four minutes'] } } }, dir, {});
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect(r.errors.join('\n')).toMatch(
        /contactPlans\.sites\.polar-1\[0\]: .*is not 'every … for … from …'/,
      );
  });
});
