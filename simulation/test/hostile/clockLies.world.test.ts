import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { clockLie, holdAndFreshen } from '../../src/world/hostile/clockAttacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import type { World } from './world.js';

/**
 * Case (c) of issue 29: a hop below an honest relay rewrites the clock headers of bundle posts
 * (docs/decisions/230-time-a-hop-cannot-forge.md). Every program runs on one machine, so the agent's
 * true clock offset is 0 and a plan's true time lies between the request that asked for it and the
 * hub's receipt of its result.
 */

let world: World | undefined;
afterAll(() => world?.stop());

interface Agent {
  agent: string;
  clockOffsetMs: number | null;
  clockOffsetUncertaintyMs: number | null;
  clockHeld: { reason: string; offsetMs: number; via: string } | null;
}

async function agentInfo(w: World): Promise<Agent> {
  const r = await w.api('/api/sites/ship-1');
  return ((await r.json()) as { agents: Agent[] }).agents[0] as Agent;
}

/**
 * Asks for a plan of the cell and waits until it is done; answers when it was asked and the cell after.
 * `delivered`: called once the agent's receipt of the request reached the hub (the plan still running).
 */
async function planOnce(w: World, delivered?: () => void) {
  const askedAt = Date.now();
  const req = await until('the hub to accept a plan request', async () => {
    const r = await w.api('/api/plan-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ site: 'ship-1', environment: 'prod', component: 'network' }),
    });
    return r.ok ? ((await r.json()) as { requestId: string }) : false;
  });
  if (delivered) {
    const state = await until('the agent’s receipt of the request at the hub', async () => {
      const r = await w.api(`/api/plan-requests/${req.requestId}`);
      const s = ((await r.json()) as { state: string }).state;
      return s === 'pending' ? false : s;
    });
    // its receipt, and with it perhaps its start (decision 560), but not its answer
    expect(['delivered', 'running']).toContain(state);
    delivered();
  }
  await until(
    'the plan request to be done',
    async () => {
      const r = await w.api(`/api/plan-requests/${req.requestId}`);
      return ((await r.json()) as { state: string }).state === 'done';
    },
    240_000,
  );
  const m = (await (await w.api('/api/matrix?site=ship-1')).json()) as {
    cells: Array<{ component: string; plannedAt: string; receivedAt: string }>;
  };
  const cell = m.cells.find((c) => c.component === 'network');
  if (!cell) throw new Error('no network cell at the hub');
  return { askedAt, plannedAt: Date.parse(cell.plannedAt), receivedAt: Date.parse(cell.receivedAt) };
}

async function hubMetric(w: World, name: string, labels: string): Promise<number> {
  const text = await (await w.api('/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('hostile relay (c): rewritten clock headers', () => {
  it('ends the +1 day lie as a flagged estimate, not as a wrong plannedAt', async () => {
    world = await startVirtualWorld({ agentsVia: 'proxy' });
    const w = world;
    // An honest estimate first: the agent's offset known from round trips.
    await planOnce(w);
    const honest = await until('a round-trip offset estimate', async () => {
      const a = await agentInfo(w);
      return a.clockOffsetUncertaintyMs !== null ? a : false;
    });
    const u = honest.clockOffsetUncertaintyMs ?? 0;
    expect(Math.abs(honest.clockOffsetMs ?? 0)).toBeLessThanOrEqual(u);

    const lie = clockLie(86_400_000);
    w.agentSide?.use(lie);
    const p = await planOnce(w);
    w.agentSide?.use(null);
    expect(lie.rewritten).toBeGreaterThan(0);
    // Dated within the stated uncertainty of when it really ran: after it was asked for, before it arrived.
    expect(p.plannedAt).toBeGreaterThanOrEqual(p.askedAt - u);
    expect(p.plannedAt).toBeLessThanOrEqual(p.receivedAt);
    const a = await agentInfo(w);
    expect(a.clockHeld).toMatchObject({ reason: 'contradicts-bounds' });
    // The claim as relay-1 composed it: the lie plus relay-1's own honest hop (a few ms on one machine).
    expect(Math.abs((a.clockHeld?.offsetMs ?? 0) - 86_400_000)).toBeLessThanOrEqual(1000);
    const sites = (await (await w.api('/api/sites')).json()) as {
      sites: Array<{ site: string; clockHeldAgents?: string[] }>;
    };
    expect(sites.sites.find((s) => s.site === 'ship-1')?.clockHeldAgents).toEqual(['a1']);
    expect(
      await hubMetric(w, 'hub_clock_estimates_held_total', 'reason="contradicts-bounds"'),
    ).toBeGreaterThan(0);
    await w.logged('hub', /refused a clock estimate/);
  });

  it('dates results held 90 s and claimed −90 s when they ran, and flags the jump', async () => {
    const w = world as World;
    await planOnce(w); // honest again: the flag clears
    expect((await agentInfo(w)).clockHeld).toBeNull();
    const u = (await agentInfo(w)).clockOffsetUncertaintyMs ?? 0;
    const hold = holdAndFreshen(90_000);
    // The plan takes 30 s, so the agent's receipt of the request goes up (unheld) before its result: the
    // hold then catches the result's push alone. Holding both costs a second 90 s whenever the receipt
    // and the result go up apart, which they did or did not by a race.
    writeFileSync(
      join(w.dir, 'ship-1', 'infra', 'network', 'fake-terraform.json'),
      JSON.stringify({ steps: [{ state: 'clean', durationMs: 30_000 }] }),
    );
    const p = await planOnce(w, () => w.agentSide?.use(hold));
    w.agentSide?.use(null);
    expect(hold.rewritten).toBeGreaterThan(0);
    // It arrived at least 90 s after it ran, and the hub says so (within the stated uncertainty).
    expect(p.receivedAt - p.plannedAt).toBeGreaterThanOrEqual(90_000 - u);
    expect(p.plannedAt).toBeGreaterThanOrEqual(p.askedAt - u);
    expect((await agentInfo(w)).clockHeld).toMatchObject({ reason: 'jump' });
    expect(await hubMetric(w, 'hub_clock_estimates_held_total', 'reason="jump"')).toBeGreaterThan(0);
    await w.logged('hub', /held back a clock estimate/);
  });
});
