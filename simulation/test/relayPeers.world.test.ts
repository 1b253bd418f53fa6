import { join } from 'node:path';
import type { RelaysResponse } from '@driftline/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { runProgram } from '../src/topology/programs.js';
import { startVirtualWorld } from './hostile/virtualWorld.js';
import type { World } from './hostile/world.js';
import { until } from './support.js';

/**
 * A second site behind the same relay (docs/decisions/240-peers-and-relay-health.md), in the deterministic
 * world (docs/decisions/540-deterministic-world.md): hub, relay-1 and the agents of ship-7 and ship-8 in one
 * process on virtual time. relay-1's token at the hub acts for ship-7 only, and its relay.yaml names ship-7
 * only; ship-8's agent holds a relay token for ship-8. The hub refuses ship-8's bundles and says which
 * command fixes it; that command, `hub peer sites`, run as the program on the hub's files (its clock the
 * world's), is the only change: ship-8 reaches the hub and is acknowledged through the relay, each step
 * within a bound of world time that the agent's and relay's settings give.
 */
let w: World | null = null;
afterAll(async () => {
  await w?.stop();
});

interface AgentStatus {
  unackedRuns: number;
  lastAckAt: number | null;
  rejections: Array<{ code: string; state: string }>;
}

describe('a second site behind the same relay (the deterministic world)', () => {
  it('shows the refusal at the hub with the command that fixes it, and the site reaches the hub after only `hub peer sites`', async () => {
    w = await startVirtualWorld({
      sites: ['ship-7', 'ship-8'],
      hubPeerSites: ['ship-7'],
      // only the first site: the relay learns the second from the hub
      relaySites: ['ship-7'],
      relayForward: { pullIntervalMs: 1000, backoffMaxMs: 3000 },
      // hop v2 and resendAfterS at its 6 h, as the program defaults them: the relay's refusal travels back, so the agent sends again after rejectedRetryS
      agentSync: { wire: 2, rejectedRetryS: 3, resendAfterS: 21_600 },
    });
    const world = w;
    const began = Date.now();
    const status = async (site: string) => (await world.agentStatus(site)) as unknown as AgentStatus;

    // The hub refuses ship-8's bundles (the relay's token acts for ship-7 only); headquarters sees it.
    const relays = () => world.api('/api/relays').then((r) => r.json() as Promise<RelaysResponse>);
    const problem = await until('the relay to report the refused site', async () => {
      const r = (await relays()).relays.find((x) => x.name === 'relay-1');
      return r?.problems.find((p) => p.code === 'sites-refused');
    });
    const refusalShownMs = Date.now() - began;
    expect(problem.fix).toBe('hub peer sites relay-1 --sites ship-7,ship-8');
    expect(problem.message).toContain('ship-8');
    const before = (await relays()).relays[0];
    expect(before?.status?.upstreamRefusals).toMatchObject({ forbidden: expect.any(Number) });
    expect(before?.status?.sitesRefused).toEqual(['ship-8']);
    // ship-7 is not held back by ship-8's refusal
    expect(
      (
        (await (await world.api('/api/matrix?site=ship-7')).json()) as { cells: { status: string }[] }
      ).cells.some((c) => c.status !== 'no-data'),
    ).toBe(true);

    // The agent behind the relay learns it too: its status says what was refused and what fixes it.
    await until('ship-8 to hold the relay refusal', async () =>
      (await status('ship-8')).rejections.some((r) => r.code === 'forbidden'),
    );
    const agentKnewMs = Date.now() - began;
    const ship8 = join(world.dir, 'ship-8');
    const refusedAt8 = await runProgram('agent', ['status', '--config', join(ship8, 'agent.yaml')], {
      cwd: ship8,
      env: world.programEnv(),
    });
    expect(refusedAt8).toContain('(forbidden)');
    expect(refusedAt8).toContain('hub peer sites RELAY');
    expect((await status('ship-7')).rejections).toEqual([]);

    // The one fix, at the hub: no relay.yaml change, no restart. The world stands still while it runs.
    const hubYaml = join(world.dir, 'hub.yaml');
    const fixedAt = Date.now();
    await runProgram('hub', ['peer', 'sites', 'relay-1', '--sites', 'ship-7,ship-8', '--config', hubYaml], {
      env: world.programEnv(),
    });
    expect(Date.now()).toBe(fixedAt);
    const matrix = async (site: string) =>
      ((await (await world.api(`/api/matrix?site=${site}`)).json()) as { cells: { status: string }[] }).cells;
    await until('ship-8 to reach the hub', async () =>
      (await matrix('ship-8')).some((c) => c.status !== 'no-data'),
    );
    const reachedMs = Date.now() - fixedAt;
    // its ack came back down through the relay, which pulls ship-8's downlink now that the hub said so
    for (const site of ['ship-7', 'ship-8'])
      await until(`${site} to have everything acknowledged`, async () => {
        const s = await status(site);
        return s.unackedRuns === 0 && s.lastAckAt !== null && s.rejections.length === 0;
      });
    const ackedMs = Date.now() - fixedAt;
    const after = await until('the relay to report no refused site', async () => {
      const r = (await relays()).relays[0];
      return r && r.status?.sitesRefused.length === 0 ? r : undefined;
    });
    const clearedMs = Date.now() - fixedAt;
    expect(after.sites).toEqual(['ship-7', 'ship-8']);
    expect(after.status?.sites).toEqual(['ship-7', 'ship-8']);
    expect(after.problems.map((p) => p.code)).not.toContain('sites-refused');
    console.info(JSON.stringify({ refusalShownMs, agentKnewMs, reachedMs, ackedMs, clearedMs }));
    // In world time (the process test waited up to 90 s for each): the refusal is at the hub and at the
    // agent within the first round (the relay reports a refusal at once, not at its minute status);
    // ship-8's results reach the hub at the agent's next send, rejectedRetryS (3 s) after the refusal at
    // the latest, and the ack is back down within one sync interval (1 s) more (one look is 250 ms).
    expect(refusalShownMs).toBeLessThanOrEqual(1_000);
    expect(agentKnewMs).toBeLessThanOrEqual(1_000);
    expect(reachedMs).toBeLessThanOrEqual(3_000 + 250);
    expect(ackedMs).toBeLessThanOrEqual(3_000 + 1_000 + 250);
    expect(clearedMs).toBeLessThanOrEqual(3_000 + 1_000 + 250);
  });
});
