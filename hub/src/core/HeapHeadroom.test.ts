import * as A from '@automerge/automerge';
import { describe, expect, it } from 'vitest';
import { automergeHeapBytes, HeapHeadroom } from './HeapHeadroom.js';

describe('HeapHeadroom', () => {
  it("finds Automerge's WebAssembly memory and measures it exactly", () => {
    const size = automergeHeapBytes();
    expect(size() % 65536).toBe(0); // whole WebAssembly pages, not a sum of array buffers
    expect(size()).toBeGreaterThan(0);
  });

  it('makes room once the heap grew, so that the next allocations do not grow it again', () => {
    const size = automergeHeapBytes();
    const headroom = new HeapHeadroom(size);
    headroom.check(); // the starting point
    expect(headroom.reserves).toBe(0);
    // Grow the heap: documents holding 40 MiB (more than any room left by earlier tests).
    const held: ReturnType<typeof A.getBackend>[] = [];
    const grow = (mib: number) => {
      for (let i = 0; i < mib * 4; i++) {
        const h = A.getBackend(A.init());
        h.put('_root', 'v', new Uint8Array(256 * 1024), 'bytes');
        held.push(h);
      }
    };
    grow(40);
    headroom.check();
    expect(headroom.reserves).toBe(1);
    const after = size();
    headroom.check();
    expect(headroom.reserves).toBe(1); // unchanged heap: nothing to do
    grow(4); // well within the room made (at least 16 MiB)
    expect(size()).toBe(after);
    for (const h of held) h.free();
  });
});
