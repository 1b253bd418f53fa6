/**
 * Held downlink pulls waiting for a site's downlink (`GET /v1/bundles?wait=`): `wait` resolves when
 * `notify(site)` is called, the time is up, or the request goes away. A backend that can hold pulls
 * keeps one and calls `notify` after each commit of downlink for a site
 * (docs/decisions/270-control-first.md).
 */
/** Default cap on pulls held at once for one site ({@link DownlinkWaiters}). */
export const MAX_HELD_PER_SITE = 8;

export class DownlinkWaiters {
  private readonly bySite = new Map<string, Set<() => void>>();

  /**
   * @param maxPerSite pulls held at once for one site; one more is answered at once (not held). An
   *   honest site holds one per upstream; the cap keeps a peer that opens many from holding sockets and
   *   timers without bound.
   */
  constructor(private readonly maxPerSite = MAX_HELD_PER_SITE) {}

  /** Resolves at the first of `notify(site)`, `ms`, or `signal`'s abort; at once past the per-site cap. */
  wait(site: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve();
      if ((this.bySite.get(site)?.size ?? 0) >= this.maxPerSite) return resolve();
      const set = this.bySite.get(site) ?? new Set<() => void>();
      this.bySite.set(site, set);
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        set.delete(done);
        if (set.size === 0 && this.bySite.get(site) === set) this.bySite.delete(site);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      set.add(done);
    });
  }

  /** Wakes every pull held for `site`. */
  notify(site: string): void {
    for (const done of [...(this.bySite.get(site) ?? [])]) done();
  }

  /** Pulls held now (all sites). */
  get size(): number {
    let n = 0;
    for (const s of this.bySite.values()) n += s.size;
    return n;
  }

  /** Wakes every held pull (the server is closing). */
  releaseAll(): void {
    for (const site of [...this.bySite.keys()]) this.notify(site);
  }
}
