import { describe, expect, it } from 'vitest';
import { failingChecksText } from './checks.js';

describe('failingChecksText', () => {
  it('names the failing checks, says how many the hub did not name, and is empty when none fails', () => {
    expect(failingChecksText(1, ['check.health'])).toBe('1 failing check: check.health');
    expect(failingChecksText(3, ['check.a', 'check.b'])).toBe(
      '3 failing checks: check.a, check.b and 1 more',
    );
    expect(failingChecksText(2, undefined)).toBe('2 failing checks');
    expect(failingChecksText(0, [])).toBe('');
    expect(failingChecksText(undefined, undefined)).toBe('');
  });
});
