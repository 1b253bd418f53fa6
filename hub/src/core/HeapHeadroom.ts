import * as A from '@automerge/automerge';

/**
 * Keeps free room in Automerge's WebAssembly heap, so that it grows in a few large steps instead of
 * thousands of 64 KiB ones.
 *
 * Why: Automerge's allocator (dlmalloc) grows WebAssembly memory by the few pages each allocation
 * lacks. Past ~100 MB each `memory.grow` makes V8 account the whole new buffer as external memory and
 * run a full mark-compact. With 1,000 agents' replicas the hub ran 1,000 of those (20 ms each) for
 * 40,000 merged results: more time than the merging itself.
 *
 * How: when the heap grew since the last check (the room is used up), one block of `step` bytes is
 * allocated and freed inside the heap. dlmalloc never gives WebAssembly memory back, so the freed block
 * stays as room for the next allocations. The cost is that the room is resident memory: at most a
 * quarter of the heap, or one and a half batches' growth, more than the replicas need.
 */
export class HeapHeadroom {
  private last = 0;
  /** How many times room was made (for the benchmark and metrics). */
  reserves = 0;

  constructor(
    private readonly heapBytes: () => number = automergeHeapBytes(),
    /** No room is made past this heap size (see `check`). */
    readonly limit = 2 * 1024 ** 3,
  ) {}

  /**
   * Call between batches: makes room when the heap grew since the last call: a quarter of the heap
   * (16 MiB at least), or more when the last batch alone grew it more than that (merging a chunk of
   * changes into a document allocates a few MB), up to 256 MiB, and never past `limit`: a wasm32 heap
   * ends at 4 GiB, and an allocation that fails there terminates Automerge's module for good.
   */
  check(): void {
    const size = this.heapBytes();
    if (size <= this.last) return;
    if (this.last !== 0) {
      const grew = size - this.last;
      const want = Math.min(256 << 20, Math.max(16 << 20, size >> 2, Math.ceil(grew * 1.5)));
      if (size + want <= this.limit) this.reserve(want);
    }
    this.last = this.heapBytes();
  }

  /** The heap's size now (WebAssembly memory, bytes). */
  size(): number {
    return this.heapBytes();
  }

  private reserve(bytes: number): void {
    const h = A.getBackend(A.init());
    try {
      // The public call that copies a caller-sized block into the heap and frees it again: zeros are
      // not a document, so loading them fails after the copy.
      h.loadIncremental(new Uint8Array(bytes));
    } catch {
      // expected
    } finally {
      h.free();
    }
    this.reserves++;
  }
}

/**
 * Measures the size of Automerge's WebAssembly memory. Automerge does not export its memory object,
 * but its bindings read `memory.buffer` on every call: the getter is wrapped for one call to find it.
 * Where that fails (other bindings), the size of all array buffers is the (noisier) measure.
 */
export function automergeHeapBytes(): () => number {
  const proto = WebAssembly.Memory.prototype;
  const desc = Object.getOwnPropertyDescriptor(proto, 'buffer');
  const found = new Set<WebAssembly.Memory>();
  if (desc?.get) {
    const get = desc.get;
    Object.defineProperty(proto, 'buffer', {
      ...desc,
      get(this: WebAssembly.Memory) {
        found.add(this);
        return get.call(this);
      },
    });
    try {
      const h = A.getBackend(A.init());
      h.put('_root', 'probe', 'probe');
      h.free();
    } finally {
      Object.defineProperty(proto, 'buffer', desc);
    }
  }
  const [memory] = found;
  if (found.size === 1 && memory) return () => memory.buffer.byteLength;
  return () => process.memoryUsage().arrayBuffers;
}
