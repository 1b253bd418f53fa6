import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuditResponseSchema,
  DriftGroupsResponseSchema,
  DriftResponseSchema,
  FleetResponseSchema,
  MatrixResponseSchema,
  WaiverSchema,
} from '@driftline/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { MemoryWebhookSender } from '../src/adapters/memory/MemoryWebhookSender.js';
import { createHub, type Hub } from '../src/app.js';
import { parseConfig } from '../src/config.js';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim, TestClock } from './agentSim.js';
import { addTestUser } from './users.js';

/**
 * Issue 43 at fleet scale, in process with the hub's real SQLite stores: 1,000 sites, one attribute of one
 * resource drifting at 600 of them (decision 421).
 */
const SITES = 1000;
const DRIFTED = 600;
const HOOK = 'http://127.0.0.1:9/driftline';

const drifted = (i: number) => ({
  drifted: [
    {
      address: `module.site["s-${i}"].aws_security_group.web[0]`,
      type: 'aws_security_group',
      attributes: ['ingress'],
    },
  ],
});

let hub: Hub;
let dir: string;
let url: string;
let viewer: string;
let operator: string;
const clock = new TestClock();
const sender = new MemoryWebhookSender();
const agents: AgentSim[] = [];

async function push(sims: readonly AgentSim[]): Promise<void> {
  for (let i = 0; i < sims.length; i += 50) {
    const bundles = await Promise.all(sims.slice(i, i + 50).map((a) => a.delta()));
    const receipts = await hub.ingest.accept('relay-1', bundles);
    expect(receipts.filter((r) => r.status === 'rejected')).toEqual([]);
  }
  await hub.drift.settled();
}

const get = async <T>(path: string, schema: { parse(v: unknown): T }, auth = viewer): Promise<T> => {
  const res = await fetch(`${url}${path}`, { headers: { authorization: auth } });
  expect(res.status, path).toBe(200);
  return schema.parse(await res.json());
};

const attention = async () => (await get('/api/fleet', FleetResponseSchema)).attentionCounts;

async function deliverAll(): Promise<void> {
  for (let i = 0; i < 100 && (await hub.sweeper.deliverWebhooks(1000)) > 0; i++);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hub-drift-'));
  const cfg = parseConfig(
    {
      dataDir: dir,
      uiDir: join(dir, 'no-ui'),
      listen: { host: '127.0.0.1', port: 0 },
      webhooks: { urls: [HOOK], secret: 'a-secret-of-16-characters' },
    },
    dir,
    {},
  );
  if (!cfg.ok) throw new Error(cfg.errors.join('; '));
  hub = await createHub(cfg.config, { clock, sender });
  url = (await hub.listen()).api;
  await hub.store.commit({
    peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['*'] }],
  });
  viewer = (await addTestUser(hub.store, 'wall', ['viewer'])).authorization;
  operator = (await addTestUser(hub.store, 'ops', ['operator'])).authorization;
  for (let i = 0; i < SITES; i++) {
    const a = await AgentSim.create(`s-${i}`, 'a1', clock);
    const e = await enrol(
      hub.store,
      { site: a.site, agent: 'a1', key: await a.publicKeyText() },
      clock.now(),
    );
    if (!e.ok) throw new Error(e.error);
    agents.push(a);
  }
}, 600_000);

afterAll(async () => {
  await hub?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('drift at 600 of 1,000 sites', () => {
  it('is one grouped row; drift.opened fires once per episode across three identical re-plans', async () => {
    for (let round = 0; round < 3; round++) {
      clock.advance(60_000);
      for (const [i, a] of agents.entries())
        if (i < DRIFTED) a.plan('prod', 'net', 'drift', { planHash: 'a'.repeat(64), summary: drifted(i) });
        else if (round === 0) a.plan('prod', 'net', 'clean');
      await push(round === 0 ? agents : agents.slice(0, DRIFTED));
    }
    const g = await get('/api/drift/groups', DriftGroupsResponseSchema);
    expect(g.groups).toHaveLength(1);
    expect(g.groups[0]).toMatchObject({
      kind: 'drift',
      type: 'aws_security_group',
      address: 'module.site[*].aws_security_group.web[*]',
      attributes: ['ingress'],
      sites: DRIFTED,
      cells: DRIFTED,
      open: DRIFTED,
      waived: 0,
    });
    expect(g.totals).toMatchObject({ open: DRIFTED, waived: 0 });

    await deliverAll();
    const opened = sender.sent.filter((s) => s.event === 'drift.opened');
    expect(opened).toHaveLength(DRIFTED);
    expect(new Set(opened.map((s) => JSON.parse(s.body).episode)).size).toBe(DRIFTED);

    // /api/drift pages with a cursor: every open episode once, a bounded page each time.
    const seen = new Set<string>();
    let cursor: string | null = null;
    for (let pages = 0; pages < 20; pages++) {
      const q: string = `/api/drift?state=open&limit=250${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await get(q, DriftResponseSchema);
      expect(page.episodes.length).toBeLessThanOrEqual(250);
      for (const e of page.episodes) seen.add(e.id);
      cursor = page.nextCursor;
      if (!cursor) break;
    }
    expect(seen.size).toBe(DRIFTED);
    const one = await get('/api/drift?site=s-7&environment=prod&component=net', DriftResponseSchema);
    expect(one.episodes).toHaveLength(1);
    expect(one.episodes[0]).toMatchObject({ state: 'open', attributes: ['ingress'], durationS: 120 });
  }, 600_000);

  it('one waiver clears all 600 from attention, is audited, and they return at expiry', async () => {
    expect((await attention()).drift).toBe(DRIFTED);
    const signature = (await get('/api/drift/groups', DriftGroupsResponseSchema)).groups[0]?.signature;
    const res = await fetch(`${url}/api/waivers`, {
      method: 'POST',
      headers: { authorization: operator, 'content-type': 'application/json' },
      body: JSON.stringify({ pattern: signature, expires: '2h', reason: 'provider upgrade noise' }),
    });
    expect(res.status).toBe(201);
    const w = WaiverSchema.parse(await res.json());
    expect(w).toMatchObject({ active: true, covers: DRIFTED, author: 'ops' });

    expect((await attention()).drift).toBe(0);
    const g = await get('/api/drift/groups', DriftGroupsResponseSchema);
    expect(g.groups[0]).toMatchObject({ open: 0, waived: DRIFTED });
    expect(g.totals).toMatchObject({ open: 0, waived: DRIFTED });
    const m = await get('/api/matrix?site=s-3', MatrixResponseSchema);
    expect(m.cells[0]).toMatchObject({ status: 'drift', driftWaived: true });
    const waived = await get('/api/drift?state=waived&limit=1', DriftResponseSchema);
    expect(waived.episodes[0]).toMatchObject({ state: 'waived', waiver: w.id });
    const metrics = await (await fetch(`${url}/metrics`, { headers: { authorization: viewer } })).text();
    expect(metrics).toContain(`hub_drift_episodes{state="waived"} ${DRIFTED}`);
    expect(metrics).toContain('hub_drift_episodes{state="open"} 0');
    const audit = await get('/api/audit?limit=20', AuditResponseSchema);
    expect(audit.entries.find((e) => e.action === 'waiver.add')).toMatchObject({
      actor: 'ops',
      outcome: 'ok',
    });

    clock.advance(2 * 3600_000 + 1000);
    expect((await attention()).drift).toBe(DRIFTED);
    expect((await get('/api/drift/groups', DriftGroupsResponseSchema)).totals).toMatchObject({
      open: DRIFTED,
      waived: 0,
    });
  }, 600_000);

  it('resolves an episode on the first plan without the drift, and says so once', async () => {
    agents[5]?.plan('prod', 'net', 'clean');
    await push([agents[5] as AgentSim]);
    agents[5]?.plan('prod', 'net', 'clean');
    await push([agents[5] as AgentSim]);
    const e = (await get('/api/drift?site=s-5', DriftResponseSchema)).episodes[0];
    expect(e).toMatchObject({ state: 'resolved' });
    expect(e?.resolvedAt).not.toBeNull();
    await deliverAll();
    expect(sender.sent.filter((s) => s.event === 'drift.resolved')).toHaveLength(1);
    expect((await get('/api/drift/groups', DriftGroupsResponseSchema)).groups[0]?.cells).toBe(DRIFTED - 1);
  }, 600_000);
});
