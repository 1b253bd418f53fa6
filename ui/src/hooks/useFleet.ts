import type { FleetResponse } from '@driftline/protocol';
import { useEffect, useState } from 'preact/hooks';
import { useServices } from '../services.js';
import type { Loaded } from './useLoad.js';

/** How long the overview waits after a live change before reading the summary again. */
export const FLEET_REFRESH_MS = 2000;

/**
 * The fleet summary, read again (at most once per {@link FLEET_REFRESH_MS}) after live cell or site
 * changes; the previous answer stays on screen meanwhile.
 */
export function useFleet(): Loaded<FleetResponse> {
  const { api, live, clock } = useServices();
  const [loaded, setLoaded] = useState<Loaded<FleetResponse>>({ state: 'loading' });
  useEffect(() => {
    let current = true;
    let timer: (() => void) | null = null;
    const read = () =>
      api.fleet().then(
        (data) => current && setLoaded({ state: 'ok', data }),
        (e: Error) => current && setLoaded({ state: 'error', message: e.message }),
      );
    read();
    const off = live.subscribe((e) => {
      if (e.type !== 'cell-updated' && e.type !== 'site-updated') return;
      if (timer) return;
      timer = clock.after(FLEET_REFRESH_MS, () => {
        timer = null;
        read();
      });
    });
    return () => {
      current = false;
      off();
      timer?.();
    };
  }, [api, live, clock]);
  return loaded;
}
