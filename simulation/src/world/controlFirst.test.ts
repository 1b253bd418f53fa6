import { afterAll, describe, expect, it } from 'vitest';
import { World } from './World.js';

/**
 * Control first at the last hop (docs/decisions/270-control-first.md), in the world (decision 540): a site
 * whose uplink is busy with a detail upload that takes most of a minute still takes a plan request as soon
 * as its relay has it. The agent's link delays each direction 2 s and caps the uplink at 2 kB/s.
 */
describe('control first at the last hop, in the world', () => {
  let world: World | undefined;
  afterAll(async () => {
    await world?.close();
  });

  it('acts on a plan request while a long detail upload is still going up', async () => {
    const w = new World({
      seed: 270,
      sites: 1,
      components: 1,
      contact: null,
      siteLink: { uplink: { delayMs: 2000, bandwidthBps: 16_000 }, downlink: { delayMs: 2000 } },
      relayForward: { idleMs: 300, pullIntervalMs: 500, backoffBaseMs: 300, backoffMaxMs: 1000 },
      // a big plan (every extra resource changed): its detail blob, ~90 kB, takes most of a minute at 2 kB/s
      scenario:
        'seed: 3\nloop: false\nextraResources: 2000\nextraChanges: true\nsteps:\n  - { state: changes }\n',
      schedule: '0 0 1 1 *',
      agentSync: { jitterS: 0, backoffBaseS: 0.5, backoffCapS: 2, planOnStart: true },
    });
    world = w;
    await w.start();
    const ledger = w.sites[0]?.ledger;
    if (!ledger) throw new Error('no site');
    const cell = async () =>
      (
        await w.hubApi<{ cells: { component: string; runId: string | null }[] }>('/api/matrix?site=site-001')
      ).cells.find((c) => c.component === 'stack-0')?.runId ?? null;

    // the first plan's result reaches the hub; its detail is still on its way up the slow link
    expect(await w.until(() => ledger.recorded.size > 0 && w.ledger.figures().arrived > 0, 10 * 60_000)).toBe(
      true,
    );
    const first = await cell();
    expect(first).not.toBeNull();
    const detail = async () => (await w.hubApi<{ detailState?: string }>(`/api/runs/${first}`)).detailState;
    expect(await detail()).toBe('pending');

    const made = await w.hubCall('/api/plan-requests', {
      method: 'POST',
      body: { site: 'site-001', environment: 'prod', component: 'stack-0' },
    });
    expect(made.status).toBe(201);
    const requestedAt = Date.now();

    // the agent plans on the request (its only other run: the schedule is next New Year) while the
    // first detail is still going up
    expect(await w.until(() => ledger.recorded.size >= 2, 10 * 60_000)).toBe(true);
    const tookMs = Date.now() - requestedAt;
    expect(await detail()).toBe('pending');
    // the request's way down: the relay's pull (every 500 ms) and one trip of 2 s, then the plan itself
    expect(tookMs).toBeLessThan(10_000);

    // and the detail still arrives in the end (looked at every 10 s of world time, for at most 10 minutes)
    let state = await detail();
    for (let i = 0; i < 60 && state !== 'arrived'; i++) {
      await w.run(10_000);
      state = await detail();
    }
    expect(state).toBe('arrived');
  });
});
