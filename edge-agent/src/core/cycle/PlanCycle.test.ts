import { createHash } from 'node:crypto';
import { brotliDecompressSync } from 'node:zlib';
import * as A from '@automerge/automerge';
import { AgentDocSchema, asSiteId, type PlanSummary, plainAgentDoc } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryAgentStorage } from '../../adapters/memory/MemoryAgentStorage.js';
import { AgentLedger } from '../ledger/AgentLedger.js';
import type { RunPlanOptions, RunPlanResult } from '../plan/runPlan.js';
import type { CellRef, TriggerReason } from '../schedule/CellScheduler.js';
import { type CellApplies, type CycleFacts, PlanCycle, type PlanCycleDeps } from './PlanCycle.js';

const T0 = Date.parse('2026-11-01T10:00:00Z');
const COMMIT = 'c'.repeat(40);

const summary = (over: Partial<PlanSummary> = {}): PlanSummary => ({
  component: 'network',
  environment: 'prod',
  status: 'changes',
  counts: { add: 1, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 },
  resources: [],
  startedAt: new Date(T0).toISOString(),
  finishedAt: new Date(T0 + 1000).toISOString(),
  planHash: 'a'.repeat(64) as PlanSummary['planHash'],
  ...over,
});

/** The apply side as the cycle sees it: nothing waits unless `waiting` names a run; every call noted. */
class NotedApplies implements CellApplies {
  readonly recorded: { runId: string; unchanged: boolean; applied?: string }[] = [];
  waiting: string | undefined;
  keepFails = false;
  async applyFirst(): Promise<string | undefined> {
    const w = this.waiting;
    this.waiting = undefined;
    return w;
  }
  keepsPlanFile(): boolean {
    return false;
  }
  mayConfirm(): boolean {
    return true;
  }
  async planRecorded(_c: CellRef, runId: string, _r: RunPlanResult, unchanged: boolean, applied?: string) {
    if (this.keepFails) throw new Error('disk full');
    this.recorded.push({ runId, unchanged, ...(applied ? { applied } : {}) });
  }
}

const ledgers: AgentLedger[] = [];
afterEach(() => {
  for (const l of ledgers.splice(0)) l.close();
});

/** A cycle over the agent's ledger in memory; plans answer from `results` in turn. */
function setup(over: Partial<PlanCycleDeps> = {}) {
  const storage = new MemoryAgentStorage();
  const ledger = new AgentLedger(storage, { site: 'ship-7', agent: 'a1', now: () => T0 + 5000 });
  ledgers.push(ledger);
  const results: RunPlanResult[] = [];
  const planned: { cell: CellRef; options: RunPlanOptions }[] = [];
  const triggered: { cell: CellRef; reason: TriggerReason }[] = [];
  const warnings: string[] = [];
  const factsWritten: CycleFacts[] = [];
  const applies = new NotedApplies();
  let kicks = 0;
  let ids = 0;
  const facts: CycleFacts = { version: '0.1.0', cadenceS: { 'prod/network': 3600 }, platform: 'linux_amd64' };
  const cycle = new PlanCycle({
    plan: async (cell, options) => {
      planned.push({ cell, options });
      const r = results.shift();
      if (!r) throw new Error('the test gave no result for this plan');
      return r;
    },
    applies,
    ledger: {
      lockedStreak: (e, c, r) => ledger.lockedStreak(e, c, r),
      planStarting: (c) => ledger.planStarting(c),
      updateFacts: (f) => {
        factsWritten.push(structuredClone(f));
        return ledger.updateFacts(f);
      },
    },
    record: async (input) => ledger.record(input),
    newId: () => `01JD00000000000000000000${String(++ids).padStart(2, '0')}`,
    trigger: (cell, reason) => triggered.push({ cell, reason }),
    kick: () => kicks++,
    facts,
    repos: [],
    heads: async () => ({}),
    cellsForNewHeads: () => [],
    log: { info: () => {}, warn: (_o, m) => warnings.push(m) },
    ...over,
  });
  return {
    cycle,
    storage,
    ledger,
    results,
    planned,
    triggered,
    warnings,
    facts,
    factsWritten,
    applies,
    kicks: () => kicks,
  };
}

const cell: CellRef = { component: 'network', environment: 'prod' };

describe('PlanCycle', () => {
  it('records a plan with its detail packed as brotli under the sha256 of the packed bytes, then wakes the sync loop', async () => {
    const t = setup();
    const canonical = JSON.stringify({ resources: ['aws_vpc.main'] });
    t.results.push({ summary: summary(), canonical, lockedStreak: 0 });
    await t.cycle.runCell(cell, 'schedule');
    const [run] = t.storage.cellRuns('prod', 'network', null, 10);
    expect(run).toMatchObject({ runId: '01JD0000000000000000000001', status: 'changes', unchanged: false });
    const blob = t.storage.blobsToUpload(10).find((b) => b.sha256 === run?.detailBlob);
    expect(blob).toBeDefined();
    const bytes = blob?.data as Uint8Array;
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(run?.detailBlob);
    expect(brotliDecompressSync(bytes).toString()).toBe(canonical);
    expect(t.kicks()).toBe(1);
  });

  it('says a requested plan started, and wakes the sync loop, before the plan runs (decision 560)', async () => {
    const seen: { kicks: number; startedAt: unknown }[] = [];
    const t = setup({
      plan: async () => {
        const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(t.ledger.loadEpoch(t.ledger.currentEpoch()))));
        seen.push({ kicks: t.kicks(), startedAt: doc.requests?.R1?.startedAt });
        return { summary: summary(), canonical: '{}', lockedStreak: 0 };
      },
    });
    const req = { type: 'plan-request' as const, requestId: 'R1', site: asSiteId('ship-7'), ...cell };
    t.ledger.recordPlanRequest({ ...req, requestedAt: T0, expiresAt: T0 + 86_400_000 }, 'accepted', null);
    await t.cycle.runCell(cell, 'request');
    expect(seen).toEqual([{ kicks: 1, startedAt: T0 + 5000 }]);
    // A plan of the cell with no request waiting says nothing more and wakes the loop only with its result.
    await t.cycle.runCell(cell, 'schedule');
    expect(seen[1]).toEqual({ kicks: 2, startedAt: T0 + 5000 });
  });

  it('keeps no detail of a redaction failure, even when the runner returned one', async () => {
    const t = setup();
    t.results.push({
      summary: summary({ status: 'redaction-failed', reason: 'aws-key', counts: undefined }),
      canonical: '{"leak":true}',
      lockedStreak: 0,
    });
    await t.cycle.runCell(cell, 'schedule');
    expect(t.storage.cellRuns('prod', 'network', null, 10)[0]).toMatchObject({
      status: 'redaction-failed',
      detailBlob: null,
    });
  });

  it("carries the cell's locked streak from the ledger into the next plan", async () => {
    const t = setup();
    t.results.push({
      summary: summary({ status: 'locked', counts: undefined, planHash: undefined }),
      lockedStreak: 1,
    });
    t.results.push({ summary: summary(), canonical: '{}', lockedStreak: 0 });
    await t.cycle.runCell(cell, 'schedule');
    await t.cycle.runCell(cell, 'schedule');
    expect(t.planned.map((p) => p.options.lockedStreak)).toEqual([0, 1]);
  });

  it('applies the approved plan waiting for the slot first and names the new run its next plan', async () => {
    const t = setup();
    t.applies.waiting = '01JD0000000000000000000099';
    t.results.push({ summary: summary(), canonical: '{}', lockedStreak: 0 });
    await t.cycle.runCell(cell, 'apply');
    expect(t.applies.recorded).toEqual([
      { runId: '01JD0000000000000000000001', unchanged: false, applied: '01JD0000000000000000000099' },
    ]);
  });

  it('records the result and wakes the sync loop when keeping the plan file fails, with a warning', async () => {
    const t = setup();
    t.applies.keepFails = true;
    t.results.push({ summary: summary(), canonical: '{}', lockedStreak: 0 });
    await t.cycle.runCell(cell, 'schedule');
    expect(t.storage.cellRuns('prod', 'network', null, 10)).toHaveLength(1);
    expect(t.warnings).toEqual(['keeping the plan file failed']);
    expect(t.kicks()).toBe(1);
  });

  it('plans a cell blocked on providers again at its commit when a build arrives, and not once it plans', async () => {
    const t = setup();
    const blocked = summary({
      status: 'blocked',
      reason: 'providers-missing',
      counts: undefined,
      planHash: undefined,
      git: { commit: COMMIT },
    });
    const pr: CellRef = { component: 'network', environment: 'prod', ref: 'pr/42' };
    t.results.push({ summary: blocked, lockedStreak: 0 });
    await t.cycle.runCell(pr, 'source');
    t.cycle.providerArrived('/mirror/registry.terraform.io/hashicorp/aws');
    expect(t.triggered).toEqual([{ cell: { ...pr, commit: COMMIT }, reason: 'source' }]);

    t.results.push({ summary: summary(), canonical: '{}', lockedStreak: 0 });
    await t.cycle.runCell({ ...pr, commit: COMMIT }, 'source');
    t.cycle.providerArrived('/mirror/registry.terraform.io/hashicorp/null');
    expect(t.triggered).toHaveLength(1);
  });

  it("puts the mirrors' heads and provider builds into the facts and the ledger", async () => {
    const t = setup({
      repos: ['infra'],
      heads: async (repo): Promise<Record<string, string>> => (repo === 'infra' ? { main: COMMIT } : {}),
      providerBuilds: async () => ['registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64'],
    });
    await t.cycle.refreshSources();
    expect(t.facts.sources).toEqual({ infra: { main: COMMIT } });
    expect(t.facts.providers).toEqual(['registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64']);
    expect(t.factsWritten.at(-1)).toMatchObject({ sources: { infra: { main: COMMIT } } });
    expect(t.kicks()).toBe(1);
  });

  it('writes no facts when the site plans from no repository and holds no provider mirror', async () => {
    const t = setup();
    await t.cycle.refreshSources();
    expect(t.factsWritten).toEqual([]);
    expect(t.kicks()).toBe(0);
  });

  it('plans the cells a bundle brought new heads for', () => {
    const pr: CellRef = { component: 'network', environment: 'prod', ref: 'pr/7', commit: COMMIT };
    const t = setup({ cellsForNewHeads: (repo) => (repo === 'infra' ? [pr] : []) });
    t.cycle.headsArrived('infra', { 'pr/7': COMMIT });
    expect(t.triggered).toEqual([{ cell: pr, reason: 'source' }]);
  });

  it("tells the ledger a cron round's plan and its cell's cadence, and no other run's (decision 485)", async () => {
    const seen: { reason: TriggerReason; everyS?: number }[] = [];
    let reason: TriggerReason = 'schedule';
    const t = setup({
      record: async (input) => {
        seen.push({ reason, ...(input.scheduledEveryS ? { everyS: input.scheduledEveryS } : {}) });
        return { epoch: 1, unchanged: false, sealed: false };
      },
    });
    for (reason of ['schedule', 'start', 'request', 'manual', 'source', 'apply'] as TriggerReason[]) {
      t.results.push({ summary: summary(), canonical: '{}', lockedStreak: 0 });
      await t.cycle.runCell(cell, reason);
    }
    expect(seen).toEqual([
      { reason: 'schedule', everyS: 3600 },
      { reason: 'start' },
      { reason: 'request' },
      { reason: 'manual' },
      { reason: 'source' },
      { reason: 'apply' },
    ]);
  });
});
