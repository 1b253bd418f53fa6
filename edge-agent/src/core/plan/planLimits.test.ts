import { describe, expect, it } from 'vitest';
import { checkPlanLimits, MAX_PLAN_DEPTH, MAX_PLAN_KEY_LENGTH } from './planLimits.js';

describe('checkPlanLimits', () => {
  it('refuses nesting past the bound and keys past the bound, naming which', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 5000; i++) deep = [deep];
    expect(checkPlanLimits({ a: deep })).toMatchObject({ ok: false, reason: 'plan-too-deep' });
    expect(checkPlanLimits({ tags: { ['k'.repeat(100_000)]: 1 } })).toMatchObject({
      ok: false,
      reason: 'plan-key-too-long',
      message: expect.stringContaining('100000 characters'),
    });
  });

  it('accepts what real plans look like, up to the bounds', () => {
    let ok: unknown = 1;
    for (let i = 0; i < MAX_PLAN_DEPTH - 1; i++) ok = { a: ok };
    expect(checkPlanLimits(ok)).toEqual({ ok: true });
    expect(checkPlanLimits({ ['k'.repeat(MAX_PLAN_KEY_LENGTH)]: [1, 'x', null] })).toEqual({ ok: true });
  });
});
