import type { Random } from '../rng.js';
import type { DirectionSettings } from './settings.js';

/** Where one direction's link stands: when the transmitter is free, and when the last chunk arrives. */
export interface PaceState {
  busyUntil: number;
  lastArrival: number;
}

export const START_PACE: PaceState = { busyUntil: 0, lastArrival: 0 };

/**
 * When a chunk of `bytes` handed to the link at `now` arrives at the far end. The link first
 * serialises it at the bandwidth cap (queueing behind earlier chunks), then holds it for the one-way
 * delay plus jitter. Arrivals never overtake each other: TCP is a byte stream.
 */
export function paceChunk(
  state: PaceState,
  bytes: number,
  now: number,
  d: DirectionSettings,
  random: Random,
): { arrival: number; state: PaceState } {
  const start = Math.max(now, state.busyUntil);
  const txMs = d.bandwidthBps ? (bytes * 8 * 1000) / d.bandwidthBps : 0;
  const busyUntil = start + txMs;
  const jitter = d.jitterMs > 0 ? random() * d.jitterMs : 0;
  const arrival = Math.max(busyUntil + d.delayMs + jitter, state.lastArrival);
  return { arrival, state: { busyUntil, lastArrival: arrival } };
}
