import type { HubEvent } from '@driftline/protocol';
import type { EventLog } from '../../core/EventLog.js';
import { LOCK } from './locks.js';
import type { PgDatabase, Stmt } from './PgDatabase.js';
import { PgListener } from './PgListener.js';

const st = (name: string, text: string): Stmt => ({ name: `hub_e_${name}`, text });
const CHANNEL = 'driftline_events';
/** Events kept in the table for hubs and clients that catch up (older ones go). */
const KEEP = 10_000;
const PAGE = 1000;

const E = {
  lock: st('lock', `SELECT pg_advisory_xact_lock(${LOCK.events}, 0)`),
  insert: st(
    'insert',
    `INSERT INTO hub_events (at, event)
     SELECT $1, e::json FROM unnest($2::text[]) WITH ORDINALITY AS t(e, n) ORDER BY n`,
  ),
  notify: st('notify', `SELECT pg_notify('${CHANNEL}', '')`),
  prune: st('prune', `DELETE FROM hub_events WHERE id <= (SELECT max(id) FROM hub_events) - ${KEEP}`),
  epoch: st('epoch', "SELECT value FROM hub_meta WHERE key = 'events_epoch'"),
  recent: st(
    'recent',
    'SELECT id, event::text AS event FROM (SELECT id, event FROM hub_events ORDER BY id DESC LIMIT $1) r ORDER BY id',
  ),
  after: st('after', 'SELECT id, event::text AS event FROM hub_events WHERE id > $1 ORDER BY id LIMIT $2'),
};

export interface PgEventsOptions {
  /** How often the table is read without a notification (a dropped listener, a missed one). Default 2 s. */
  pollMs?: number;
  /** Events that could not be written (the database is down: they are not sent), and listener trouble. */
  onError?: (e: unknown, what: string) => void;
  /** The hub's listener, shared with its other users; without it, one of their own (`driftline-hub-events`). */
  listener?: PgListener;
}

/**
 * Live events shared by every hub on one database. A hub writes what it publishes to `hub_events`
 * (under an advisory lock, so ids follow commit order) and notifies the channel; every hub, the
 * writer included, reads the new rows into its `EventLog` with the table's ids. SSE ids are then
 * `<database epoch>-<row id>` at every hub: a dashboard reconnecting to another hub with its
 * `Last-Event-ID` is caught up from that hub's ring, without a gap.
 */
export class PgEvents {
  private queue: string[] = [];
  private flushing: Promise<void> | null = null;
  private readonly listener: PgListener;
  private readonly unlisten: () => void;
  private started = false;
  private pulling: Promise<void> | null = null;
  private again = false;
  private published = 0;
  private closed = false;
  /** The last tick failed (told once per outage). */
  private down = false;
  private readonly timer: NodeJS.Timeout;
  private ticking: Promise<void> | null = null;

  constructor(
    private readonly db: PgDatabase,
    private readonly log: EventLog,
    private readonly opts: PgEventsOptions = {},
  ) {
    log.catchUp = () => this.pull();
    this.listener = opts.listener ?? new PgListener(db, { name: 'driftline-hub-events' });
    this.unlisten = this.listener.add(CHANNEL, {
      notified: () => void this.pull().catch(() => {}),
      // listened to again (what was notified meanwhile is lost): read what is new, as a tick does
      opened: () => void this.pull().catch(() => {}),
      broke: (e) => this.opts.onError?.(e, 'the live events listener broke; it reconnects'),
    });
    this.timer = setInterval(() => void this.tick(), opts.pollMs ?? 2000);
    this.timer.unref();
    void this.tick();
  }

  /** Queues `e` for the table; written with whatever else is published in the same turn. */
  publish(e: HubEvent): void {
    this.queue.push(JSON.stringify(e));
    this.flushing ??= new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.flush());
  }

  /** Writes every queued event (tests await it). */
  async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  /** Reads every event the table has past this hub's latest into its log. */
  pull(): Promise<void> {
    if (!this.started) return this.tick();
    if (this.pulling) {
      this.again = true;
      return this.pulling;
    }
    this.pulling = (async () => {
      try {
        do {
          this.again = false;
          for (let page = 0; page < 100; page++) {
            const rows = await this.db.query<{ id: number; event: string }>(E.after, [this.lastSeq(), PAGE]);
            for (const r of rows) this.log.append(r.id, JSON.parse(r.event) as HubEvent);
            if (rows.length < PAGE) break;
          }
        } while (this.again);
      } finally {
        this.pulling = null;
      }
    })();
    return this.pulling;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.flushed().catch(() => {});
    this.unlisten();
    if (!this.opts.listener) await this.listener.close();
    this.log.catchUp = null;
  }

  private lastSeq(): number {
    return Number(this.log.lastId.split('-')[1]);
  }

  private async flush(): Promise<void> {
    const events = this.queue;
    this.queue = [];
    try {
      if (events.length === 0) return;
      this.published += events.length;
      const prune = this.published >= PAGE;
      if (prune) this.published = 0;
      await this.db.pipeline([
        [E.lock, []],
        [E.insert, [Date.now(), events]],
        ...(prune ? [[E.prune, []] as [Stmt, unknown[]]] : []),
        [E.notify, []],
      ]);
    } catch (e) {
      this.opts.onError?.(e, `${events.length} live event(s) not sent`);
    } finally {
      this.flushing = this.queue.length > 0 ? this.flush() : null;
    }
  }

  /**
   * Listens (again) when not listening, takes the table's numbering once, and reads what is new. One tick
   * at a time: a timer's tick while the first one still waited on the database opened a second listener
   * and took the numbering again, after events had been read, so a subscriber never heard of them.
   */
  private tick(): Promise<void> {
    this.ticking ??= this.tickOnce().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async tickOnce(): Promise<void> {
    if (this.closed) return;
    try {
      await this.listener.open();
      if (!this.started) {
        const [epoch] = await this.db.query<{ value: string }>(E.epoch);
        const recent = await this.db.query<{ id: number; event: string }>(E.recent, [KEEP]);
        const events = recent.map((r) => ({ seq: r.id, event: JSON.parse(r.event) as HubEvent }));
        this.log.adopt(epoch?.value ?? 'p0', events.at(-1)?.seq ?? 0, events);
        this.started = true;
      }
      await this.pull();
      this.down = false;
    } catch (e) {
      if (!this.down)
        this.opts.onError?.(e, 'live events of other hubs are not read until the database answers');
      this.down = true;
    }
  }
}
