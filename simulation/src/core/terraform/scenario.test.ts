import { describe, expect, it } from 'vitest';
import { parseScenario, pickStep, type Scenario } from './scenario.js';

const scenario = (s: object): Scenario => {
  const r = parseScenario(s);
  if (!r.ok) throw new Error(r.problems.join('; '));
  return r.scenario;
};

describe('scenario', () => {
  const byRuns = scenario({
    steps: [{ state: 'clean', runs: 2 }, { state: 'changes' }, { state: 'locked', runs: 2 }],
  });

  it('walks its steps by run count and loops', () => {
    const states = [0, 1, 2, 3, 4, 5, 6].map((run) => pickStep(byRuns, { run, elapsedMs: 0 }).step.state);
    expect(states).toEqual(['clean', 'clean', 'changes', 'locked', 'locked', 'clean', 'clean']);
  });

  it('stays on the last step when it does not loop', () => {
    const s = { ...byRuns, loop: false };
    expect(pickStep(s, { run: 50, elapsedMs: 0 }).step.state).toBe('locked');
  });

  it('walks its steps by time since the first run', () => {
    const s = scenario({
      by: 'time',
      steps: [
        { state: 'clean', seconds: 10 },
        { state: 'drift', seconds: 5 },
      ],
    });
    expect(pickStep(s, { run: 99, elapsedMs: 9_999 }).step.state).toBe('clean');
    expect(pickStep(s, { run: 0, elapsedMs: 10_000 }).step.state).toBe('drift');
    expect(pickStep(s, { run: 0, elapsedMs: 15_000 }).step.state).toBe('clean');
  });

  it('names what is wrong in a bad scenario', () => {
    const r = parseScenario({ steps: [{ state: 'exploded' }], colour: 1 });
    expect(r.ok).toBe(false);
    const text = !r.ok ? r.problems.join('\n') : '';
    expect(text).toMatch(/steps\.0\.state/);
    expect(text).toMatch(/colour/);
    expect(parseScenario({ steps: [] }).ok).toBe(false);
  });
});
