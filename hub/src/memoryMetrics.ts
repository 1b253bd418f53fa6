import { Gauge, type Registry } from 'prom-client';
import { automergeHeapBytes } from './core/HeapHeadroom.js';
import type { ThreadMemory } from './ports/Merger.js';

/** Where the hub's memory is: the process's resident set, its main thread and each merge worker. */
export interface HubMemory {
  rss: number;
  main: ThreadMemory;
  mergeWorkers: ThreadMemory[];
}

/** Reads the hub's memory now; the merge workers answer for themselves (MergePool.memory). */
export function hubMemory(workers: () => Promise<ThreadMemory[]>): () => Promise<HubMemory> {
  let wasm: (() => number) | null = null;
  return async () => {
    wasm ??= automergeHeapBytes();
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    const main = { heapUsed, heapTotal, external, arrayBuffers, wasm: wasm() };
    return { rss, main, mergeWorkers: await workers() };
  };
}

/**
 * `hub_memory_bytes{thread, kind}` read at each scrape: `thread` is `main` or `merge-N`; `kind` is
 * `rss` (the process), `heapUsed`, `heapTotal`, `external`, `arrayBuffers` or `wasm` (Automerge's heap,
 * which never shrinks: decision 009).
 */
export function registerMemoryGauges(registry: Registry, memory: () => Promise<HubMemory>): void {
  new Gauge({
    name: 'hub_memory_bytes',
    help: "The hub's memory by thread (main, merge-N) and kind (rss, heapUsed, heapTotal, external, arrayBuffers, wasm)",
    labelNames: ['thread', 'kind'],
    registers: [registry],
    async collect() {
      const m = await memory();
      this.set({ thread: 'main', kind: 'rss' }, m.rss);
      const threads: [string, ThreadMemory][] = [
        ['main', m.main],
        ...m.mergeWorkers.map((w, i): [string, ThreadMemory] => [`merge-${i}`, w]),
      ];
      for (const [thread, t] of threads)
        for (const [kind, v] of Object.entries(t)) this.set({ thread, kind }, v);
    },
  });
}
