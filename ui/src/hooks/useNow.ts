import { useEffect, useState } from 'preact/hooks';
import { useServices } from '../services.js';

/**
 * The clock's time at this render, and a render at least every `everyMs` (one timer per view, not one
 * per cell). Read at render, not kept from the last tick: a live update that brings a newer fact renders
 * it against the time now, so a fact seconds old never reads "in 7 s".
 */
export function useNow(everyMs = 10_000): number {
  const { clock } = useServices();
  const [, setTick] = useState(0);
  useEffect(() => clock.every(everyMs, () => setTick((t) => t + 1)), [clock, everyMs]);
  return clock.now();
}
