import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type PlanRequest, PlanRequestSchema } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from '../support.js';
import { askPlan } from './plans.js';
import { startVirtualWorld } from './virtualWorld.js';
import type { World } from './world.js';

/**
 * Every state a person waits on (docs/decisions/560-plan-request-states.md), end to end in the
 * deterministic world: agent → relay-1 → hub, on hop v1 and on hop v2. A plan request the hub is asked
 * for is seen at relay-1, delivered, running for as long as the site's plan takes (30 s of the world's
 * time), then done; each step's time is kept, in order.
 */
let world: World | undefined;
afterEach(async () => {
  await world?.stop();
  world = undefined;
});

/** The states the request is seen in (polled at 250 ms of world time), until it is done. */
async function follow(w: World, id: string): Promise<{ seen: string[]; last: PlanRequest }> {
  const seen: string[] = [];
  const last = await until(
    `plan request ${id} to be done`,
    async () => {
      const r = PlanRequestSchema.parse(await (await w.api(`/api/plan-requests/${id}`)).json());
      if (seen.at(-1) !== r.state) seen.push(r.state);
      return r.state === 'done' || r.state === 'expired' || r.state === 'refused' ? r : false;
    },
    300_000,
  );
  return { seen, last };
}

describe.each([1, 2])('a plan request’s journey, agent on hop v%i', (wire) => {
  it('is seen at the relay, delivered, running while the plan takes, then done, each with its time', async () => {
    world = await startVirtualWorld({ agentsVia: 'relay', agentSync: { wire } });
    const w = world;
    await until('the start-up run at the hub', async () => {
      const r = await w.api('/api/cells/ship-1/prod/network/runs');
      return r.ok && ((await r.json()) as { runs: unknown[] }).runs.length > 0;
    });
    // The site's next plans take 30 s of its time: long enough to be seen running.
    writeFileSync(
      join(w.dir, 'ship-1', 'infra', 'network', 'fake-terraform.json'),
      JSON.stringify({ steps: [{ state: 'changes', durationMs: 30_000 }] }),
    );
    const id = await askPlan(w);
    const { seen, last } = await follow(w, id);
    expect(seen).toContain('running');
    expect(seen.at(-1)).toBe('done');
    expect(last.relay).toBe('relay-1');
    const t = (iso: string | null | undefined) => (iso ? Date.parse(iso) : Number.NaN);
    const times = [last.requestedAt, last.relayAt, last.deliveredAt, last.startedAt, last.doneAt].map(t);
    expect(times.every(Number.isFinite)).toBe(true);
    // Each step after the one before: the agent's times are moved to the hub's clock by an estimate (here
    // 128 ± 132 ms off), never before what the hub saw happen first nor after now.
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // The plan took its 30 s between the start the agent signed and the answer reaching the hub.
    expect(t(last.doneAt) - t(last.startedAt)).toBeGreaterThanOrEqual(30_000);
  });
});
