import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { runProgram } from '../../src/topology/programs.js';
import { dripPulls, silentPulls } from '../../src/world/hostile/attacks.js';
import { silentHop } from '../../src/world/hostile/wire2Attacks.js';
import { until } from '../support.js';
import { startWorld, type World } from './world.js';

/**
 * An agent with two upstreams, the first a hop that (a) holds every downlink pull open without a word,
 * then (b) drips its answers a byte at a time; the second honest (the hub itself). Each upstream's
 * downlink is its own lane (docs/decisions/410-independent-downlinks.md): the plan request still comes
 * through the honest one, and the hostile one's answers are cut after `sync.stallS`, counted, and named
 * by `edge-agent status`.
 */

let world: World | undefined;
afterAll(() => world?.stop());

type Upstream = { url: string; stalls: number; lastStallAt: number | null };

describe('hostile relay: an agent with two upstreams, the first stalling its downlink', () => {
  it('takes plan requests through the honest upstream while the other holds pulls silent, then drips', {
    timeout: 300_000,
  }, async () => {
    world = await startWorld({ agentsVia: 'proxy', agentSync: { stallS: 3 } });
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
    const silent = silentPulls();
    proxy.use(silent);
    w.start('ship-1');

    const requestPlan = async () => {
      const created = await until('the hub to accept a plan request', async () => {
        const r = await w.api('/api/plan-requests', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ site: 'ship-1', environment: 'prod', component: 'network' }),
        });
        return r.ok ? ((await r.json()) as { requestId: string }) : false;
      });
      const at = Date.now();
      await until(
        `request ${created.requestId} to be done`,
        async () => {
          const r = (await (await w.api(`/api/plan-requests/${created.requestId}`)).json()) as {
            state: string;
          };
          return r.state === 'done';
        },
        120_000,
      );
      const received = (await w.logged('ship-1', /plan request received/)).filter(
        (l) => l.requestId === created.requestId,
      );
      expect(received).toHaveLength(1);
      // how long control took to reach the agent (printed for the record; no limit asserted)
      console.log(`plan request received ${Number(received[0]?.time) - at} ms after it was queued`);
    };
    const stalled = async (atLeast: number) =>
      until(`the agent to count ${atLeast} stall(s) of ${proxy.url}`, async () => {
        const s = await w.agentStatus('ship-1');
        const up = (s.upstreams as Upstream[]).find((u) => u.url === proxy.url);
        return up && up.stalls >= atLeast && (s.upstreamStalls as number) >= atLeast ? up : false;
      });

    // (a) pulls held without a word: the request comes through the hub, and the silent pulls are cut
    await requestPlan();
    await until('the hop to hold a pull', async () => silent.held > 0);
    const a = await stalled(1);
    expect(a.lastStallAt).not.toBeNull();
    await w.logged('ship-1', /stalled and was cut/);
    const text = await runProgram('agent', ['status', '--config', agentConfig], { cwd });
    expect(text).toMatch(new RegExp(`${proxy.url.replace(/[.]/g, '\\.')}.*\\n\\s+STALLED`));

    // (b) answers dripped a byte at a time: cut under the floor rate, and control still comes through
    const drip = dripPulls(250);
    proxy.use(drip);
    await requestPlan();
    await until('the agent to cut a dripping answer', async () => drip.cut > 0 && drip.dripped > 0);
    await stalled(a.stalls + 1);

    // (c) a hung relay: every request taken, none answered, batches included. The result goes up through
    // the hub once the batch to the hop is cut (the hop's round trip, stallS and the batch's bytes at the
    // floor rate), not after the request's timeout of 30 minutes (docs/decisions/515-answers-due-at-once.md)
    const hung = silentHop();
    proxy.use(hung);
    await requestPlan();
    expect(hung.pushes).toBeGreaterThan(0);
  });
});
