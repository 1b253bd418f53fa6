import { describe, expect, it } from 'vitest';
import { runWorld } from './runWorld.js';

/**
 * Control at the first contact that could carry it (`controlWatch.ts`): a day of three sites behind 4-minute
 * links up two hours in six, each asked for a plan four times. Every request a contact could carry is at its
 * agent within 1.2 round trips of that contact; none is acted on after it expired. Before the agent sent its
 * pulls as soon as a probe answered after a down link (not a push's round trip later), seed 7's second day
 * had a request 15.5 min after it was made where 9.6 min were due.
 */
describe('control at the first contact that could carry it', () => {
  it('holds for every request a contact could carry, and none is taken after it expired', async () => {
    const r = await runWorld({ seed: 7, sites: 3, days: 1, faults: [] });
    const control = r.invariants.find((i) => i.name.startsWith('control at the first contact'));
    const expiry = r.invariants.find((i) => i.name === 'no plan request acted on after it expired');
    expect(control?.held, control?.detail).toBe(true);
    expect(expiry?.held, expiry?.detail).toBe(true);
    // the run judged some: a contact could carry them
    const judged = Number(/^(\d+) requests a contact could carry/.exec(control?.detail ?? '')?.[1] ?? 0);
    expect(judged).toBeGreaterThan(0);
    expect(r.held).toBe(true);
  });
});
