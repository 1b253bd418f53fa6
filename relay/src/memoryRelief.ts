import { getHeapStatistics } from 'node:v8';

export interface MemoryReliefOptions {
  /** A full collection, when the process has one (`node --expose-gc`, as the packaged relay runs). */
  gc?: () => void;
  /** Bytes V8 counts outside its heap: buffers, zlib state. */
  external?: () => number;
  now?: () => number;
  /** Garbage outside the heap allowed to pile up before a collection. */
  slackBytes?: number;
  /** Fewest milliseconds between two collections. */
  minIntervalMs?: number;
}

/**
 * A check run after the relay took in or sent out big payloads: when the bytes outside V8's heap are
 * `slackBytes` above the live level, collect now. Every MiB taken in leaves a few MiB of dead buffers
 * (socket chunks, inflated output, the joined body) whose small handles V8 has already promoted; V8
 * frees them at its next full collection, which external memory alone triggers only 64 MiB later, so
 * under 8 uploads at once the relay's RSS rose by ~100 MB of garbage.
 *
 * The live level is the lowest reading since the last collection: V8 frees the buffers of a collection
 * while sweeping, after `gc()` returns, so a reading right after it still counts them. Buffers that stay
 * live (uploads in flight) raise the floor and do not make every check collect: a collection that frees
 * nothing starts the count again from where it ran. At most one collection per `minIntervalMs`. Without
 * `gc` (the source run under tsx) it does nothing. Answers whether it collected.
 */
export function memoryRelief(opts: MemoryReliefOptions = {}): () => boolean {
  const gc = opts.gc;
  const external = opts.external ?? (() => getHeapStatistics().external_memory);
  const now = opts.now ?? Date.now;
  const slack = opts.slackBytes ?? 16 * 1024 * 1024;
  const minInterval = opts.minIntervalMs ?? 100;
  let floor = external();
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    if (!gc) return false;
    const bytes = external();
    floor = Math.min(floor, bytes);
    const t = now();
    if (bytes - floor < slack || t - last < minInterval) return false;
    gc();
    last = t;
    floor = bytes;
    return true;
  };
}

/** `globalThis.gc` when Node was started with `--expose-gc`. */
export function exposedGc(): (() => void) | undefined {
  const g = (globalThis as { gc?: unknown }).gc;
  return typeof g === 'function' ? () => (g as () => void)() : undefined;
}
