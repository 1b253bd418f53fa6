import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeRecordedPlans } from './recordedPlans.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('writeRecordedPlans', () => {
  it('replays the scenario in a loop as the agent command expects: plan JSON with exit 0/2, errors with exit 1', () => {
    const wd = mkdtempSync(join(tmpdir(), 'recorded-'));
    dirs.push(wd);
    const scenario = {
      seed: 3,
      by: 'runs',
      loop: true,
      steps: [{ state: 'changes' }, { state: 'failed' }, { state: 'locked' }, { state: 'clean' }],
    };
    writeRecordedPlans(wd, scenario, 'network', 'prod');
    const runs = Array.from({ length: 5 }, () =>
      spawnSync('sh', [join(wd, 'plan.sh')], { encoding: 'utf8' }),
    );
    expect(runs.map((r) => r.status)).toEqual([2, 1, 1, 0, 2]);
    const plan = JSON.parse(runs[0]!.stdout) as { resource_changes: unknown[]; format_version: string };
    expect(plan.resource_changes.length).toBeGreaterThan(0);
    expect(runs[4]!.stdout).toBe(runs[0]!.stdout);
    expect(runs[1]!.stderr).toContain('Error');
    expect(runs[2]!.stderr).toContain('Error acquiring the state lock');
    expect(() => JSON.parse(runs[3]!.stdout)).not.toThrow();
  });

  it('stays at the last step of a scenario that does not loop, as the fake terraform does (a held lock)', () => {
    const wd = mkdtempSync(join(tmpdir(), 'recorded-'));
    dirs.push(wd);
    const scenario = {
      seed: 3,
      by: 'runs',
      loop: false,
      steps: [{ state: 'clean', runs: 2 }, { state: 'locked' }],
    };
    writeRecordedPlans(wd, scenario, 'network', 'prod');
    const runs = Array.from({ length: 6 }, () =>
      spawnSync('sh', [join(wd, 'plan.sh')], { encoding: 'utf8' }),
    );
    expect(runs.map((r) => r.status)).toEqual([0, 0, 1, 1, 1, 1]);
    expect(runs[5]!.stderr).toBe(runs[2]!.stderr);
    expect(runs[5]!.stderr).toContain('Lock Info:');
  });
});
