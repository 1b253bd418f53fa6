import { afterAll, describe, expect, it } from 'vitest';
import { clockLie } from '../../src/world/hostile/clockAttacks.js';
import { WORLD_START } from '../../src/world/World.js';
import { until } from '../support.js';
import { restampTimes, rewriteCustody, stripCustody } from './custodyAttacks.js';
import { startVirtualWorld } from './virtualWorld.js';
import type { World } from './world.js';

/**
 * Issue 29, the signed per-hop timing chain (docs/decisions/290-signed-hop-chain.md): a hop below an
 * honest relay whose key the hub has enrolled lies about the agent's clock consistently, from the
 * agent's first bundle on, by less than the gap between its bundles (20 s), which the bounds of
 * decision 230 alone cannot catch. Every program runs on one machine: the agent's true offset is 0, a
 * plan's true time lies between the request that asked for it and the hub's receipt of its result.
 */

let world: World | undefined;
afterAll(() => world?.stop());
const LIE_MS = 20_000;

interface Agent {
  clockOffsetMs: number | null;
  clockOffsetUncertaintyMs: number | null;
}

async function agentInfo(w: World): Promise<Agent> {
  const r = await w.api('/api/sites/ship-1');
  return ((await r.json()) as { agents: Agent[] }).agents[0] as Agent;
}

/** Asks for a plan of the cell and waits until it is done; answers when it was asked and the cell after. */
async function planOnce(w: World) {
  const askedAt = Date.now();
  const req = await until('the hub to accept a plan request', async () => {
    const r = await w.api('/api/plan-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ site: 'ship-1', environment: 'prod', component: 'network' }),
    });
    return r.ok ? ((await r.json()) as { requestId: string }) : false;
  });
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

/** The agent's offset at the hub holds the truth (0) within its stated uncertainty, which is a round trip's. */
async function honestOffset(w: World): Promise<number> {
  const a = await agentInfo(w);
  expect(a.clockOffsetUncertaintyMs).not.toBeNull();
  const u = a.clockOffsetUncertaintyMs ?? 0;
  expect(u).toBeLessThan(LIE_MS / 4);
  expect(Math.abs(a.clockOffsetMs ?? Number.NaN)).toBeLessThanOrEqual(u);
  return u;
}

describe('hostile relay: the signed timing chain', () => {
  it('dates every run right when a hop restates the clock by 20 s from the first bundle, and counts the lie', async () => {
    // the world's clock begins at WORLD_START, whatever the machine's says
    const startedAt = WORLD_START;
    const lie = clockLie(LIE_MS);
    // pulls not held, so the agent exchanges with relay-1 every second (the restamp case needs many)
    world = await startVirtualWorld({
      agentsVia: 'proxy',
      relayKey: true,
      agentSync: { downlinkHoldS: 0 },
      attacks: { agentSide: lie },
    });
    const w = world;
    const p = await planOnce(w);
    expect(lie.rewritten).toBeGreaterThan(0);
    const u = await honestOffset(w);
    expect(p.plannedAt).toBeGreaterThanOrEqual(p.askedAt - u);
    expect(p.plannedAt).toBeLessThanOrEqual(p.receivedAt);
    // the whole history (the plan at start; the same plan again only confirms it): none dated before the world began
    const runs = (await (await w.api('/api/cells/ship-1/prod/network/runs')).json()) as {
      runs: Array<{ plannedAt: string }>;
    };
    expect(runs.runs.length).toBeGreaterThanOrEqual(1);
    for (const r of runs.runs) expect(Date.parse(r.plannedAt)).toBeGreaterThanOrEqual(startedAt - u);
    expect(await w.hubMetric('hub_clock_custody_total', { outcome: 'contradicts-signed' })).toBeGreaterThan(
      0,
    );
    const lines = await w.logged('hub', /restated the clock of ship-1\/a1/);
    expect(lines[0]).toMatchObject({ peer: 'relay-1', outcome: 'contradicts-signed' });
  });

  it('refuses a custody record rewritten on the way, counts it, and keeps the honest offset', async () => {
    const w = world as World;
    const attack = rewriteCustody(LIE_MS);
    w.agentSide?.use(attack);
    const p = await planOnce(w);
    w.agentSide?.use(null);
    expect(attack.rewritten).toBeGreaterThan(0);
    const u = await honestOffset(w);
    expect(p.plannedAt).toBeGreaterThanOrEqual(p.askedAt - u);
    expect(p.plannedAt).toBeLessThanOrEqual(p.receivedAt);
    expect(await w.hubMetric('hub_clock_custody_total', { outcome: 'bad-signature' })).toBeGreaterThan(0);
    const lines = await w.logged('hub', /refused the signed clock chain of ship-1\/a1/);
    expect(lines.some((l) => l.outcome === 'bad-signature')).toBe(true);
  });

  it('refuses exchange times restamped on the way (the relay did not sign them), and counts it', async () => {
    const w = world as World;
    const attack = restampTimes(LIE_MS);
    w.agentSide?.use(attack);
    // every exchange the agent keeps for its record restamped (it keeps the last 8)
    await until('the agent to see 12 restamped answers', async () => attack.restamped >= 12);
    const p = await planOnce(w);
    w.agentSide?.use(null);
    const u = await honestOffset(w);
    expect(p.plannedAt).toBeGreaterThanOrEqual(p.askedAt - u);
    expect(p.plannedAt).toBeLessThanOrEqual(p.receivedAt);
    expect(await w.hubMetric('hub_clock_custody_total', { outcome: 'bad-stamp' })).toBeGreaterThan(0);
  });

  it('refuses a batch whose custody was stripped from an agent that signs, and counts it', async () => {
    const w = world as World;
    const attack = stripCustody(LIE_MS);
    w.agentSide?.use(attack);
    const p = await planOnce(w);
    w.agentSide?.use(null);
    expect(attack.stripped).toBeGreaterThan(0);
    const u = await honestOffset(w);
    expect(p.plannedAt).toBeGreaterThanOrEqual(p.askedAt - u);
    expect(p.plannedAt).toBeLessThanOrEqual(p.receivedAt);
    expect(await w.hubMetric('hub_clock_custody_total', { outcome: 'unsigned' })).toBeGreaterThan(0);
  });
});
