import { useEffect, useState } from 'preact/hooks';
import { useServices } from '../services.js';

/**
 * A number that grows each time the live stream says `reset` (the hub restarted, or this dashboard
 * missed more than the hub keeps). Used as a `key`, it remounts the views, so each re-reads what it shows
 * instead of going on from a state that silently lacks events.
 */
export function useResetKey(): number {
  const { live } = useServices();
  const [key, setKey] = useState(0);
  useEffect(
    () =>
      live.subscribe((e) => {
        if (e.type === 'reset') setKey((k) => k + 1);
      }),
    [live],
  );
  return key;
}
