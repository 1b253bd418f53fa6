import { describe, expect, it } from 'vitest';
import { applyOutcome } from './apply.js';
import { parseArgs } from './args.js';
import { planOutcome } from './run.js';
import { parseScenario, type Scenario } from './scenario.js';

function scenario(steps: object[]): Scenario {
  const r = parseScenario({ steps, seed: 4 });
  if (!r.ok) throw new Error(r.problems.join('; '));
  return r.scenario;
}

const plan = (s: Scenario, run: number, serial = 0, appliedInstance?: number) =>
  planOutcome({
    scenario: s,
    run,
    elapsedMs: 0,
    component: 'network',
    environment: 'prod',
    out: 'tf.plan',
    detailedExitcode: true,
    serial,
    ...(appliedInstance !== undefined ? { appliedInstance } : {}),
  });

describe('fake terraform apply <planfile>', () => {
  it('applies a saved plan as Terraform reports it, bumps the serial, and the next plan of the step is clean', () => {
    const s = scenario([{ state: 'changes', runs: 3 }, { state: 'drift' }]);
    const p = plan(s, 0);
    expect(p.exitCode).toBe(2);
    const o = applyOutcome({ file: 'tf.plan', content: p.planFile ?? null, state: { serial: 0 }, seed: 4 });
    expect(o.exitCode).toBe(0);
    expect(o.stdout).toMatch(/: Modifying\.\.\.\n.*: Modifications complete after \d+s \[id=[0-9a-f]{12}\]/);
    expect(o.stdout).toMatch(/\nApply complete! Resources: \d+ added, \d+ changed, \d+ destroyed\.\n$/);
    expect(o.nextState).toEqual({ serial: 1, appliedInstance: 0 });
    // Same step (runs 0-2): nothing left to do; the next step plans as its scenario says.
    expect(plan(s, 1, 1, 0).exitCode).toBe(0);
    expect(plan(s, 1, 1, 0).stdout).toContain('No changes. Your infrastructure matches the configuration.');
    expect(plan(s, 3, 1, 0).state).toBe('drift');
  });

  it('refuses a saved plan made before the state changed: "Saved plan is stale", state untouched', () => {
    const s = scenario([{ state: 'changes' }]);
    const o = applyOutcome({
      file: 'tf.plan',
      content: plan(s, 0, 0).planFile ?? null,
      state: { serial: 1 },
      seed: 4,
    });
    expect(o.exitCode).toBe(1);
    expect(o.stderr).toContain('│ Error: Saved plan is stale');
    expect(o.stderr).toContain('The given plan file can no longer be applied because the state was changed');
    expect(o.nextState).toBeUndefined();
  });

  it('fails part-way through for an apply-error step (it plans like changes) or FAKE_TERRAFORM_APPLY=error', () => {
    const s = scenario([{ state: 'apply-error' }]);
    const p = plan(s, 0);
    expect(p.exitCode).toBe(2);
    const o = applyOutcome({ file: 'tf.plan', content: p.planFile ?? null, state: { serial: 0 }, seed: 4 });
    expect(o.exitCode).toBe(1);
    expect(o.stdout).toMatch(/\.\.\.\n$/);
    expect(o.stderr).toMatch(/│ Error: (creating|updating|deleting) [a-z0-9_]+: operation error/);
    expect(o.nextState?.serial).toBe(1); // what was done before the error is in the state
    const forced = applyOutcome({
      file: 'tf.plan',
      content: plan(scenario([{ state: 'changes' }]), 0).planFile ?? null,
      state: { serial: 0 },
      mode: 'error',
      seed: 4,
    });
    expect(forced.exitCode).toBe(1);
  });

  it('refuses what is not a saved plan, and parses apply arguments', () => {
    expect(applyOutcome({ file: 'x', content: null, state: { serial: 0 }, seed: 1 }).stderr).toContain(
      'Failed to load "x" as a plan file',
    );
    expect(applyOutcome({ file: 'x', content: '{}', state: { serial: 0 }, seed: 1 }).exitCode).toBe(1);
    expect(parseArgs(['apply', '-input=false', '-no-color', '-lock-timeout=60s', '/d/p.tfplan'])).toEqual({
      verb: 'apply',
      file: '/d/p.tfplan',
      lockTimeout: '60s',
      chdir: null,
    });
  });
});
