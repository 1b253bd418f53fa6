import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runProgram } from '../../src/topology/programs.js';
import { eatDownlink } from '../../src/world/hostile/clockAttacks.js';
import { until } from '../support.js';
import { startVirtualWorld } from './virtualWorld.js';
import type { World } from './world.js';

/**
 * An agent with two upstreams, the first a hop that eats its downlink (docs/decisions/300): the agent
 * pulls from every upstream that answers, so the honest one (here the hub itself) still brings the plan
 * request, which is acted on once and ends `done`.
 */

let world: World | undefined;
afterAll(() => world?.stop());

describe('hostile relay: an agent with two upstreams, the first eating its downlink', () => {
  it('takes the plan request from the honest upstream; the eaten copy shadows nothing', async () => {
    world = await startVirtualWorld({ agentsVia: 'proxy' });
    const w = world;
    const proxy = w.agentSide;
    if (!proxy) throw new Error('the world has no agent-side proxy');
    await until('the start-up run at the hub', async () => {
      const r = await w.api('/api/cells/ship-1/prod/network/runs');
      return r.ok && ((await r.json()) as { runs: unknown[] }).runs.length > 0;
    });

    // The agent's second upstream: the hub directly, with a peer token scoped to its site.
    const hubConfig = join(w.dir, 'hub.yaml');
    const args = [
      'peer',
      '--config',
      hubConfig,
      '--name',
      'ship-1-direct',
      '--sites',
      'ship-1',
      '--no-key',
      '--json',
    ];
    const token = (JSON.parse(await runProgram('hub', args)) as { token: string }).token;
    await w.stopProgram('ship-1');
    const cwd = join(w.dir, 'ship-1');
    writeFileSync(join(cwd, 'token-hub'), token);
    const agentConfig = join(cwd, 'agent.yaml');
    const config = parse(readFileSync(agentConfig, 'utf8')) as { upstreams: unknown[] };
    config.upstreams = [
      { url: proxy.url, tokenFile: './token' },
      { url: w.hubUrl, tokenFile: './token-hub' },
    ];
    writeFileSync(agentConfig, stringify(config));
    const eat = eatDownlink();
    proxy.use(eat);
    w.start('ship-1');

    const created = await until('the hub to accept a plan request', async () => {
      const r = await w.api('/api/plan-requests', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ site: 'ship-1', environment: 'prod', component: 'network' }),
      });
      return r.ok ? ((await r.json()) as { requestId: string }) : false;
    });
    const done = await until(
      'the request to be done',
      async () => {
        const r = (await (await w.api(`/api/plan-requests/${created.requestId}`)).json()) as {
          state: string;
          runId: string | null;
          deliveredAt: string | null;
        };
        return r.state === 'done' ? r : false;
      },
      120_000,
    );
    expect(done.deliveredAt).not.toBeNull();
    // The first upstream did eat its copy; the agent acted on the request once.
    await until('the hop to eat a copy of the request', async () => eat.eaten > 0, 60_000);
    const received = await w.logged('ship-1', /plan request received/);
    expect(received.filter((l) => l.requestId === created.requestId)).toHaveLength(1);
  });
});
