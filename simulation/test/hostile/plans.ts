import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { runProgram } from '../../src/topology/programs.js';
import { until } from '../support.js';
import type { World } from './world.js';

/** What the hostile files on hop v2 do again and again: plan requests, and a second upstream. */

export interface PlanRequest {
  state: string;
  runId: string | null;
  deliveredAt: string | null;
  unconfirmed?: boolean;
}

export const planRequest = async (w: World, id: string) =>
  (await (await w.api(`/api/plan-requests/${id}`)).json()) as PlanRequest;

/** Queues a plan of `site`'s network cell at the hub; answers its id. */
export async function askPlan(w: World, site = 'ship-1'): Promise<string> {
  const created = await until('the hub to accept a plan request', async () => {
    const r = await w.api('/api/plan-requests', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ site, environment: 'prod', component: 'network' }),
    });
    return r.ok ? ((await r.json()) as { requestId: string }) : false;
  });
  return created.requestId;
}

/** Waits (bounded) until the plan request is done. */
export function planDone(w: World, id: string, ms = 120_000): Promise<PlanRequest> {
  return until(
    `plan request ${id} to be done`,
    async () => {
      const r = await planRequest(w, id);
      return r.state === 'done' ? r : false;
    },
    ms,
  );
}

/**
 * Makes the next plan of `site` differ from the last (a configuration file the fake terraform folds into
 * its plan), so it is a new run with a detail blob, not a confirmation of the cell.
 */
export function changeConfiguration(w: World, site: string, text: string): void {
  writeFileSync(join(w.dir, site, 'infra', 'network', 'main.tf'), `# ${text}\n`);
}

/**
 * Gives `site`'s agent a second upstream, the hub itself (a peer token scoped to the site), after its
 * first (the agent-side proxy). The agent is stopped; the caller sets the attack and starts it.
 */
export async function addHubUpstream(w: World, site = 'ship-1'): Promise<{ config: string; cwd: string }> {
  const proxy = w.agentSide;
  if (!proxy) throw new Error('the world has no agent-side proxy');
  const args = ['peer', '--config', join(w.dir, 'hub.yaml'), '--name', `${site}-direct`, '--sites', site];
  const token = (JSON.parse(await runProgram('hub', [...args, '--no-key', '--json'])) as { token: string })
    .token;
  await w.stopProgram(site);
  const cwd = join(w.dir, site);
  writeFileSync(join(cwd, 'token-hub'), token);
  const config = join(cwd, 'agent.yaml');
  const yaml = parse(readFileSync(config, 'utf8')) as { upstreams: unknown[] };
  yaml.upstreams = [
    { url: proxy.url, tokenFile: './token' },
    { url: w.hubUrl, tokenFile: './token-hub' },
  ];
  writeFileSync(config, stringify(yaml));
  return { config, cwd };
}
