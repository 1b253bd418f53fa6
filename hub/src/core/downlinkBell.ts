import type { StoreWrites } from '../ports/HubStore.js';

/** Longest a relay's downlink watch is held at the hub, seconds (stated as `watchS`, decision 620). */
export const WATCH_MAX_S = 3600;
/**
 * How often a held watch reads the store again when other hubs write to it too (PostgreSQL): their
 * downlink rings no bell here, so a watch learns of it within this long, ms (decision 620).
 */
export const SHARED_RECHECK_MS = 5000;

type Ended = 'rang' | 'time' | 'gone';

interface Waiter {
  sites: ReadonlyMap<string, unknown>;
  done(why: Ended): void;
}

/**
 * Rung after each commit that wrote downlink, with the sites it wrote for: wakes the relays' downlink
 * watches that name one of them (docs/decisions/620-one-watch-for-all-sites.md).
 */
export class DownlinkBell {
  private readonly waiters = new Set<Waiter>();

  ring(sites: Iterable<string>): void {
    if (this.waiters.size === 0) return;
    const rung = new Set(sites);
    for (const w of [...this.waiters]) for (const s of rung) if (w.sites.has(s)) w.done('rang');
  }

  /** Resolves at the first ring for one of `sites`, after `ms`, or when `signal` aborts. */
  wait(sites: ReadonlyMap<string, unknown>, ms: number, signal: AbortSignal): Promise<Ended> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve('gone');
      const onAbort = () => w.done('gone');
      const w: Waiter = {
        sites,
        done: (why) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          this.waiters.delete(w);
          resolve(why);
        },
      };
      const timer = setTimeout(() => w.done('time'), ms);
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(w);
    });
  }

  /** Watches held now (a gauge). */
  get size(): number {
    return this.waiters.size;
  }
}

/**
 * Rings `bell` after every commit of `store` that wrote downlink: every writer of the downlink (ingest's
 * acks, approvals, plan requests, publications, windows, resends) commits through `commit`, so none can
 * forget to ring it.
 */
export function ringOnDownlink<S extends Pick<StoreWrites, 'commit'>>(store: S, bell: DownlinkBell): S {
  const commit = store.commit.bind(store);
  store.commit = async (w) => {
    await commit(w);
    if (w.downlink && w.downlink.length > 0) bell.ring(w.downlink.map((d) => d.site));
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
  let found = await news();
  let left = ms;
  while (found.length === 0 && left > 0 && sites.length > 0) {
    const step = Math.min(left, d.recheckMs ?? left);
    const started = performance.now();
    const ended = await d.bell.wait(cursors, step, signal);
    if (ended === 'gone') return [];
    // a ring that finds nothing (rows already past) spends only the time it took
    left -= ended === 'time' ? step : Math.max(1, performance.now() - started);
    found = await news();
  }
  return found;
}
