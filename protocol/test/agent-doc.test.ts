import { describe, expect, it } from 'vitest';
import { docId, parseDocId, plainDocValue } from '../src/index.js';

describe('agent document helpers', () => {
  it('names epochs and parses the names back', () => {
    expect(docId('ship-7', 'a1', 3)).toBe('ship-7/a1/epoch-3');
    expect(parseDocId('ship-7/a1/epoch-3')).toEqual({ site: 'ship-7', agent: 'a1', epoch: 3 });
    expect(parseDocId('ship-7/a1/epoch-0')).toBeNull();
    expect(parseDocId('../etc/passwd')).toBeNull();
  });

  it('turns scalar-string objects into plain strings, deeply', () => {
    const scalar = (val: string) => ({ val, toJSON: () => val });
    expect(plainDocValue({ a: scalar('x'), b: [scalar('y'), 2], c: { d: null } })).toEqual({
      a: 'x',
      b: ['y', 2],
      c: { d: null },
    });
  });
});
