/**
 * What fleetScale asks a hub under test, in whichever process it runs (hubProcess.ts answers the same
 * over IPC): where its memory is, and how long its main thread was blocked (event-loop delay).
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Hub } from '../src/app.js';
import type { ThreadMemory } from '../src/ports/Merger.js';

const MB = 1048576;
const mb = (b: number) => Math.round((b / MB) * 10) / 10;

export type ThreadMb = Record<keyof ThreadMemory, number>;
export interface MemoryMb {
  /** The process's resident set now and its high-water mark (/proc/<pid>/status VmRSS, VmHWM). */
  rss: number;
  hwm: number;
  main: ThreadMb;
  mergeWorkers: ThreadMb[];
  /** The main thread's heap after a full collection: what is live (only with `--expose-gc`). */
  liveHeap?: number;
  /**
   * Sampled every 100 ms in the hub's thread since the last ask: the highest RSS and the main thread's
   * memory at that moment, and the highest heap total seen (where a peak between asks came from).
   */
  sampledPeak?: { rss: number; heapTotal: number; heapUsed: number; external: number; maxHeapTotal: number };
}
export interface LoopDelayMs {
  p50: number;
  p99: number;
  max: number;
}

/** VmRSS and VmHWM of a process, MB (Linux). */
export function procStatusMb(pid: number | 'self'): { rss: number; hwm: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? 0);
  return { rss: Math.round(kb('VmRSS') / 1024), hwm: Math.round(kb('VmHWM') / 1024) };
}

const threadMb = (t: ThreadMemory): ThreadMb => ({
  heapUsed: mb(t.heapUsed),
  heapTotal: mb(t.heapTotal),
  external: mb(t.external),
  arrayBuffers: mb(t.arrayBuffers),
  wasm: mb(t.wasm),
});

export function hubProbe(hub: Pick<Hub, 'memory'>) {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const fresh = () => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, maxHeapTotal: 0 });
  let peak = fresh();
  const sampler = setInterval(() => {
    const u = process.memoryUsage();
    if (u.rss > peak.rss)
      peak = { ...peak, rss: u.rss, heapTotal: u.heapTotal, heapUsed: u.heapUsed, external: u.external };
    peak.maxHeapTotal = Math.max(peak.maxHeapTotal, u.heapTotal);
  }, 100);
  sampler.unref();
  return {
    async memory(): Promise<MemoryMb> {
      const m = await hub.memory();
      const sampledPeak = Object.fromEntries(Object.entries(peak).map(([k, v]) => [k, mb(v)])) as NonNullable<
        MemoryMb['sampledPeak']
      >;
      peak = fresh();
      const out = {
        ...procStatusMb('self'),
        main: threadMb(m.main),
        mergeWorkers: m.mergeWorkers.map(threadMb),
        sampledPeak,
      };
      const gc = (globalThis as { gc?: () => void }).gc;
      if (!gc) return out;
      gc();
      return { ...out, liveHeap: mb(process.memoryUsage().heapUsed) };
    },
    /** The main thread's event-loop delay since the last reset; `reset` starts a new interval. */
    loopDelay(reset: boolean): LoopDelayMs {
      const ms = (ns: number) => Math.round(ns / 1e5) / 10;
      const out = {
        p50: ms(delay.percentile(50)),
        p99: ms(delay.percentile(99)),
        max: ms(delay.max),
      };
      if (reset) delay.reset();
      return out;
    },
  };
}
