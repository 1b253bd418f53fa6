import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runScenario } from '../src/scenario/runScenario.js';
import { SCENARIOS } from '../src/scenario/scenarios.js';

describe('a short time-compressed scenario (hub, relay, agents as processes over emulated links)', () => {
  it('delivers everything produced: 0 lost, 0 duplicated, through SIGKILLs of every node', {
    timeout: 300_000,
  }, async () => {
    const report = await runScenario({
      scenario: SCENARIOS.chaos!,
      durationS: 25,
      // agents SIGKILLed every few seconds produced nothing in 25 s on a loaded machine (three whole runs)
      minProduced: 5,
      dir: mkdtempSync(join(tmpdir(), 'driftline-sim-')),
      sites: 2,
      settleTimeoutS: 120,
      seed: 11,
    });
    expect(report.produced).toBeGreaterThan(4);
    expect(report.kills.length).toBeGreaterThan(0);
    expect(report.lostRunIds).toEqual([]);
    expect(report.lost).toBe(0);
    expect(report.duplicated).toBe(0);
    expect(report.delivered).toBe(report.produced);
    expect(report.links['relay->hub']?.up).toBeGreaterThan(0);
    expect(report.convergenceMs).toBeGreaterThanOrEqual(0);
  });
});
