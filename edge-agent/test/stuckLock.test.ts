import { mkdirSync, mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TmpScratchSpace } from '../src/adapters/fs/TmpScratchSpace.js';
import { MemoryAgentStorage } from '../src/adapters/memory/MemoryAgentStorage.js';
import { NodeProcessRunner } from '../src/adapters/process/NodeProcessRunner.js';
import { type AgentConfig, parseConfig } from '../src/config.js';
import { PlanCycle } from '../src/core/cycle/PlanCycle.js';
import { AgentLedger } from '../src/core/ledger/AgentLedger.js';
import { runPlan } from '../src/core/plan/runPlan.js';
import { fixturePath } from './fixtures.js';

const T0 = Date.parse('2026-11-01T10:00:00Z');
let dir: string;
let binDir: string;

function config(): AgentConfig {
  const r = parseConfig(
    `
site: ship-7
agent: a1
dataDir: ${dir}/data
hubPublicKeyFile: ${dir}/hub.pub
upstreams: [{ url: "http://127.0.0.1:1", tokenFile: ${dir}/token }]
components:
  - name: network
    workingDir: ${dir}/infra
    environments: [prod]
    lockRetryThreshold: 3
`,
    dir,
  );
  if (!r.ok) throw new Error(r.problems.join('\n'));
  return r.config;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stucklock-'));
  binDir = join(dir, 'bin');
  mkdirSync(binDir);
  mkdirSync(join(dir, 'infra'));
  symlinkSync(fixturePath('fake-terraform'), join(binDir, 'terraform'));
});

const ledgers: AgentLedger[] = [];
afterAll(() => {
  for (const l of ledgers.splice(0)) l.close();
});

/** The daemon's plan cycle over the ledger, planning with the fake terraform: `held` says whether the lock is. */
function site() {
  const ledger = new AgentLedger(new MemoryAgentStorage(), { site: 'ship-7', agent: 'a1', now: () => T0 });
  ledgers.push(ledger);
  const cfg = config();
  const seen: string[] = [];
  let ids = 0;
  const state = { held: true };
  const cycle = new PlanCycle({
    plan: async (cell, options) => {
      const r = await runPlan(
        cell.component,
        cell.environment,
        cfg,
        {
          proc: new NodeProcessRunner(),
          git: { describe: async () => undefined },
          scratch: new TmpScratchSpace(dir),
          clock: { now: () => T0 },
          baseEnv: {
            PATH: `${binDir}:${process.env.PATH}`,
            FAKE_TF_SCENARIO: state.held ? 'lock' : 'changes',
            FAKE_TF_PLAN_JSON: fixturePath('plans/v1.2-kitchen-sink.json'),
          },
        },
        options,
      );
      seen.push(r.summary.reason ? `${r.summary.status}/${r.summary.reason}` : r.summary.status);
      return r;
    },
    applies: {
      applyFirst: async () => undefined,
      keepsPlanFile: () => false,
      mayConfirm: () => true,
      planRecorded: async () => {},
    },
    ledger: {
      lockedStreak: (e, c, r) => ledger.lockedStreak(e, c, r),
      planStarting: (c) => ledger.planStarting(c),
      updateFacts: (f) => ledger.updateFacts(f),
    },
    record: async (input) => ledger.record(input),
    newId: () => `01JD00000000000000000000${String(++ids).padStart(2, '0')}`,
    trigger: () => {},
    kick: () => {},
    facts: { version: '0.1.0', cadenceS: { 'prod/network': 60 }, platform: 'linux_amd64' },
    repos: [],
    heads: async () => ({}),
    cellsForNewHeads: () => [],
    log: { info: () => {}, warn: () => {} },
  });
  return { cycle, seen, state };
}

describe('a state lock held across runs', () => {
  it('stays stuck-lock from the run that makes it stuck until a run gets the lock', async () => {
    const s = site();
    const cell = { component: 'network', environment: 'prod' };
    for (let i = 0; i < 6; i++) await s.cycle.runCell(cell, 'schedule');
    s.state.held = false;
    await s.cycle.runCell(cell, 'schedule');
    s.state.held = true;
    await s.cycle.runCell(cell, 'schedule');
    expect(s.seen).toEqual([
      'locked/state-locked',
      'locked/state-locked',
      'failed/stuck-lock',
      'failed/stuck-lock',
      'failed/stuck-lock',
      'failed/stuck-lock',
      'changes',
      'locked/state-locked',
    ]);
  });
});
