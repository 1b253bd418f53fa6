import { createHash } from 'node:crypto';
import { deflateRawSync } from 'node:zlib';
import { wire2 } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { compressChanges, inflateChanges } from './brotli.js';
import { pushFormsOf } from './push.js';

/** A changed plan's change as an agent writes it: the dictionary's own last change, another cell's ids. */
const change = (n: number) => {
  const text = new TextDecoder('latin1').decode(wire2.CHANGES_DICTIONARY_DZ1.subarray(-900));
  return new TextEncoder().encode(text.replaceAll('network', `cell-${n}`).replaceAll('6', String(n % 10)));
};

describe("a push's changes against the shared dictionary (decision 510)", () => {
  it('the dictionary is the frozen one both ends hold', () => {
    const sha = createHash('sha256').update(wire2.CHANGES_DICTIONARY_DZ1).digest('hex');
    expect(sha).toBe(wire2.CHANGES_DICTIONARY_DZ1_SHA256);
    expect(sha).toBe('abd2fc29a6e90ea232b150629012efe43217e96d0e1f7b882e9cf9b6689a36d5');
  });

  it('goes dz1 only where allowed and smaller than brotli, and reads back either way', () => {
    const bytes = change(3);
    const br = compressChanges(bytes, false);
    const dz = compressChanges(bytes, true);
    expect(br.encoding).toBe('br');
    expect(dz.encoding).toBe('dz1');
    expect(dz.bytes.length).toBeLessThan(br.bytes.length);
    for (const c of [br, dz]) {
      const back = inflateChanges(c.bytes, c.encoding as 'br' | 'dz1', 1 << 20);
      expect(back.ok && Buffer.from(back.bytes).equals(Buffer.from(bytes))).toBe(true);
    }
    // bytes that neither shrinks travel as they are
    expect(compressChanges(Uint8Array.of(7), true)).toEqual({ bytes: Uint8Array.of(7) });
  });

  it('inflates within the cap (S8) and refuses what is not its deflate', () => {
    const bomb = deflateRawSync(new Uint8Array(1 << 20), { dictionary: wire2.CHANGES_DICTIONARY_DZ1 });
    const capped = inflateChanges(new Uint8Array(bomb), 'dz1', 64 * 1024);
    expect(capped.ok ? 'inflated' : capped.reason).toMatch(/do not inflate \(dz1\) within 65536 bytes/);
    // deflated without the dictionary: its back-references point into nothing
    const other = deflateRawSync(
      Buffer.concat([Buffer.from(wire2.CHANGES_DICTIONARY_DZ1), Buffer.from(change(4))]),
    );
    const torn = inflateChanges(new Uint8Array(other).subarray(0, 40), 'dz1', 1 << 20);
    expect(torn.ok).toBe(false);
  });

  it('reads the forms a node carries from its registration answer', () => {
    expect(pushFormsOf(undefined)).toEqual({
      blobList: false,
      dz1: false,
      clock: false,
      ackLater: false,
      custodyLater: false,
    });
    expect(pushFormsOf([wire2.CARRIES_PUBLICATIONS, wire2.PUSH_FORM_BLOB_LIST])).toEqual({
      blobList: true,
      dz1: false,
      clock: false,
      ackLater: false,
      custodyLater: false,
    });
    expect(pushFormsOf([wire2.PUSH_FORM_DZ1])).toMatchObject({ blobList: false, dz1: true, clock: false });
    expect(pushFormsOf([wire2.PUSH_FORM_CLOCK])).toMatchObject({ blobList: false, dz1: false, clock: true });
    expect(pushFormsOf([wire2.PUSH_FORM_ACK_LATER])).toEqual({
      blobList: false,
      dz1: false,
      clock: false,
      ackLater: true,
      custodyLater: false,
    });
    expect(pushFormsOf([...wire2.PUSH_FORMS])).toEqual({
      blobList: true,
      dz1: true,
      clock: true,
      ackLater: true,
      custodyLater: true,
    });
  });
});
