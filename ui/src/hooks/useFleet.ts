import type { FleetResponse, HubEvent } from '@driftline/protocol';
import { useEffect, useState } from 'preact/hooks';
import type { Behind } from '../core/behind.js';
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

/** How long after a change the summary is read, so one ingest's events bring one read. */
const SETTLE_MS = 1000;

/** The summary, and whether the page fell behind the hub (then it says so, and reads itself again). */
export type FleetLive = Loaded<FleetResponse> & {
  behind: Behind | null;
  /** The hub's latest `fleet-judged` with nothing left to read: the page is current as of then. */
  judgedAt: string | null;
};

/**
 * The fleet summary: live events update its totals and the sites they name in place; an ingest's change
 * is read a moment after it, then at most once per {@link FLEET_REFRESH_MS} (never once per event); what
 * the hub's sweep judged anew (`fleet-judged` naming sites or relays) is read at once
 * (docs/decisions/585-live-is-live.md). A dropped stream, or no `fleet-judged` for twice the time the hub
 * said, makes the page behind: it says so and reads again when the stream is back (or every while).
 */
export function useFleet(): FleetLive {
  const { api, live, clock } = useServices();
  const [loaded, setLoaded] = useState<Loaded<FleetResponse>>({ state: 'loading' });
  const [behind, setBehind] = useState<Behind | null>(null);
  const [judgedAt, setJudgedAt] = useState<string | null>(null);
  useEffect(() => {
    let current = true;
    let timer: (() => void) | null = null;
    let watchdog: (() => void) | null = null;
    let lastChangeRead = Number.NEGATIVE_INFINITY;
    let asked = 0;
    let reconnecting = false;
    const read = () => {
      timer?.();
      timer = null;
      const n = ++asked;
      api.fleet().then(
        (data) => {
          if (!current || n !== asked) return;
          setLoaded({ state: 'ok', data });
          setJudgedAt(null);
          if (!reconnecting) setBehind((b) => (b?.reason === 'reconnecting' ? null : b));
        },
        (e: Error) => current && n === asked && setLoaded({ state: 'error', message: e.message }),
      );
    };
    read();
    const arm = (withinS: number, heardAt: number) => {
      watchdog?.();
      watchdog = clock.every(2 * withinS * 1000, () => {
        setBehind({ reason: 'quiet', since: heardAt });
        read();
      });
    };
    const off = live.subscribe((e) => {
      if (e.type === 'fleet-judged') {
        arm(e.withinS, clock.now());
        setBehind((b) => (b?.reason === 'quiet' ? null : b));
        if (e.sites.length > 0 || e.relays.length > 0 || e.moreSites) read();
        else if (!timer) setJudgedAt(e.at);
      }
      if (e.type !== 'fleet-moved' && e.type !== 'site-updated' && e.type !== 'cell-updated') return;
      setLoaded((l) => {
        if (l.state !== 'ok') return l;
        const next = applyFleetEvent(l.data, e);
        return next ? { state: 'ok', data: next } : l;
      });
      if (timer) return;
      const wait = Math.max(SETTLE_MS, lastChangeRead + FLEET_REFRESH_MS - clock.now());
      timer = clock.after(wait, () => {
        timer = null;
        lastChangeRead = clock.now();
        read();
      });
    });
    const offState = live.onState((s) => {
      if (s === 'reconnecting') {
        reconnecting = true;
        watchdog?.();
        watchdog = null;
        setBehind((b) => (b?.reason === 'reconnecting' ? b : { reason: 'reconnecting', since: clock.now() }));
      } else if (s === 'live' && reconnecting) {
        reconnecting = false;
        read();
      }
    });
    return () => {
      current = false;
      off();
      offState();
      timer?.();
      watchdog?.();
    };
  }, [api, live, clock]);
  return { ...loaded, behind, judgedAt };
}
