import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { summarisePlan } from '../src/core/plan/summarisePlan.js';

const SIM_TERRAFORM = fileURLToPath(new URL('../../simulation/bin/terraform', import.meta.url));

const ctx = (component: string, environment: string) => ({
  component,
  environment,
  startedAt: '2025-01-01T00:00:00.000Z',
  finishedAt: '2025-01-01T00:00:00.000Z',
});

/** Plans from the simulation's fake terraform: every state and variant, three sites. */
function simulationPlans(): { name: string; plan: Record<string, unknown> }[] {
  const root = mkdtempSync(join(tmpdir(), 'sweep-'));
  const out: { name: string; plan: Record<string, unknown> }[] = [];
  const steps = ['clean', 'changes', 'changes\n    variant: 1', 'drift', 'drift\n    variant: 1'];
  for (const [seed, extra] of [
    [1, 0],
    [7, 0],
    [42, 40],
  ] as const) {
    const dir = join(root, `network${seed}`);
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'fake-terraform.yaml'),
      `environment: prod\nseed: ${seed}\nextraResources: ${extra}\nsteps:\n${steps.map((s) => `  - state: ${s}`).join('\n')}\n`,
    );
    for (let i = 0; i < steps.length; i++) {
      const run = (...args: string[]) =>
        spawnSync(SIM_TERRAFORM, args, { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
      expect(run('plan', '-out=p.tfplan', '-detailed-exitcode').status).not.toBe(1);
      const show = run('show', '-json', 'p.tfplan');
      expect(show.status).toBe(0);
      out.push({ name: `seed ${seed} step ${i}`, plan: JSON.parse(show.stdout) });
    }
  }
  return out;
}

describe('redaction sweep over generated plans', () => {
  it('withholds none of the simulation plans, masks none of their addresses, and lets none of their secrets out', {
    // a hang guard: 15 plans made by processes, 120 s ran out beside a whole run on a slow machine
    timeout: 300_000,
  }, () => {
    const plans = simulationPlans();
    expect(plans).toHaveLength(15);
    const withheld: string[] = [];
    const masked: string[] = [];
    for (const { name, plan } of plans) {
      const r = summarisePlan(plan, ctx('network', 'prod'));
      expect(r.ok).toBe(true);
      if (!r.ok) continue;
      if (r.summary.status === 'redaction-failed') withheld.push(`${name}: ${r.redactionHit}`);
      // No for_each key of these plans comes from a variable (decision 210): nothing to mask.
      for (const x of r.summary.resources ?? []) if (x.address.includes('\u27E8')) masked.push(x.address);
      const vars = plan.variables as Record<string, { value: string }>;
      const text = JSON.stringify(r) + (r.canonical ?? '');
      for (const v of ['api_token', 'db_password']) expect(text).not.toContain(vars[v]?.value);
    }
    expect(withheld).toEqual([]);
    expect(masked).toEqual([]);
  });
});
