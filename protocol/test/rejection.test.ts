import { describe, expect, it } from 'vitest';
import { cborEncode } from '../src/cbor.js';
import { decodePayload, MAX_REJECTED_IDS } from '../src/index.js';

const id = (n: number) => `01JC${String(n).padStart(22, '0')}`;
const rejection = (over: Record<string, unknown> = {}) => ({
  type: 'rejection',
  site: 'ship-7',
  agent: 'a9',
  code: 'unknown-agent',
  bundleIds: [id(1)],
  count: 1,
  firstAt: 1,
  lastAt: 2,
  ...over,
});

describe('the rejection control payload', () => {
  it('decodes a rejection and keeps codes it does not know yet (a newer hub may add some)', () => {
    const r = decodePayload('control', cborEncode(rejection({ code: 'some-future-code' })));
    expect(r.ok && r.value.type === 'rejection' && r.value.code).toBe('some-future-code');
  });

  it('is bounded: at most MAX_REJECTED_IDS ids, at least one, and a code shaped like the ERRORS table', () => {
    const many = Array.from({ length: MAX_REJECTED_IDS + 1 }, (_, n) => id(n));
    for (const bad of [
      { bundleIds: many },
      { bundleIds: [] },
      { code: 'Not A Code' },
      { count: 0 },
      { message: 'x' },
    ]) {
      const r = decodePayload('control', cborEncode(rejection(bad)));
      expect(r.ok, JSON.stringify(Object.keys(bad))).toBe(false);
    }
  });
});
