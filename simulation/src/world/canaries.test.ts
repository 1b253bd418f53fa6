import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fakeTerraform } from '../terraform/fakeTerraformMain.js';
import { Canaries } from './canaries.js';

describe("the world's canaries", () => {
  it("are the secrets the world's fake terraform really prints in a plan the agent must strip", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'driftline-canaries-'));
    try {
      const stack = join(dir, 'stack-0');
      mkdirSync(stack);
      writeFileSync(join(stack, 'main.tf'), '# a world site\n');
      const env = { TF_WORKSPACE: 'prod' };
      // the scenario's built-in cycle: run 2 is a plan with changes (the password rotation among them)
      let shown = '';
      for (let run = 0; run < 3; run++) {
        const plan = await fakeTerraform(['plan', '-out=tfplan', '-detailed-exitcode'], env, stack);
        if (plan.exitCode !== 0 && plan.exitCode !== 2) {
          shown += plan.stderr;
          continue;
        }
        shown += (await fakeTerraform(['show', '-json', 'tfplan'], env, stack)).stdout;
      }
      const canaries = new Canaries(1, 1, ['prod']);
      canaries.check('the raw plans', shown);
      expect(canaries.found.length).toBeGreaterThan(0);
      expect(canaries.invariant().held).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds where none is found, and names where one was without printing it', () => {
    const canaries = new Canaries(2);
    canaries.check('an answer', '{"status":"changes","redacted":"(sensitive value)"}');
    expect(canaries.invariant()).toMatchObject({ held: true });
    const secret = canaries.values[0] as string;
    canaries.check('a hub commit', `{"x":"${secret}"}`);
    const broke = canaries.invariant();
    expect(broke.held).toBe(false);
    expect(broke.detail).toContain('a hub commit holds');
    expect(broke.detail).not.toContain(secret);
  });
});
