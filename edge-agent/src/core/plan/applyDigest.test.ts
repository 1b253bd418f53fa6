import { describe, expect, it } from 'vitest';
import { applyBasis, keyedPlanHash, writeCanonical } from './applyDigest.js';

const key = new Uint8Array(32).fill(7);
const otherKey = new Uint8Array(32).fill(8);
const plan = (input: string, extra: Record<string, unknown> = {}) => ({
  format_version: '1.2',
  variables: { web: { value: input } },
  resource_changes: [
    {
      address: 'terraform_data.web',
      change: { actions: ['update'], before: { input: 'web-v4' }, after: { input }, after_unknown: {} },
    },
    {
      address: 'terraform_data.idle',
      change: { actions: ['no-op'], before: { input: 'x' }, after: { input: 'x' } },
    },
  ],
  output_changes: { web: { actions: ['update'], before: 'web-v4', after: input } },
  ...extra,
});

describe('keyedPlanHash', () => {
  it('is equal for equal plans and differs when only a value differs', () => {
    const a = keyedPlanHash(key, 'detail', plan('web-v5'));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(keyedPlanHash(key, 'detail', plan('web-v5'))).toBe(a);
    expect(keyedPlanHash(key, 'detail', plan('web-v6'))).not.toBe(a);
    expect(keyedPlanHash(key, 'other detail', plan('web-v5'))).not.toBe(a);
  });

  it('depends on the site key, and on the commit when one is given', () => {
    const a = keyedPlanHash(key, 'detail', plan('web-v5'), 'a'.repeat(40));
    expect(keyedPlanHash(otherKey, 'detail', plan('web-v5'), 'a'.repeat(40))).not.toBe(a);
    expect(keyedPlanHash(key, 'detail', plan('web-v5'), 'b'.repeat(40))).not.toBe(a);
    expect(keyedPlanHash(key, 'detail', plan('web-v5'))).not.toBe(a);
  });

  it('leaves out what apply does not do: no-op resources, drift and the prior state', () => {
    const a = keyedPlanHash(key, 'd', plan('web-v5'));
    const drifted = plan('web-v5', {
      resource_drift: [{ address: 'terraform_data.idle', change: { actions: ['update'] } }],
      prior_state: { values: { changed: true } },
    });
    drifted.resource_changes[1] = {
      address: 'terraform_data.idle',
      change: { actions: ['no-op'], before: { input: 'y' }, after: { input: 'y' } },
    };
    expect(keyedPlanHash(key, 'd', drifted)).toBe(a);
  });

  it('walks deep plan JSON without recursion, and in canonical order', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(() => keyedPlanHash(key, 'd', { variables: { v: { value: deep } } })).not.toThrow();
    const parts: string[] = [];
    writeCanonical({ b: [1, { d: null, c: 'x' }], a: true, u: undefined }, (p) => parts.push(p));
    expect(parts.join('')).toBe('{"a":true,"b":[1,{"c":"x","d":null}]}');
    expect(applyBasis(null)).toEqual({ resource_changes: [] });
  });
});
