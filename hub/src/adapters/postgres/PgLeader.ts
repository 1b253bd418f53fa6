import pg from 'pg';
import type { Leadership } from '../../core/leader.js';
import { LOCK } from './locks.js';
import type { PgDatabase } from './PgDatabase.js';

/**
 * The server notices a leader whose machine vanished (no FIN) by TCP keepalive: idle 5 s, then 3
 * probes 5 s apart, so its lock is free within ~20 s; with the followers' retry that is under 30 s.
 */
const KEEPALIVE = '-c tcp_keepalives_idle=5 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3';

export interface PgLeaderOptions {
  /** How often a follower tries to take the lead, and the leader checks it still holds it. Default 5 s. */
  retryMs?: number;
  /** Told of every change of leadership (`err`: why it was lost). */
  onChange?: (leader: boolean, err?: unknown) => void;
}

/**
 * One leader among the hubs on a database: the process whose own connection holds the session
 * advisory lock `LOCK.leader`. Followers try `pg_try_advisory_lock` every `retryMs`; a leader that
 * dies or loses its connection loses the lock with its session, and a follower takes it over at its
 * next try. A leader that cannot confirm its connection steps down at once (it may no longer hold it).
 */
export class PgLeader implements Leadership {
  private client: pg.Client | null = null;
  private leading = false;
  private busy = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private readonly retryMs: number;

  constructor(
    private readonly db: PgDatabase,
    private readonly opts: PgLeaderOptions = {},
  ) {
    this.retryMs = opts.retryMs ?? 5000;
    this.timer = setInterval(() => void this.tick(), this.retryMs);
    this.timer.unref();
    void this.tick();
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** One try: connect if need be; a leader confirms its session, a follower tries to take the lock. */
  async tick(): Promise<boolean> {
    if (this.busy || this.closed) return this.leading;
    this.busy = true;
    try {
      const c = this.client ?? (await this.connect());
      if (this.leading) await c.query('SELECT 1');
      else {
        const r = await c.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, 0) AS ok', [LOCK.leader]);
        if (r.rows[0]?.ok) this.set(true);
      }
    } catch (e) {
      this.lost(e);
    } finally {
      this.busy = false;
    }
    return this.leading;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    const c = this.client;
    this.client = null;
    if (this.leading) this.set(false);
    await c?.end().catch(() => {});
  }

  private async connect(): Promise<pg.Client> {
    const c = new pg.Client({
      ...this.db.clientConfig,
      application_name: 'driftline-hub-leader',
      options: KEEPALIVE,
      query_timeout: Math.max(1000, this.retryMs),
    });
    c.on('error', (e) => this.lost(e));
    try {
      await c.connect();
    } catch (e) {
      await c.end().catch(() => {});
      throw e;
    }
    if (this.closed) {
      await c.end().catch(() => {});
      throw new Error('closed');
    }
    this.client = c;
    return c;
  }

  private lost(e: unknown): void {
    const c = this.client;
    this.client = null;
    c?.end().catch(() => {});
    if (this.leading) this.set(false, e);
  }

  private set(leader: boolean, err?: unknown): void {
    this.leading = leader;
    this.opts.onChange?.(leader, err);
  }
}
