import type { StoreWrites } from '../ports/HubStore.js';

/** Longest a relay's downlink watch is held at the hub, seconds (stated as `watchS`, decision 620). */
export const WATCH_MAX_S = 3600;
/**
 * How often a held watch reads the store again when other hubs write to it too (PostgreSQL), ms. Their
 * downlink rings the bell here through a notification (docs/decisions/635-downlink-bell-across-hubs.md);
 * this read is the safety net for one lost with a dropped listener.
 */
export const SHARED_RECHECK_MS = 60_000;

type Ended = 'rang' | 'time' | 'gone';

interface Listener {
  sites: ReadonlyMap<string, unknown>;
  rang: boolean;
  wake: (() => void) | null;
}

/** A watch's place at the bell, taken before it reads the store, so a ring in between is not lost. */
export interface BellTicket {
  /** Resolves at once if a ring for one of its sites came since the ticket was taken (or the last wait), else at the first ring, after `ms`, or when `signal` aborts. */
  wait(ms: number, signal: AbortSignal): Promise<Ended>;
  close(): void;
}

/**
 * Rung after each commit that wrote downlink, with the sites it wrote for: wakes the relays' downlink
 * watches that name one of them (docs/decisions/620-one-watch-for-all-sites.md).
 */
export class DownlinkBell {
  private readonly listeners = new Set<Listener>();

  ring(sites: Iterable<string>): void {
    if (this.listeners.size === 0) return;
    const rung = [...sites];
    this.wake((l) => rung.some((s) => l.sites.has(s)));
  }

  /** Wakes every watch: downlink was written for sites not known (another hub's list too long to send, a notification lost). */
  ringEvery(): void {
    this.wake(() => true);
  }

  private wake(rings: (l: Listener) => boolean): void {
    for (const l of this.listeners)
      if (rings(l)) {
        l.rang = true;
        l.wake?.();
      }
  }

  /**
   * Listens for rings of `sites` from now on: take the ticket first, then read the store, then wait, and a
   * commit that lands between the read and the wait still wakes it.
   */
  listen(sites: ReadonlyMap<string, unknown>): BellTicket {
    const l: Listener = { sites, rang: false, wake: null };
    this.listeners.add(l);
    return {
      wait: (ms, signal) =>
        new Promise<Ended>((resolve) => {
          if (l.rang) {
            l.rang = false;
            return resolve('rang');
          }
          if (signal.aborted) return resolve('gone');
          const done = (why: Ended) => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            l.wake = null;
            l.rang = false;
            resolve(why);
          };
          const onAbort = () => done('gone');
          const timer = setTimeout(() => done('time'), ms);
          signal.addEventListener('abort', onAbort, { once: true });
          l.wake = () => done('rang');
        }),
      close: () => {
        this.listeners.delete(l);
      },
    };
  }

  /** Resolves at the first ring for one of `sites`, after `ms`, or when `signal` aborts. */
  async wait(sites: ReadonlyMap<string, unknown>, ms: number, signal: AbortSignal): Promise<Ended> {
    const ticket = this.listen(sites);
    try {
      return await ticket.wait(ms, signal);
    } finally {
      ticket.close();
    }
  }

  /** Watches held now (a gauge). */
  get size(): number {
    return this.listeners.size;
  }
}

/**
 * Rings `bell` after every commit of `store` that wrote downlink: every writer of the downlink (ingest's
 * acks, approvals, plan requests, publications, windows, resends) commits through `commit`, so none can
 * forget to ring it. `tell`, when given, hears the same sites (other hubs on a shared store).
 */
export function ringOnDownlink<S extends Pick<StoreWrites, 'commit'>>(
  store: S,
  bell: DownlinkBell,
  tell?: (sites: string[]) => void,
): S {
  const commit = store.commit.bind(store);
  store.commit = async (w) => {
    await commit(w);
    if (!w.downlink || w.downlink.length === 0) return;
    const sites = w.downlink.map((d) => d.site);
    bell.ring(sites);
    tell?.(sites);
  };
  return store;
}

/**
 * The sites of `cursors` whose downlink has a row after the cursor named: at once when there are some,
 * else at the first ring for one of them (or, with `recheckMs`, at each such interval: other hubs' writes)
 * that finds some, or when `ms` passed or `signal` aborted (then none).
 */
export async function watchDownlink(
  d: {
    heads: (sites: readonly string[]) => Promise<Map<string, number>>;
    bell: DownlinkBell;
    recheckMs?: number;
  },
  cursors: ReadonlyMap<string, number>,
  ms: number,
  signal: AbortSignal,
): Promise<string[]> {
  const sites = [...cursors.keys()];
  const news = async () => {
    const heads = await d.heads(sites);
    return sites.filter((s) => (heads.get(s) ?? 0) > (cursors.get(s) ?? 0));
  };
  // listening before the first read: a commit between the read and the wait still wakes the watch
  const ticket = d.bell.listen(cursors);
  try {
    let found = await news();
    let left = ms;
    while (found.length === 0 && left > 0 && sites.length > 0) {
      const step = Math.min(left, d.recheckMs ?? left);
      const started = performance.now();
      const ended = await ticket.wait(step, signal);
      if (ended === 'gone') return [];
      // a ring that finds nothing (rows already past) spends only the time it took
      left -= ended === 'time' ? step : Math.max(1, performance.now() - started);
      found = await news();
    }
    return found;
  } finally {
    ticket.close();
  }
}
