import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuditResponseSchema,
  DriftGroupsResponseSchema,
  DriftResponseSchema,
  WaiverSchema,
} from '@driftline/protocol';
import { expect, it, vi } from 'vitest';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { openDriftStore, openHubStore } from '../src/adapters/openStores.js';
import { SqliteDriftStore } from '../src/adapters/sqlite/SqliteDriftStore.js';
import { createHub } from '../src/app.js';
import { type HubConfig, parseConfig } from '../src/config.js';
import { Drift } from '../src/core/drift/Drift.js';
import { enrol } from '../src/core/enrolment.js';
import { driftStorePath } from '../src/dataDir.js';
import { ulidGen } from '../src/ports/IdGen.js';
import { AgentSim, TestClock } from './agentSim.js';
import { describePg, type PgServer } from './postgres.js';
import { addTestUser } from './users.js';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 180_000 });

const SITES = 3;

/** A hub's configuration on the database at `url`, with a data directory of its own (as on its own host). */
function configOn(server: PgServer, url: string): { config: HubConfig; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'hub-pg-drift-'));
  const cfg = parseConfig(
    {
      dataDir: dir,
      uiDir: join(dir, 'no-ui'),
      listen: { host: '127.0.0.1', port: 0 },
      store: { kind: 'postgres', url, passwordFile: join(server.dir, 'pw') },
    },
    dir,
    {},
  );
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  return { config: cfg.config, dir };
}

/** A real hub on port 0 on the shared database: its API's base URL. */
async function hubOn(
  server: PgServer,
  url: string,
  clock: TestClock,
  before: (dataDir: string) => Promise<void> = async () => {},
) {
  const { config, dir } = configOn(server, url);
  await before(config.dataDir);
  const hub = await createHub(config, { clock });
  const api = (await hub.listen()).api;
  return {
    hub,
    api,
    config,
    close: async () => {
      await hub.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describePg('drift on several hubs sharing one PostgreSQL database', (server) => {
  it('lists at one hub the episodes another opened, and applies there the waivers added through another or hub waiver', async () => {
    const url = await server().createDatabase();
    const clock = new TestClock();
    const a = await hubOn(server(), url, clock);
    const b = await hubOn(server(), url, clock);
    try {
      // Peers, users and agents are in the shared database: set up through one hub, known to both.
      await a.hub.store.commit({
        peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }],
      });
      const viewer = (await addTestUser(a.hub.store, 'wall', ['viewer'])).authorization;
      const operator = (await addTestUser(a.hub.store, 'ops', ['operator'])).authorization;
      const agents: AgentSim[] = [];
      for (let i = 0; i < SITES; i++) {
        const agent = await AgentSim.create(`s-${i}`, 'a1', clock);
        const e = await enrol(
          a.hub.store,
          { site: agent.site, agent: 'a1', key: await agent.publicKeyText() },
          clock.now(),
        );
        if (!e.ok) throw new Error(e.error);
        agents.push(agent);
      }
      const get = async <T>(base: string, path: string, schema: { parse(v: unknown): T }): Promise<T> => {
        const res = await fetch(`${base}${path}`, { headers: { authorization: viewer } });
        expect(res.status, path).toBe(200);
        return schema.parse(await res.json());
      };
      // Open drift not waived, from the hub's cached open episodes and waivers.
      const unwaived = async (base: string) =>
        (await get(base, '/api/drift/groups', DriftGroupsResponseSchema)).totals.open;

      // Every site drifts in one attribute; the bundles reach hub A only.
      clock.advance(60_000);
      for (const [i, agent] of agents.entries())
        agent.plan('prod', 'net', 'drift', {
          summary: {
            drifted: [
              {
                address: `module.site["s-${i}"].aws_security_group.web[0]`,
                type: 'aws_security_group',
                attributes: ['ingress'],
              },
            ],
          },
        });
      const receipts = await a.hub.ingest.accept('relay-1', await Promise.all(agents.map((x) => x.delta())));
      expect(receipts.map((r) => r.status)).toEqual(agents.map(() => 'stored'));
      await a.hub.drift.settled();

      // Hub B ingested nothing, yet lists them and groups them: one row for the three sites.
      const listed = await get(b.api, '/api/drift?state=open', DriftResponseSchema);
      expect(listed.episodes.map((e) => e.site).sort()).toEqual(['s-0', 's-1', 's-2']);
      const groups = await get(b.api, '/api/drift/groups', DriftGroupsResponseSchema);
      expect(groups.groups).toHaveLength(1);
      expect(groups.groups[0]).toMatchObject({ sites: SITES, cells: SITES, open: SITES, waived: 0 });
      // B has read (and cached) its open episodes and waivers before the waiver exists.
      expect(await unwaived(b.api)).toBe(SITES);

      // A waiver added through hub A ...
      const res = await fetch(`${a.api}/api/waivers`, {
        method: 'POST',
        headers: { authorization: operator, 'content-type': 'application/json' },
        body: JSON.stringify({
          pattern: groups.groups[0]?.signature,
          expires: '2h',
          reason: 'provider upgrade noise',
        }),
      });
      expect(res.status).toBe(201);
      const w = WaiverSchema.parse(await res.json());

      // ... is applied by hub B at once, though B had read its waivers before: waived in its list and groups.
      expect(await unwaived(b.api)).toBe(0);
      const waived = await get(b.api, '/api/drift?state=waived', DriftResponseSchema);
      expect(waived.episodes.map((e) => e.waiver)).toEqual([w.id, w.id, w.id]);
      expect((await get(b.api, '/api/drift/groups', DriftGroupsResponseSchema)).totals).toMatchObject({
        open: 0,
        waived: SITES,
      });
      const audit = await get(b.api, '/api/audit?limit=20', AuditResponseSchema);
      expect(audit.entries.find((e) => e.action === 'waiver.add')).toMatchObject({ actor: 'ops' });

      // `hub waiver remove` (its own connection to the database, as the CLI opens it) returns the drift at both.
      const store = await openHubStore(a.config);
      const driftStore = openDriftStore(a.config);
      try {
        const cli = new Drift({
          drift: driftStore,
          commit: (x) => store.commit(x),
          clock,
          ids: ulidGen(clock),
          webhookUrls: [],
        });
        expect((await cli.waivers()).map((x) => x.covers)).toEqual([SITES]);
        expect(await cli.removeWaiver(w.id, { actor: 'ops', via: 'cli', address: '' })).toMatchObject({
          active: false,
        });
      } finally {
        await driftStore.close();
        await store.close();
      }
      expect(await unwaived(a.api)).toBe(SITES);
      expect(await unwaived(b.api)).toBe(SITES);

      // A plan without the drift, through hub B, resolves the episode hub A opened; A lists it resolved.
      clock.advance(60_000);
      agents[0]?.plan('prod', 'net', 'clean');
      await b.hub.ingest.accept('relay-1', [await (agents[0] as AgentSim).delta()]);
      await b.hub.drift.settled();
      const s0 = await get(a.api, '/api/drift?site=s-0', DriftResponseSchema);
      expect(s0.episodes).toHaveLength(1);
      expect(s0.episodes[0]).toMatchObject({ state: 'resolved', durationS: 60 });
      expect(await unwaived(a.api)).toBe(SITES - 1);
    } finally {
      await b.close();
      await a.close();
    }
  });

  it('copies the waivers of a drift.db left from before into the database once, where every hub applies them', async () => {
    const url = await server().createDatabase();
    const clock = new TestClock();
    const waiver = (id: string, removedAt: number | null) => ({
      id,
      pattern: 'aws_s3_bucket.*',
      attributes: null,
      sites: [],
      environments: [],
      components: [],
      expiresAt: clock.now() + 3600_000,
      reason: 'before the upgrade',
      author: 'ada',
      createdAt: clock.now() - 1000,
      removedAt,
      removedBy: removedAt === null ? null : 'bob',
    });
    // The hub ran on PostgreSQL with a drift.db of its own: one waiver active, one removed.
    const a = await hubOn(server(), url, clock, async (dataDir) => {
      mkdirSync(dataDir, { recursive: true });
      const old = new SqliteDriftStore(driftStorePath(dataDir));
      await old.putWaiver(waiver('w-old-1', null));
      await old.putWaiver(waiver('w-old-2', clock.now() - 500));
      await old.close();
    });
    const b = await hubOn(server(), url, clock);
    let aOpen = true;
    try {
      const operator = (await addTestUser(a.hub.store, 'ops', ['operator'])).authorization;
      const listed = async (base: string) => {
        const res = await fetch(`${base}/api/waivers`, { headers: { authorization: operator } });
        expect(res.status).toBe(200);
        return ((await res.json()) as { waivers: { id: string; active: boolean }[] }).waivers;
      };
      expect((await listed(b.api)).map((w) => [w.id, w.active])).toEqual([
        ['w-old-1', true],
        ['w-old-2', false],
      ]);
      // Removed through the other hub, it stays removed when the first hub starts again.
      const del = await fetch(`${b.api}/api/waivers/w-old-1`, {
        method: 'DELETE',
        headers: { authorization: operator },
      });
      expect(del.status).toBe(200);
      await a.hub.close();
      aOpen = false;
      const again = await createHub(a.config, { clock });
      try {
        expect((await again.drift.waivers()).map((w) => [w.id, w.active])).toEqual([
          ['w-old-1', false],
          ['w-old-2', false],
        ]);
      } finally {
        await again.close();
      }
    } finally {
      await b.close();
      if (aOpen) await a.hub.close();
      rmSync(a.config.dataDir, { recursive: true, force: true });
    }
  });
});
