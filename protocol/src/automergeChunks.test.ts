import { describe, expect, it } from 'vitest';
import { automergeChunks } from './automergeChunks.js';
import { concatBytes } from './bytes.js';

/** A chunk as Automerge frames it: magic, checksum (not checked here), type, LEB128 length, data. */
const chunk = (data: number, lengthBytes = [data]) =>
  Uint8Array.from([0x85, 0x6f, 0x4a, 0x83, 1, 2, 3, 4, 1, ...lengthBytes, ...new Array(data).fill(7)]);

describe('Automerge chunk framing', () => {
  it('spans each whole chunk, a length of more than one LEB128 byte too', () => {
    const long = chunk(200, [0xc8, 0x01]);
    const bytes = concatBytes(chunk(3), long);
    expect(automergeChunks(bytes)).toEqual({
      chunks: [
        { start: 0, end: 13 },
        { start: 13, end: 13 + long.length },
      ],
    });
    expect(automergeChunks(new Uint8Array(0))).toEqual({ chunks: [] });
  });

  it('stops at the first chunk that is not whole, and says why', () => {
    const one = chunk(3);
    expect(automergeChunks(concatBytes(one, Uint8Array.of(0x85, 0)))).toEqual({
      chunks: [{ start: 0, end: 13 }],
      broken: { at: 13, why: 'magic' },
    });
    expect(automergeChunks(chunk(0, [0x83])).broken).toEqual({ at: 0, why: 'length' });
    expect(automergeChunks(chunk(3, [0xff, 0xff, 0xff, 0xff, 0xff, 0x01])).broken?.why).toBe('length');
    expect(automergeChunks(one.subarray(0, 12)).broken).toEqual({ at: 0, why: 'short' });
  });
});
