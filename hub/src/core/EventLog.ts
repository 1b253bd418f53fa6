import type { HubEvent } from '@driftline/protocol';

/** An event with its sequence number in this epoch and its wire id, `<epoch>-<seq>`. */
export interface LoggedEvent {
  seq: number;
  id: string;
  event: HubEvent;
}

/** Why a reconnecting client must re-read instead of being caught up. */
export type ResetReason = Extract<HubEvent, { type: 'reset' }>['reason'];

/** What a client reconnecting with a `Last-Event-ID` gets: what it missed, or a reset. */
export type Since =
  | { kind: 'replay'; events: LoggedEvent[] }
  | {
      kind: 'reset';
      reason: ResetReason /** The id the reset carries: the latest of this epoch. */;
      id: string;
    };

const EVENT_ID = /^([0-9a-z]{1,32})-([0-9]{1,15})$/;

/**
 * A new epoch: the start time in base36 and 32 random bits, so two runs of the hub (or two hub processes
 * started in the same millisecond) never share one.
 */
export function newEpoch(now = Date.now()): string {
  const r = globalThis.crypto.getRandomValues(new Uint32Array(1))[0] ?? 0;
  return `${now.toString(36)}${r.toString(36).padStart(7, '0')}`;
}

/**
 * Live events for `/api/events`, kept in a bounded ring so a client reconnecting with `Last-Event-ID` gets
 * what it missed. Ids carry this log's epoch (`<epoch>-<seq>`, one epoch per hub process run): an id of
 * another epoch (the hub restarted), one older than the ring, or one this log never gave out, cannot be
 * caught up, and the client is told to reset (re-read everything; the API holds the full state).
 */
export class EventLog {
  private currentEpoch: string;
  /** The events kept are `ring[start…]`: the dropped ones are cut off in one slice now and then. */
  private ring: LoggedEvent[] = [];
  private start = 0;
  private lastSeq = 0;
  private readonly capacity: number;
  private readonly subs = new Set<(e: LoggedEvent) => void>();

  constructor(opts: { capacity?: number; epoch?: string } = {}) {
    this.capacity = opts.capacity ?? 10_000;
    this.currentEpoch = checkEpoch(opts.epoch ?? newEpoch());
  }

  /** The epoch of the ids given out: this process's run, or the shared event table's (`adopt`). */
  get epoch(): string {
    return this.currentEpoch;
  }

  /**
   * Set by a log shared between hub processes: brings this one up to date before a reconnecting
   * client is answered (its `Last-Event-ID` may come from another hub, a little ahead of this one).
   */
  catchUp: (() => Promise<void>) | null = null;

  /**
   * Takes the numbering of a shared event table (one epoch for every hub on it): the ring restarts
   * with `recent` (oldest first, ending at `lastSeq`), so a client of another hub resumes here.
   */
  adopt(epoch: string, lastSeq: number, recent: readonly { seq: number; event: HubEvent }[] = []): void {
    this.currentEpoch = checkEpoch(epoch);
    this.lastSeq = lastSeq;
    this.ring = recent.slice(-this.capacity).map((e) => ({ ...e, id: `${epoch}-${e.seq}` }));
    this.start = 0;
  }

  /**
   * An event numbered by the shared table (`seq` above every one before): kept and sent to subscribers
   * like a published one. One already seen is ignored.
   */
  append(seq: number, event: HubEvent): void {
    if (seq <= this.lastSeq) return;
    this.lastSeq = seq;
    this.keep({ seq, id: `${this.currentEpoch}-${seq}`, event });
  }

  get listening(): boolean {
    return this.subs.size > 0;
  }

  /** The sequence number of the latest event (0 before the first). */
  get seq(): number {
    return this.lastSeq;
  }

  /** The id of the latest event (`<epoch>-0` before the first). */
  get lastId(): string {
    return `${this.currentEpoch}-${this.lastSeq}`;
  }

  publish(event: HubEvent): void {
    const seq = ++this.lastSeq;
    this.keep({ seq, id: `${this.currentEpoch}-${seq}`, event });
  }

  /**
   * A full ring drops its oldest event. It used to copy the whole ring for each event (slice): an ingest
   * batch of 25 first-round sites publishes 10,000 events, 100 million copies at the default capacity
   * (~90 ms of the hub's thread per batch); the dropped events are now cut off once a quarter of the
   * capacity has gone.
   */
  private keep(e: LoggedEvent): void {
    this.ring.push(e);
    if (this.ring.length - this.start > this.capacity) this.start++;
    if (this.start > 0 && this.start >= this.capacity >> 2) {
      this.ring = this.ring.slice(this.start);
      this.start = 0;
    }
    for (const fn of this.subs) fn(e);
  }

  /** What a client that last saw `lastEventId` missed, or why it must reset. */
  since(lastEventId: string): Since {
    const reset = (reason: ResetReason): Since => ({ kind: 'reset', reason, id: this.lastId });
    const m = EVENT_ID.exec(lastEventId);
    if (!m) return reset('unknown');
    if (m[1] !== this.currentEpoch) return reset('restarted');
    const seq = Number(m[2]);
    if (seq > this.lastSeq) return reset('unknown');
    const first = this.ring[this.start]?.seq ?? this.lastSeq + 1;
    if (seq < first - 1) return reset('behind');
    return { kind: 'replay', events: this.ring.slice(this.start).filter((e) => e.seq > seq) };
  }

  subscribe(fn: (e: LoggedEvent) => void): () => void {
    this.subs.add(fn);
    return () => this.subs.delete(fn);
  }
}

function checkEpoch(epoch: string): string {
  if (!/^[0-9a-z]{1,32}$/.test(epoch)) throw new Error(`epoch '${epoch}' is not 1-32 of [0-9a-z]`);
  return epoch;
}
