import { afterAll, describe, expect, it } from 'vitest';
import { capturePosts, eatDownlink } from '../../src/world/hostile/clockAttacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import type { World } from './world.js';

/**
 * Cases (d) and (e) of issue 29 (docs/decisions/230-time-a-hop-cannot-forge.md): a hop below an honest
 * relay eats the site's downlink, or keeps the site's bundle posts and replays them once the site is
 * gone. No false `done` or `delivered`, the request is sent again until the agent says it arrived, and a
 * replay moves nothing the hub shows.
 */

let world: World | undefined;
afterAll(() => world?.stop());
/** Every bundle post the site made through the hop while it was not eating: replayed in (e). */
const capture = capturePosts();

interface Request {
  state: string;
  deliveredAt: string | null;
  runId: string | null;
  unconfirmed?: boolean;
}

const request = async (w: World, id: string) =>
  (await (await w.api(`/api/plan-requests/${id}`)).json()) as Request;

const runCount = async (w: World) => {
  const r = await w.api('/api/cells/ship-1/prod/network/runs');
  return r.ok ? ((await r.json()) as { runs: unknown[] }).runs.length : 0;
};

const cellPlannedAt = async (w: World) => {
  const m = (await (await w.api('/api/matrix?site=ship-1')).json()) as {
    cells: Array<{ component: string; plannedAt: string | null }>;
  };
  return Date.parse(m.cells.find((c) => c.component === 'network')?.plannedAt ?? '') || 0;
};

async function hubMetric(w: World, name: string): Promise<number> {
  const text = await (await w.api('/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('hostile relay (d, e): silent drops and replays', () => {
  it('(d) a request whose downlink a hop ate is never done by a later run, is unconfirmed, and arrives once the path is honest', async () => {
    // contactIntervalS 5: the hub expects the agent's word within 3 × 5 s.
    world = await startVirtualWorld({ agentsVia: 'proxy', agentSync: { contactIntervalS: 5 } });
    const w = world;
    w.agentSide?.use(capture);
    await until('the start-up run at the hub', async () => (await runCount(w)) >= 1);

    const eat = eatDownlink();
    w.agentSide?.use(eat);
    const created = await until('the hub to accept a plan request', async () => {
      const r = await w.api('/api/plan-requests', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ site: 'ship-1', environment: 'prod', component: 'network' }),
      });
      return r.ok ? ((await r.json()) as { requestId: string }) : false;
    });
    const id = created.requestId;
    await until('the hop to eat the request', async () => eat.eaten > 0);
    // A run the request did not cause: the agent restarts and plans at start (its schedule, in effect).
    // The plan comes out the same: the agent confirms the cell (its plannedAt moves), it sends no new run.
    const before = await cellPlannedAt(w);
    await w.stopProgram('ship-1');
    w.start('ship-1');
    await until('the restart plan at the hub', async () => (await cellPlannedAt(w)) > before);
    const r1 = await request(w, id);
    expect(r1).toMatchObject({ state: 'pending', deliveredAt: null, runId: null });
    // Past 3 contact intervals without the agent's word: unconfirmed, and sent again (eaten again).
    await until('the request to show unconfirmed', async () => (await request(w, id)).unconfirmed === true);
    await until(
      'the hub to send it again',
      async () => (await hubMetric(w, 'hub_plan_requests_resent_total')) > 0,
    );
    await w.logged('hub', /sent a plan request again/);
    expect((await request(w, id)).state).toBe('pending');

    // The resend went the same way (a held pull may bring it a moment after the hub counted it).
    await until('the hop to eat the resend too', async () => eat.eaten > 1);

    // The path turns honest: the next resend arrives, the agent says so, plans, and stamps the request
    // with that plan (the same plan again, a cell confirmation: only the stamp answers it, decision 300).
    w.agentSide?.use(capture);
    const done = await until(
      'the request to be done',
      async () => {
        const r = await request(w, id);
        return r.state === 'done' ? r : false;
      },
      240_000,
    );
    expect(done.deliveredAt).not.toBeNull();
    expect(done.runId).toMatch(/^[0-9A-Z]{26}$/);
    expect(eat.eaten).toBeGreaterThan(1);
  });

  it('(e) replaying the site’s old bundles once it is gone moves nothing the hub shows', async () => {
    const w = world as World;
    w.agentSide?.use(null);
    await w.stopProgram('ship-1');
    const site = async () =>
      (await (await w.api('/api/sites/ship-1')).json()) as {
        lastContactAt: string | null;
        agents: Array<{ lastContactAt: string | null }>;
      };
    const seen = await site();
    const runs = await runCount(w);
    const posts = capture.posts;
    expect(posts.length).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 1500));
    const statuses: string[] = [];
    for (const p of posts) {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(p.headers))
        if (typeof v === 'string' && !['host', 'content-length', 'connection'].includes(k)) headers[k] = v;
      const r = await w.fetch(`${w.relayUrl}${p.path}`, {
        method: 'POST',
        headers,
        body: new Uint8Array(p.body),
      });
      statuses.push(String(r.status));
    }
    expect(statuses.every((s) => s.startsWith('2'))).toBe(true);
    // Give relay-1 time to forward anything it took (it forwards within its idle time).
    await new Promise((r) => setTimeout(r, 3000));
    const after = await site();
    expect(after.lastContactAt).toBe(seen.lastContactAt);
    expect(after.agents[0]?.lastContactAt).toBe(seen.agents[0]?.lastContactAt);
    expect(await runCount(w)).toBe(runs);
  });
});
