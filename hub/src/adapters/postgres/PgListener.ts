import pg from 'pg';
import type { PgDatabase } from './PgDatabase.js';

/** What one user of a {@link PgListener} hears of its channel and of the connection. */
export interface ChannelUser {
  /** A notification on the channel, with its payload. */
  notified(payload: string | undefined): void;
  /** A connection listens on the channel now (the first, or one opened again): what was notified while none did is lost. */
  opened?(): void;
  /** An attempt to open the connection failed (the database does not answer); it is tried again. */
  failed?(e: unknown): void;
  /** The listening connection broke; it is opened again. */
  broke?(e: unknown): void;
}

export interface PgListenerOptions {
  /** Its connection's `application_name` in `pg_stat_activity`. Default `driftline-hub-listener`. */
  name?: string;
  /** How often the connection is opened again while it is not open, ms. Default 2 s. */
  retryMs?: number;
}

/**
 * The one connection of a hub that LISTENs, on the channels its users add: live events
 * (docs/decisions/160-multi-hub.md) and the downlink bell (docs/decisions/635-downlink-bell-across-hubs.md).
 * It opens when the first user is added and, while it is not open (the database went away), again every
 * `retryMs` or when a user asks (`open`), one attempt at a time; each user is told when it opens, fails
 * to, or breaks, and re-checks what it may have missed in its own way.
 */
export class PgListener {
  private client: pg.Client | null = null;
  private opening: Promise<void> | null = null;
  /** Channel → its users; a channel stays LISTENed once added (its last user gone, it is just not heard). */
  private readonly channels = new Map<string, Set<ChannelUser>>();
  private closed = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly db: PgDatabase,
    private readonly opts: PgListenerOptions = {},
  ) {
    this.timer = setInterval(() => void this.open().catch(() => {}), opts.retryMs ?? 2000);
    this.timer.unref();
  }

  /** Hears `channel` (a plain identifier) for `user` from now on; answers the user's removal. */
  add(channel: string, user: ChannelUser): () => void {
    const users = this.channels.get(channel) ?? new Set<ChannelUser>();
    this.channels.set(channel, users.add(user));
    const c = this.client;
    if (c) void this.join(c, channel, user);
    else void this.open().catch(() => {});
    return () => users.delete(user);
  }

  /** Opens the connection when it is not open; rejects when the database does not answer. */
  open(): Promise<void> {
    if (this.closed || this.client) return Promise.resolve();
    this.opening ??= this.connect().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.opening?.catch(() => {});
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => {});
  }

  private users(): ChannelUser[] {
    return [...this.channels.values()].flatMap((u) => [...u]);
  }

  private async connect(): Promise<void> {
    const c = new pg.Client({
      ...this.db.clientConfig,
      application_name: this.opts.name ?? 'driftline-hub-listener',
    });
    c.on('error', (e) => this.dropped(c, e));
    c.on('end', () => this.dropped(c));
    c.on('notification', (n) => {
      for (const u of this.channels.get(n.channel) ?? []) u.notified(n.payload);
    });
    try {
      await c.connect();
      // a channel added while this waits is visited too (a Map's iteration takes in what is added)
      for (const channel of this.channels.keys()) await c.query(`LISTEN ${channel}`);
    } catch (e) {
      await c.end().catch(() => {});
      for (const u of this.users()) u.failed?.(e);
      throw e;
    }
    if (this.closed) {
      await c.end().catch(() => {});
      return;
    }
    this.client = c;
    for (const u of this.users()) u.opened?.();
  }

  /** A user added while the connection is open: its channel is LISTENed there too (again is harmless). */
  private async join(c: pg.Client, channel: string, user: ChannelUser): Promise<void> {
    try {
      await c.query(`LISTEN ${channel}`);
    } catch {
      return; // the connection broke: it is opened again, and every user told
    }
    if (this.client === c && this.channels.get(channel)?.has(user)) user.opened?.();
  }

  private dropped(c: pg.Client, e?: unknown): void {
    if (this.client !== c) return;
    this.client = null;
    c.end().catch(() => {});
    if (e !== undefined) for (const u of this.users()) u.broke?.(e);
  }
}
