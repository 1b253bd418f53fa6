import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { droppedAckLaterPushes } from '../../src/world/hostile/wire2Attacks.js';
import { until } from '../support.js';
import { reconfigureAgent } from './plans.js';
import { startVirtualWorld } from './virtualWorld.js';
import type { World } from './world.js';

/**
 * A hop between the agent and relay-1 answers each v2 push of a round under way (field 11, `ackLater`)
 * with the bare 204 of a node that holds it (docs/decisions/530-custody-with-the-next-push.md) and drops
 * it. The agent takes the 204 for custody; what makes that safe is that every push carries all the
 * changes since the hub's last ack (decision 495), so the round's last push, which asks nothing and goes
 * through, brings what the dropped ones carried. The agent here resends only after 10 minutes: every
 * changed plan must reach the hub within rounds, with the hop still lying.
 */

const COMPONENTS = ['network', 'database', 'app', 'dns', 'storage'];

let world: World | undefined;
afterAll(() => world?.stop());

/** The run ids the hub holds for one of ship-1's cells. */
async function hubRuns(w: World, component: string): Promise<string[]> {
  const r = await w.api(`/api/cells/ship-1/prod/${component}/runs`);
  return r.ok ? ((await r.json()) as { runs: Array<{ runId: string }> }).runs.map((x) => x.runId) : [];
}

describe('hostile hop, agent on hop v2: pushes of a round under way answered 204 and dropped', () => {
  it('loses nothing: the round’s last push carries what the dropped ones did, and the hub shows every changed plan', async () => {
    world = await startVirtualWorld({
      agentsVia: 'proxy',
      // each result its own batch, one plan at a time: a round of five plans is several pushes
      agentSync: { wire: 2, contactIntervalS: 5, recordWindowS: 0.2, maxParallelRuns: 1, resendAfterS: 600 },
    });
    const w = world;
    await until('the first result at the hub', async () => (await hubRuns(w, 'network')).length > 0, 180_000);
    // five cells every 30 s, each plan a new one (two variants in turn) taking a second: a round's news
    // waits 3 s (a tenth of the cadence, decision 485), so it goes up while the round's later plans run
    await reconfigureAgent(w, 'ship-1', (c) => {
      c.components = COMPONENTS.map((name) => ({
        name,
        workingDir: `./infra/${name}`,
        environments: ['prod'],
        schedule: '*/30 * * * * *',
      }));
    });
    for (const name of COMPONENTS) {
      const dir = join(w.dir, 'ship-1', 'infra', name);
      mkdirSync(dir, { recursive: true });
      const step = (variant: number) => ({ state: 'changes', variant, durationMs: 1000 });
      writeFileSync(join(dir, 'fake-terraform.json'), JSON.stringify({ steps: [step(0), step(1)] }));
    }
    const drop = droppedAckLaterPushes();
    const hop = w.agentSide;
    if (!hop) throw new Error('the world has no agent-side proxy');
    hop.use(drop);
    w.start('ship-1');
    // start-up's round (its plans queued one after another is a round under way too) and two cron rounds
    const recorded = () =>
      w
        .logLines('ship-1', /result recorded/)
        .filter((l) => l.unchanged === false)
        .map((l) => ({ component: l.component as string, runId: l.runId as string, reason: l.reason }));
    const changed = await until(
      'the hop to drop pushes, and two cron rounds of news',
      async () => {
        const r = recorded();
        return drop.dropped >= 3 && r.filter((x) => x.reason === 'schedule').length >= 2 * COMPONENTS.length
          ? r
          : false;
      },
      300_000,
    );
    // the hop still drops: each of them reaches the hub with a later push of its round
    let missing: typeof changed = [];
    await until(
      'every changed plan recorded so far to be at the hub',
      async () => {
        missing = [];
        for (const c of changed) if (!(await hubRuns(w, c.component)).includes(c.runId)) missing.push(c);
        return missing.length === 0;
      },
      180_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; missing ${JSON.stringify(missing)}, ${drop.dropped} pushes dropped`);
    });
    expect(drop.dropped).toBeGreaterThanOrEqual(3);
    // the agent took each 204 for custody (no failed push, nothing resent) and the hub refused nothing
    expect(w.logLines('ship-1', /upstream rejected a bundle/)).toEqual([]);
    expect(await w.hubMetric('hub_bundles_refused_total')).toBe(0);
    // the pushes that went through came through the hop, as v2 with custody
    expect(hop.seen.some((s) => s.path === '/v2' && s.status === 200)).toBe(true);
  });
});
