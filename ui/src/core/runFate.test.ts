import { describe, expect, it } from 'vitest';
import { supersededBy } from './runFate.js';

const run = { runId: '01B', ref: 'main' };

describe('supersededBy', () => {
  it('names the newest later run of the same ref whose plan changed', () => {
    expect(
      supersededBy(run, [
        { runId: '01C', ref: 'main', unchanged: false },
        { runId: '01D', ref: 'main', unchanged: false },
        { runId: '01A', ref: 'main', unchanged: false },
      ]),
    ).toBe('01D');
  });

  it('keeps a run approvable past unchanged re-plans, other refs and itself', () => {
    expect(
      supersededBy(run, [
        { runId: '01B', ref: 'main', unchanged: false },
        { runId: '01C', ref: 'main', unchanged: true },
        { runId: '01D', ref: 'pr/4', unchanged: false },
      ]),
    ).toBeNull();
    expect(supersededBy({ runId: '01B', ref: null }, [{ runId: '01C', unchanged: false }])).toBe('01C');
  });
});
