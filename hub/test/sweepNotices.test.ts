import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryDriftStore } from '../src/adapters/memory/MemoryDriftStore.js';
import { SqliteHubStore } from '../src/adapters/sqlite/SqliteHubStore.js';
import { contactPlanSettings } from '../src/configContact.js';
import { ContactPlans } from '../src/core/contact/ContactPlans.js';
import { Drift } from '../src/core/drift/Drift.js';
import { fleetNotices } from '../src/core/drift/fleetNotices.js';
import { Queries } from '../src/core/Queries.js';
import { registerDriftGauges } from '../src/driftMetrics.js';
import type { AgentRow, ReadStore, WebhookRow } from '../src/ports/HubStore.js';
import { cell } from './storeFixtures.js';

const T0 = Date.parse('2026-11-27T00:00:00Z');
const MIN = 60_000;
const POLAR = 'every 4m for 40s from 2026-11-27T00:00:00Z';

function agent(site: string): AgentRow {
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
    contactWindows: [POLAR],
  };
}

/**
 * The sweeper's once-per-sweep notices and the overdue gauge judge each site's contact plan; they used
 * the sites view, which reads and judges every cell of the fleet (200,000 at the fleet issue 41 is
 * built for) in the hub's thread every 15 s. They need no cell: a store that refuses cell reads shows it.
 */
describe('overdue sites judged without reading the fleet (real SQLite)', () => {
  let dir: string;
  let store: SqliteHubStore;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'hub-sweep-notices-'));
    store = new SqliteHubStore(join(dir, 'hub.db'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const noCells = (s: ReadStore): ReadStore =>
    new Proxy(s, {
      get(target, p, receiver) {
        if (p === 'listCells' || p === 'cellsAt' || p === 'windowCells')
          return () => Promise.reject(new Error(`${String(p)} read the fleet's cells`));
        const v = Reflect.get(target, p, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });

  it('queues site.overdue and counts the gauge from site rows and agent briefs', async () => {
    const heard = T0 + 20_000;
    for (const site of ['polar-1', 'polar-2'])
      await store.commit({
        agents: [agent(site)],
        sites: [{ site, lastContactAt: heard, upstream: 'relay-1', unreachableNotifiedFor: null }],
        cells: Array.from({ length: 50 }, (_, i) => ({
          ...cell(`R${i}`, heard),
          site,
          component: `c${i}`,
          expectedIntervalS: 40,
        })),
      });
    const plans = new ContactPlans(
      contactPlanSettings({
        graceS: 30,
        unreachableAfterMissed: 3,
        learnSilenceS: 60,
        minConfidence: 0.6,
        sites: {},
      }),
    );
    const queries = new Queries(noCells(store), 120, null, plans);
    const now = T0 + 4 * MIN + 71_000; // one window missed: overdue
    const rows: WebhookRow[] = [];
    const drift = new Drift({
      drift: new MemoryDriftStore(),
      commit: async () => {},
      clock: { now: () => now },
      ids: { next: () => 'x' },
      webhookUrls: ['http://127.0.0.1:9/h'],
    });
    await fleetNotices({
      queries,
      store: {
        listPeers: async () => [],
        commit: async (w: { webhooks?: WebhookRow[] }) => void rows.push(...(w.webhooks ?? [])),
      },
      clock: { now: () => now },
      drift,
    });
    expect(rows.map((r) => [r.event, JSON.parse(r.body).subject])).toEqual([
      ['site.overdue', 'polar-1'],
      ['site.overdue', 'polar-2'],
    ]);
    expect(JSON.parse(rows[0]?.body ?? '{}')).toMatchObject({
      site: 'polar-1',
      lastContactAt: new Date(heard).toISOString(),
      missedWindows: 1,
    });
    const registry = new Registry();
    registerDriftGauges(registry, { counts: async () => ({ open: 0, waived: 0, checks: 0 }) }, queries, {
      now: () => now,
    });
    expect(await registry.getSingleMetricAsString('hub_sites_overdue')).toMatch(/hub_sites_overdue 2$/m);
  });
});
