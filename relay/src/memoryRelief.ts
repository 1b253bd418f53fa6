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
 * `slackBytes` above what they were at start, collect now. Every MiB taken in leaves a few MiB of dead
 * buffers (socket chunks, inflated output, the joined body) whose small handles V8 has already promoted;
 * V8 frees them at its next full collection, which external memory alone triggers only 64 MiB later, so
 * under 8 uploads at once the relay's RSS rose by ~100 MB of garbage. A collection that frees little
 * (the bytes are live: uploads in flight) doubles the wait before the next one, up to 1 s, so a busy
 * relay does not collect for nothing; one that frees more brings it back to `minIntervalMs`. Without
 * `gc` (the source run under tsx) it does nothing. Answers whether it collected.
 */
export function memoryRelief(opts: MemoryReliefOptions = {}): () => boolean {
  const gc = opts.gc;
  const external = opts.external ?? (() => getHeapStatistics().external_memory);
  const now = opts.now ?? Date.now;
  const slack = opts.slackBytes ?? 24 * 1024 * 1024;
  const minInterval = opts.minIntervalMs ?? 250;
  // What was live after the last collection (at first: at start); the slack is counted from there, so
  // buffers that stay live (uploads in flight) do not make every check collect.
  let base = external();
  let interval = minInterval;
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    if (!gc) return false;
    const t = now();
    if (t - last < interval) return false; // the cheap test first: this runs on every request
    const before = external();
    if (before - base < slack) return false;
    gc();
    last = t;
    const after = external();
    interval = before - after < slack / 4 ? Math.min(interval * 2, 1000) : minInterval;
    base = after;
    return true;
  };
}

/** `globalThis.gc` when Node was started with `--expose-gc`. */
export function exposedGc(): (() => void) | undefined {
  const g = (globalThis as { gc?: unknown }).gc;
  return typeof g === 'function' ? () => (g as () => void)() : undefined;
}
