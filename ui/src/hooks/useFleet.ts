import type { FleetResponse, HubEvent } from '@driftline/protocol';
import { useEffect, useState } from 'preact/hooks';
import { useServices } from '../services.js';
import type { Loaded } from './useLoad.js';

/**
 * How long the overview waits after a live change before reading the summary again (its attention list
 * and environments); the totals and the sites an event names are updated from the event at once.
 */
export const FLEET_REFRESH_MS = 30_000;

/** The summary with a live event applied: new totals, a site's new counts and contact. */
export function applyFleetEvent(f: FleetResponse, e: HubEvent): FleetResponse | null {
  if (e.type === 'fleet-moved') {
    // The event counts planned cells; `no-data` ones stay as last read, and so does `stale`: the event
    // judges it at now, where the summary judges a site on a contact plan at its last contact (the
    // summary's next read brings it).
    const noData = f.totals.statusCounts['no-data'] ?? 0;
    const statusCounts = { ...e.totals.statusCounts, ...(noData ? { 'no-data': noData } : {}) };
    return {
      ...f,
      totals: { ...f.totals, cells: e.totals.cells + noData, statusCounts },
    };
  }
  if (e.type === 'site-updated') {
    const i = f.sites.findIndex((s) => s.site === e.site.site);
    if (i < 0) return null;
    const sites = [...f.sites];
    const s = e.site;
    sites[i] = {
      ...(sites[i] as FleetResponse['sites'][number]),
      cells: s.cells,
      statusCounts: s.statusCounts,
      unreachable: s.unreachable,
      lastContactAt: s.lastContactAt,
      ...(s.contact ? { contact: s.contact } : {}),
    };
    return { ...f, sites };
  }
  return null;
}

/**
 * The fleet summary: live events update its totals and the sites they name in place; the whole summary
 * is read again at most once per {@link FLEET_REFRESH_MS} after a change (never once per event).
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
      if (e.type !== 'fleet-moved' && e.type !== 'site-updated' && e.type !== 'cell-updated') return;
      setLoaded((l) => {
        if (l.state !== 'ok') return l;
        const next = applyFleetEvent(l.data, e);
        return next ? { state: 'ok', data: next } : l;
      });
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
