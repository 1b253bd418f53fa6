import { useEffect, useState } from 'preact/hooks';
import { useServices } from '../services.js';

/** The clock's time, refreshed every `everyMs`: one timer per view, not one per cell. */
export function useNow(everyMs = 10_000): number {
  const { clock } = useServices();
  const [now, setNow] = useState(() => clock.now());
  useEffect(() => clock.every(everyMs, () => setNow(clock.now())), [clock, everyMs]);
  return now;
}
