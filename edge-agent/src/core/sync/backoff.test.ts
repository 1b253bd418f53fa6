import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  it('grows with failures and never passes the cap', () => {
    expect(backoffDelay(0, 1000, 60_000, () => 1)).toBe(1000);
    expect(backoffDelay(3, 1000, 60_000, () => 1)).toBe(8000);
    expect(backoffDelay(40, 1000, 60_000, () => 1)).toBe(60_000);
  });

  it('spreads retries between half the ceiling and the ceiling', () => {
    expect(backoffDelay(3, 1000, 60_000, () => 0)).toBe(4000);
  });
});
