/**
 * Held downlink pulls waiting for a site's downlink (`GET /v1/bundles?wait=`): `wait` resolves when
 * `notify(site)` is called, the time is up, the request goes away, or a newer pull of the same holder
 * supersedes it. A backend that can hold pulls keeps one and calls `notify` after each commit of downlink
 * for a site (docs/decisions/270-control-first.md, docs/decisions/340-no-gap-between-held-pulls.md).
 */
/** Default cap on pulls held at once for one site ({@link DownlinkWaiters}). */
export const MAX_HELD_PER_SITE = 8;
/**
 * Pulls held at once for one holder (a peer) and site: two, so one still waits at this node while the
 * answer to the other is on its way down (decision 340). Stated to clients as `keep` in `driftline-held`.
 */
export const MAX_HELD_PER_HOLDER = 2;

/** Sites and peers whose last answered cursor is kept (the least recently answered forgotten first). */
const MAX_ANSWERED_KEPT = 10_000;

/**
 * Pulls of one holder held because they would only repeat its last answer, per answer. An honest agent
 * sends a few before that answer reaches it (at most one early successor per lane in flight, two lanes);
 * one that keeps sending the old cursor did not get the answer (lost on the way, or a hop swallowed it),
 * and the next such pull is answered in full instead of held (decision 340, "A lost answer").
 */
export const MAX_REPEATS_HELD = 4;

/** Why a held pull was let go: `superseded` is answered empty, the others with what the site has. */
export type WaitEnd = 'woken' | 'time' | 'gone' | 'capped' | 'superseded';

/** Who holds a pull: the peer. */
export interface Holder {
  peer: string;
}

interface Waiter {
  holder?: Holder;
  /** When its hold ends, ms (this node's clock). */
  endsAt: number;
  done(why: WaitEnd): void;
}

export class DownlinkWaiters {
  private readonly bySite = new Map<string, Set<Waiter>>();
  /** Per site and peer, the cursor its last answer with bundles went up to and the repeats held since. */
  private readonly answered = new Map<string, { cursor: string; repeatsHeld: number }>();

  /**
   * @param maxPerSite pulls held at once for one site; one more is answered at once (not held). An
   *   honest site holds at most {@link MAX_HELD_PER_HOLDER} per agent and upstream; the cap keeps a peer
   *   that opens many from holding sockets and timers without bound.
   */
  constructor(
    private readonly maxPerSite = MAX_HELD_PER_SITE,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Resolves at the first of `notify(site)`, `ms`, `signal`'s abort, or a newer pull of the same
   * `holder`; at once past the per-site cap. While the holder already has {@link MAX_HELD_PER_HOLDER}
   * held, a new one lets go (`superseded`) the one that came first.
   */
  wait(site: string, ms: number, signal?: AbortSignal, holder?: Holder): Promise<WaitEnd> {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve('gone');
      if (holder) this.supersede(site, holder);
      if ((this.bySite.get(site)?.size ?? 0) >= this.maxPerSite) return resolve('capped');
      const set = this.bySite.get(site) ?? new Set<Waiter>();
      this.bySite.set(site, set);
      const onAbort = () => w.done('gone');
      const w: Waiter = {
        ...(holder ? { holder } : {}),
        endsAt: this.now() + ms,
        done: (why) => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          set.delete(w);
          if (set.size === 0 && this.bySite.get(site) === set) this.bySite.delete(site);
          resolve(why);
        },
      };
      const timer = setTimeout(() => w.done('time'), ms);
      signal?.addEventListener('abort', onAbort, { once: true });
      set.add(w);
    });
  }

  /**
   * Lets go the holder's earliest pulls (a Set keeps arrival order). With one hold length that is also
   * the one ending first (decision 340); it is not when pulls of an agent that is gone, held longer, are
   * still here (its connection lost without a word through a proxy or NAT) and it comes back asking less
   * (an older version, or a hold it shortened): letting go the one ending first would then let go the
   * agent's own other lane, answered at once, whose successor lets this one go, and so on for hours.
   */
  private supersede(site: string, holder: Holder): void {
    const mine = [...(this.bySite.get(site) ?? [])].filter((w) => w.holder?.peer === holder.peer);
    for (const w of mine.slice(0, Math.max(0, mine.length - MAX_HELD_PER_HOLDER + 1))) w.done('superseded');
  }

  /**
   * The last cursor a pull of `peer` for `site` was answered with bundles up to: a held pull sent before
   * that answer reached its agent finds only those bundles again, and is held as if it found nothing
   * (decision 340). Undefined: none kept, or {@link MAX_REPEATS_HELD} such pulls were held already (the
   * answer did not reach the agent: the next is answered in full).
   */
  answeredUpTo(site: string, peer: string): string | undefined {
    const a = this.answered.get(`${site}\n${peer}`);
    return a && a.repeatsHeld < MAX_REPEATS_HELD ? a.cursor : undefined;
  }

  /** Counts a pull of `peer` for `site` held because it would only repeat the last answer. */
  heldRepeat(site: string, peer: string): void {
    const a = this.answered.get(`${site}\n${peer}`);
    if (a) a.repeatsHeld++;
  }

  /** Notes that a pull of `peer` for `site` was answered with bundles up to `cursor`. */
  noteAnswered(site: string, peer: string, cursor: string): void {
    const key = `${site}\n${peer}`;
    this.answered.delete(key);
    this.answered.set(key, { cursor, repeatsHeld: 0 });
    if (this.answered.size > MAX_ANSWERED_KEPT)
      for (const oldest of this.answered.keys()) return void this.answered.delete(oldest);
  }

  /**
   * Wakes the pulls held for `site`: of each holder's, only the one that ends first, so the other still
   * waits while this one's answer travels; pulls without a holder all.
   */
  notify(site: string): void {
    const first = new Map<string, Waiter>();
    const wake: Waiter[] = [];
    for (const w of this.bySite.get(site) ?? []) {
      if (!w.holder) wake.push(w);
      else {
        const f = first.get(w.holder.peer);
        if (!f || w.endsAt < f.endsAt) first.set(w.holder.peer, w);
      }
    }
    for (const w of [...wake, ...first.values()]) w.done('woken');
  }

  /** Pulls held now (all sites). */
  get size(): number {
    let n = 0;
    for (const s of this.bySite.values()) n += s.size;
    return n;
  }

  /** Wakes every held pull (the server is closing). */
  releaseAll(): void {
    for (const set of [...this.bySite.values()]) for (const w of [...set]) w.done('woken');
  }
}
