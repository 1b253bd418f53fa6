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

/** Waits (bounded) until the plan request is done; a timeout says what each program logged last. */
export function planDone(w: World, id: string, ms = 120_000): Promise<PlanRequest> {
  let last: PlanRequest | null = null;
  return until(
    `plan request ${id} to be done`,
    async () => {
      last = await planRequest(w, id);
      return last.state === 'done' ? last : false;
    },
    ms,
  ).catch((e: Error) => {
    const tail = (name: string) => (w.programs.get(name)?.stderr ?? '').split('\n').slice(-15).join('\n');
    const programs = [...w.programs.keys()].map((p) => `--- ${p} ---\n${tail(p)}`).join('\n');
    throw new Error(`${e.message} (last: ${JSON.stringify(last)})\n${programs}`);
  });
}

/**
 * What the fake terraform plans for `site`'s cell from now on (its scenario file, simulation/README.md):
 * `changes` with a configuration file of `text` (which it folds into the plan), so the next plan is a new
 * run with its detail blob; `clean` the same clean plan every time, so each re-plan only confirms the cell.
 */
export function nextPlans(w: World, site: string, plans: { changes: string } | 'clean'): void {
  const dir = join(w.dir, site, 'infra', 'network');
  const state = plans === 'clean' ? 'clean' : 'changes';
  writeFileSync(join(dir, 'fake-terraform.json'), JSON.stringify({ steps: [{ state }] }));
  if (plans !== 'clean') writeFileSync(join(dir, 'main.tf'), `# ${plans.changes}\n`);
}

/** Stops `site`'s agent and rewrites its configuration with `edit`; the caller starts it again. */
export async function reconfigureAgent(
  w: World,
  site: string,
  edit: (config: Record<string, unknown>) => void,
): Promise<{ config: string; cwd: string }> {
  await w.stopProgram(site);
  const cwd = join(w.dir, site);
  const config = join(cwd, 'agent.yaml');
  const yaml = parse(readFileSync(config, 'utf8')) as Record<string, unknown>;
  edit(yaml);
  writeFileSync(config, stringify(yaml));
  return { config, cwd };
}

/**
 * Gives `site`'s agent a second upstream, the hub itself (a peer token scoped to the site), after its
 * first (the agent-side proxy, or `first`). The agent is stopped; the caller sets the attack and starts it.
 */
export async function addHubUpstream(
  w: World,
  site = 'ship-1',
  /** The agent's first upstream; default the agent-side proxy. */
  first?: string,
): Promise<{ config: string; cwd: string }> {
  const url = first ?? w.agentSide?.url;
  if (!url) throw new Error('the world has no agent-side proxy');
  const args = ['peer', '--config', join(w.dir, 'hub.yaml'), '--name', `${site}-direct`, '--sites', site];
  const token = (JSON.parse(await runProgram('hub', [...args, '--no-key', '--json'])) as { token: string })
    .token;
  writeFileSync(join(w.dir, site, 'token-hub'), token);
  return reconfigureAgent(w, site, (c) => {
    c.upstreams = [
      { url, tokenFile: './token' },
      { url: w.hubUrl, tokenFile: './token-hub' },
    ];
  });
}

/** When the hub says `site`'s network cell was planned and received (0 when it has none). */
export async function cellTimes(w: World, site = 'ship-1') {
  const m = (await (await w.api(`/api/matrix?site=${site}`)).json()) as {
    cells: Array<{ component: string; plannedAt: string | null; receivedAt: string | null }>;
  };
  const cell = m.cells.find((c) => c.component === 'network');
  return {
    plannedAt: Date.parse(cell?.plannedAt ?? '') || 0,
    receivedAt: Date.parse(cell?.receivedAt ?? '') || 0,
  };
}

/** How many runs of `site`'s network cell the hub holds. */
export async function runCount(w: World, site = 'ship-1'): Promise<number> {
  const r = await w.api(`/api/cells/${site}/prod/network/runs`);
  return r.ok ? ((await r.json()) as { runs: unknown[] }).runs.length : 0;
}

/** The hub's word on `site`'s first agent: its clock and when it was last heard from. */
export async function agentAtHub(w: World, site = 'ship-1') {
  const s = (await (await w.api(`/api/sites/${site}`)).json()) as {
    lastContactAt: string | null;
    agents: Array<{
      agent: string;
      lastContactAt: string | null;
      clockOffsetMs: number | null;
      clockOffsetUncertaintyMs: number | null;
      clockHeld: { reason: string; offsetMs: number; via: string } | null;
    }>;
  };
  const agent = s.agents[0];
  if (!agent) throw new Error(`no agent of ${site} at the hub`);
  return { siteContactAt: s.lastContactAt, ...agent };
}
