import type { RunningAgent } from '@driftline/edge-agent';
import { describe, expect, it } from 'vitest';
import { WorldLedger } from './WorldLedger.js';

/** An agent whose ledger holds `runs` unacknowledged, by epoch: all the world's ledger reads of it. */
function agentWith(runs: { runId: string; epoch: number; unchanged?: boolean }[]): RunningAgent {
  const epochs = [...new Set(runs.map((r) => r.epoch))].map((epoch) => ({ epoch }));
  const storage = {
    epochs: () => epochs,
    unackedRuns: (epoch: number) =>
      runs
        .filter((r) => r.epoch === epoch)
        .map((r) => ({
          runId: r.runId,
          component: 'stack-0',
          environment: 'prod',
          status: 'clean',
          finishedAt: 1000,
          unchanged: r.unchanged ?? false,
        })),
  };
  return { storage } as unknown as RunningAgent;
}

describe("the world's ledger, judging each prune as it is written", () => {
  it('passes a prune of an epoch whose runs the hub holds, and names each run a prune would lose', () => {
    const ledger = new WorldLedger();
    const site = ledger.site('site-001');
    ledger.watchAgent(
      site,
      agentWith([
        { runId: 'r1', epoch: 1 },
        { runId: 'r2', epoch: 1, unchanged: true },
        { runId: 'r3', epoch: 2 },
      ]),
    );
    ledger.hubCommitted([{ runId: 'r1', site: 'site-001' }], 2000);
    // epoch 1: r1 at the hub, r2 unchanged (judged at the end): covered
    ledger.agentPruned(site, [1], 3000);
    expect(ledger.prunes).toMatchObject({ epochs: 1, runs: 2, uncovered: 0 });
    // epoch 2: r3 never committed
    ledger.agentPruned(site, [2], 4000);
    expect(ledger.prunes.uncovered).toBe(1);
    expect(ledger.prunes.first[0]).toContain('site-001 epoch 2 r3 stack-0/prod');
  });

  it("does not count another site's commit of the same run id as this site's", () => {
    const ledger = new WorldLedger();
    const site = ledger.site('site-001');
    ledger.watchAgent(site, agentWith([{ runId: 'r1', epoch: 1 }]));
    ledger.hubCommitted([{ runId: 'r1', site: 'site-002' }], 2000);
    ledger.agentPruned(site, [1], 3000);
    expect(ledger.prunes.uncovered).toBe(1);
  });
});
