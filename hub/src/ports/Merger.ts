import type { MergeInput, MergeOutput } from '../core/mergeDoc.js';

/**
 * Runs `mergeDoc` jobs: in the calling thread (`inThread`, core) or in worker threads (`MergePool`,
 * adapters/threads), so that Automerge's work can run on other cores than the hub's store and HTTP.
 */
export interface Merger {
  merge(input: MergeInput): Promise<MergeOutput>;
  close(): Promise<void>;
  /** Each worker thread's memory (none when merging in the caller's thread). */
  memory?(): Promise<ThreadMemory[]>;
}

/** One thread's memory, bytes: its V8 heap, memory outside it, and its Automerge WebAssembly heap. */
export interface ThreadMemory {
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  wasm: number;
}
