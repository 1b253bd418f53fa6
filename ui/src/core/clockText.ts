import { formatOffset } from './time.js';

/**
 * A clock offset with its uncertainty for people: `−310 ms ± 40 ms`, `7 min ahead ± 2.1 s`. The bound is
 * rounded up, never down. `null`: the hub has only a one-way bound yet; `undefined`: an older hub.
 */
export function formatClockOffset(offsetMs: number | null, uncertaintyMs: number | null | undefined): string {
  const offset = formatOffset(offsetMs);
  if (offsetMs === null || uncertaintyMs === undefined) return offset;
  if (uncertaintyMs === null) return `${offset} ± ? (no round trip yet)`;
  if (uncertaintyMs < 1000) return `${offset} ± ${Math.ceil(uncertaintyMs)} ms`;
  if (uncertaintyMs < 60_000) return `${offset} ± ${(Math.ceil(uncertaintyMs / 100) / 10).toFixed(1)} s`;
  if (uncertaintyMs < 3_600_000) return `${offset} ± ${Math.ceil(uncertaintyMs / 60_000)} min`;
  return `${offset} ± ${Math.ceil(uncertaintyMs / 3_600_000)} h`;
}
