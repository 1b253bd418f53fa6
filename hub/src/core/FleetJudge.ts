import { type Judgement, judgementMoves } from './fleetJudgement.js';

/** A quiet hub still says it judged at least this often: a dashboard that hears nothing longer is behind. */
export const JUDGED_HEARTBEAT_MS = 60_000;

/** One sweep's verdict: what moved since the last sweep, and whether to send `fleet-judged` now. */
export interface Judged {
  sites: string[];
  relays: string[];
  send: boolean;
  /** The next `fleet-judged` comes within this many seconds. */
  withinS: number;
}

/**
 * The sweep's judgement of what time alone moves (contact states, relay problems), kept from one sweep
 * to the next so each change is sent once, when the hub first sees it. The first sweep only sets the
 * baseline (a dashboard's read at load already shows it). Judged every sweep whether or not anyone
 * listens, so a dashboard that connects later is told of a change that came before its next sweep.
 */
export class FleetJudge {
  private last: Judgement | null = null;
  private sentAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly d: {
      read(now: number): Promise<Judgement>;
      sweepIntervalS: number;
    },
  ) {}

  /** A heartbeat is due `JUDGED_HEARTBEAT_MS` after the last; it goes with the first sweep after that. */
  get withinS(): number {
    return JUDGED_HEARTBEAT_MS / 1000 + this.d.sweepIntervalS;
  }

  async judge(now: number): Promise<Judged> {
    const next = await this.d.read(now);
    const moved = this.last ? judgementMoves(this.last, next) : { sites: [], relays: [] };
    this.last = next;
    const send = moved.sites.length + moved.relays.length > 0 || now - this.sentAt >= JUDGED_HEARTBEAT_MS;
    if (send) this.sentAt = now;
    return { ...moved, send, withinS: this.withinS };
  }
}
