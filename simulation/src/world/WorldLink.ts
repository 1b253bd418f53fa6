import { nextWindowOf, openWindowOf, type WindowSpec } from '@driftline/protocol';
import { msUntilChange, scheduledUp } from '../core/link/schedule.js';
import {
  type DirectionSettings,
  type LinkSettings,
  type LinkSettingsInput,
  LinkSettingsSchema,
} from '../core/link/settings.js';
import type { Random } from '../core/rng.js';

/** What a link does to one exchange, drawn when the request is sent (docs/decisions/540-deterministic-world.md). */
export type Passage =
  /** Down and refusing: the client learns it at once (a refused connection). */
  | { kind: 'refused' }
  /** Down and hanging (or cut): the client waits until its own timeout, nothing reaches the server. */
  | { kind: 'hang' }
  /** Delivered after `upMs`; the answer comes back after `downMs`, unless `answerLost` (a reset after the server acted). */
  | {
      kind: 'through';
      upMs: number;
      downMs: number;
      requestLost: boolean;
      answerLost: boolean;
      duplicate: boolean;
    };

/** Loss and duplication per exchange, beside the simulator's link settings (which model them per TCP connection). */
export interface WorldFaults {
  /** Chance an exchange is reset before the server sees it. */
  lossRate: number;
  /** Chance the answer is lost after the server acted (the client retries what was done). */
  answerLossRate: number;
  /** Chance the server sees the request twice (a retried exchange the client does not know of). */
  duplicateRate: number;
}

export const NO_FAULTS: WorldFaults = { lossRate: 0, answerLossRate: 0, duplicateRate: 0 };

/**
 * One link of the world: the simulator's link settings (delay, jitter, bandwidth, stalls, resets, up/down
 * schedule, refuse or hang while down) plus per-exchange loss and duplicates, all drawn from the world's
 * one seeded PRNG in the order exchanges are sent. `cut()` forces it down until `heal()`.
 */
export class WorldLink {
  readonly settings: LinkSettings;
  private forcedDown = false;
  private forcedMode: 'hang' | 'refused' = 'hang';
  /** Bytes carried each way, for the world's report. */
  readonly bytes = { up: 0, down: 0 };
  exchanges = 0;
  /**
   * Contact windows in the window syntax's parsed form (`every 6h for 1h from …`, cron, once): given, the
   * link is up only inside one of them (and its schedule is not read). A topology file's links
   * (`topologyFile.ts`) are up by the windows their sites declare.
   */
  windows: readonly WindowSpec[] | null = null;
  /**
   * Request bodies go at the uplink's rate as the server reads them (its headers after the delay), not
   * whole at the end of their transfer: the server sees a long upload open while its bytes come, and
   * can cut it (a tus PATCH whose token is revoked meanwhile, docs/decisions/411-revocation-cuts-at-once.md).
   * Off by default: every other world carries a body whole.
   */
  streamsBodies = false;

  constructor(
    readonly name: string,
    settings: LinkSettingsInput,
    private readonly startedAt: number,
    readonly faults: WorldFaults = NO_FAULTS,
    /** The link's own draws (a stream of the world's seed): what happens on one link does not hang on
     * the order in which other nodes' exchanges were sent at the same instant. */
    readonly random?: Random,
  ) {
    this.settings = LinkSettingsSchema.parse(settings);
  }

  /**
   * Forces the link down until {@link heal}: an exchange sent meanwhile hangs (until its client's timeout),
   * or with `'refuse'` is refused at once, as a link whose far end is gone. Exchanges under way go on
   * (`WorldNetwork.reset` ends them).
   */
  cut(whenDown: 'hang' | 'refuse' = 'hang'): void {
    this.forcedDown = true;
    this.forcedMode = whenDown === 'refuse' ? 'refused' : 'hang';
  }

  heal(): void {
    this.forcedDown = false;
  }

  /** Up at `now` (virtual ms since the epoch): not cut, and its schedule has it up. */
  up(now: number): boolean {
    if (this.forcedDown) return false;
    if (this.windows) return openWindowOf(this.windows, now) !== null;
    return scheduledUp(this.settings.schedule, now - this.startedAt);
  }

  /** Up for good from now on (windows and schedule off): the world's drain. */
  openForGood(): void {
    this.settings.schedule = null;
    this.windows = null;
  }

  /**
   * Ms from `now` until its schedule has it up for `forMs` on end (or for a whole window, where its windows
   * are shorter): 0 if it is so now, Infinity if never. A `cut()` is not foreseen.
   */
  msUntilUpFor(now: number, forMs: number): number {
    if (this.windows) return msUntilWindowFor(this.windows, now, forMs);
    const s = this.settings.schedule;
    if (!s) return 0;
    if (s.upMs <= 0) return Number.POSITIVE_INFINITY;
    const at = now - this.startedAt;
    const change = msUntilChange(s, at);
    if (!scheduledUp(s, at)) return change;
    return change >= Math.min(forMs, s.upMs) ? 0 : change + (s.periodMs - s.upMs);
  }

  /** Draws what happens to one exchange of `upBytes` sent at `now`. */
  pass(now: number, upBytes: number, random: Random): Passage {
    this.exchanges++;
    if (!this.up(now))
      return {
        kind: this.forcedDown ? this.forcedMode : this.settings.whenDown === 'hang' ? 'hang' : 'refused',
      };
    const f = this.faults;
    const resetRate = this.settings.resetsPerMin > 0 ? Math.min(1, this.settings.resetsPerMin / 60) : 0;
    return {
      kind: 'through',
      upMs: oneWay(this.settings.uplink, upBytes, random),
      downMs: oneWay(this.settings.downlink, 0, random),
      requestLost: random() < f.lossRate + resetRate,
      answerLost: random() < f.answerLossRate,
      duplicate: random() < f.duplicateRate,
    };
  }

  /** The time a request body of `bytes` takes on the way up (part of the `upMs` drawn at `pass`). */
  requestTransferMs(bytes: number): number {
    return transferMs(this.settings.uplink, bytes);
  }

  /** The time an answer of `bytes` takes on the way down beyond the delay drawn at `pass`. */
  answerTransferMs(bytes: number): number {
    return transferMs(this.settings.downlink, bytes);
  }
}

/** {@link WorldLink.msUntilUpFor} over windows: 0 in a window with `forMs` (or all of itself) left, else the next one's start. */
function msUntilWindowFor(windows: readonly WindowSpec[], now: number, forMs: number): number {
  const open = openWindowOf(windows, now);
  if (open && open.end - now >= Math.min(forMs, open.end - open.start)) return 0;
  const next = nextWindowOf(windows, now);
  return next ? next.start - now : Number.POSITIVE_INFINITY;
}

function oneWay(d: DirectionSettings, bytes: number, random: Random): number {
  const stall = d.stallsPerMin > 0 && random() < d.stallsPerMin / 60 ? d.stallMs : 0;
  return d.delayMs + (d.jitterMs > 0 ? random() * d.jitterMs : 0) + transferMs(d, bytes) + stall;
}

function transferMs(d: DirectionSettings, bytes: number): number {
  return d.bandwidthBps ? (bytes * 8 * 1000) / d.bandwidthBps : 0;
}
