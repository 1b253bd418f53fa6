import { afterAll, describe, expect, it } from 'vitest';
import { clockLie } from '../../src/world/hostile/clockAttacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import type { World } from './world.js';

/**
 * Issue 42, item 3 (docs/decisions/415-unkeyed-relays.md): relay-1 is enrolled without a key
 * (`--no-key`) and lies in the clock headers of every batch it forwards, from the agent's first bundle
 * on: the agent's clock is said to be 20 minutes ahead, ± 0 ms (a proxy between relay-1 and the hub
 * rewrites `driftline-source-clocks`, which is what relay-1 itself could send). Every program runs on one
 * machine: the agent's true offset is 0, and a plan's true time lies between the request that asked for
 * it and the hub's receipt of its result.
 */

let world: World | undefined;
afterAll(() => world?.stop());
const LIE_MS = 20 * 60_000;

interface Agent {
  clockOffsetMs: number | null;
  clockOffsetUncertaintyMs: number | null;
  clockHeld: { reason: string; offsetMs: number; via: string } | null;
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

describe('an unkeyed relay lying about clocks from the first bundle (issue 42)', () => {
  it('moves no plannedAt, states an honest uncertainty, and is counted and logged', async () => {
    const lie = clockLie(LIE_MS);
    world = await startVirtualWorld({ relayUpstreams: ['proxy'], attacks: { upstreamSide: [lie] } });
    const w = world;
    const relays = (await (await w.api('/api/relays')).json()) as {
      relays: Array<{ name: string; unkeyed?: boolean }>;
    };
    expect(relays.relays.find((r) => r.name === 'relay-1')?.unkeyed).toBe(true);

    const p = await planOnce(w);
    expect(lie.rewritten).toBeGreaterThan(0);
    const a = await agentInfo(w);
    // Dated when it ran, not 20 minutes early: after it was asked for, before it arrived.
    expect(p.plannedAt).toBeGreaterThanOrEqual(p.askedAt - (a.clockOffsetUncertaintyMs ?? 0));
    expect(p.plannedAt).toBeLessThanOrEqual(p.receivedAt);
    // The offset stated covers the truth (0): a one-way bound (at most 0, uncertainty unknown) or the
    // agent's own bound, never the lie's ± 0.
    if (a.clockOffsetUncertaintyMs === null) expect(a.clockOffsetMs ?? 0).toBeLessThanOrEqual(0);
    else expect(Math.abs(a.clockOffsetMs ?? 0)).toBeLessThanOrEqual(a.clockOffsetUncertaintyMs);
    expect(Math.abs(a.clockOffsetMs ?? 0)).toBeLessThan(LIE_MS / 2);
    // The request it confirmed bounds the agent's clock from above: the lie is beyond that bound.
    expect(a.clockHeld).toMatchObject({ reason: 'contradicts-bounds', via: 'relay-1' });
    expect(Math.abs((a.clockHeld?.offsetMs ?? 0) - LIE_MS)).toBeLessThanOrEqual(1000);
    expect(
      await w.hubMetric('hub_clock_estimates_held_total', { reason: 'contradicts-bounds' }),
    ).toBeGreaterThan(0);
    const [line] = await w.logged('hub', /refused a clock estimate/);
    expect(line).toMatchObject({
      site: 'ship-1',
      agent: 'a1',
      peer: 'relay-1',
      reason: 'contradicts-bounds',
    });

    // Honest again: the relay's claim is checked but narrows nothing; the stated uncertainty covers the
    // truth and is no narrower than the agent's own bound allows (the request's trip and the result's).
    w.upstreamSide[0]?.use(null);
    const q = await planOnce(w);
    const b = await until('an estimate with an upper end', async () => {
      const x = await agentInfo(w);
      return x.clockOffsetUncertaintyMs !== null && x.clockHeld === null ? x : false;
    });
    const u = b.clockOffsetUncertaintyMs ?? 0;
    expect(Math.abs(b.clockOffsetMs ?? 0)).toBeLessThanOrEqual(u);
    expect(u).toBeLessThanOrEqual(q.receivedAt - q.askedAt);
    expect(q.plannedAt).toBeGreaterThanOrEqual(q.askedAt - u);
    expect(q.plannedAt).toBeLessThanOrEqual(q.receivedAt);
  });
});
