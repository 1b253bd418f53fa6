import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff.js';

describe('backoffDelay', () => {
  it('is zero before any failure', () => {
    expect(backoffDelay(0, 1000, 60_000, () => 0.99)).toBe(0);
  });

  it('doubles its ceiling per failure up to the maximum', () => {
    const top = (n: number) => backoffDelay(n, 1000, 60_000, () => 0.999999);
    expect(top(1)).toBe(999);
    expect(top(3)).toBe(3999);
    expect(top(20)).toBe(59_999);
    expect(top(10_000)).toBe(59_999);
  });

  it('draws the delay anywhere between zero and the ceiling (full jitter)', () => {
    expect(backoffDelay(5, 1000, 60_000, () => 0)).toBe(0);
    expect(backoffDelay(5, 1000, 60_000, () => 0.5)).toBe(8000);
    expect(backoffDelay(4, 1000, 60_000, () => 1)).toBe(8000);
  });
});
