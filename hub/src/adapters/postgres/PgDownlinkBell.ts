import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { DownlinkBell } from '../../core/downlinkBell.js';
import {
  DOWNLINK_CHANNEL,
  decodeDownlinkNotice,
  encodeDownlinkNotice,
  NOTICE_MAX_BYTES,
} from './downlinkNotice.js';
import type { PgDatabase, Stmt } from './PgDatabase.js';

const NOTIFY: Stmt = { name: 'hub_dl_notify', text: `SELECT pg_notify('${DOWNLINK_CHANNEL}', $1)` };

export interface PgDownlinkBellOptions {
  /** How often a dropped listener is opened again, ms. Default 2 s. */
  retryMs?: number;
  /** A notification not sent (the database is down), and listener trouble; told once per outage. */
  onError?: (e: unknown, what: string) => void;
}

/**
 * The downlink bell across the hubs of one database (docs/decisions/635-downlink-bell-across-hubs.md):
 * `tell` notifies the channel of the sites a commit here wrote downlink for (what is told while a notice
 * is on its way goes together in the next one), and a listener of its own rings the local bell with
 * the sites other hubs notify. A listener opened again (it dropped, notices may be lost) rings every site.
 */
export class PgDownlinkBell {
  /** This hub on the channel: its own notices come back to it, and its bell rang for them already. */
  private readonly id = randomBytes(8).toString('hex');
  private listener: pg.Client | null = null;
  private pending = new Set<string>();
  private sending: Promise<void> | null = null;
  private closed = false;
  private sendDown = false;
  private listenDown = false;
  private readonly timer: NodeJS.Timeout;
  private opening: Promise<void> | null = null;

  constructor(
    private readonly db: PgDatabase,
    private readonly bell: DownlinkBell,
    private readonly opts: PgDownlinkBellOptions = {},
  ) {
    this.timer = setInterval(() => void this.open(), opts.retryMs ?? 2000);
    this.timer.unref();
    void this.open();
  }

  /** Tells the other hubs that downlink was committed for `sites`; never throws, never holds the commit. */
  tell(sites: Iterable<string>): void {
    if (this.closed) return;
    for (const s of sites) this.pending.add(s);
    this.sending ??= this.send();
  }

  /** Resolves once every notice told so far is sent, or failed (tests, close). */
  async sent(): Promise<void> {
    while (this.sending) await this.sending;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    await this.sent();
    await this.opening;
    const l = this.listener;
    this.listener = null;
    await l?.end().catch(() => {});
  }

  private async send(): Promise<void> {
    const sites = [...this.pending];
    this.pending = new Set();
    // past this many, the list (4 bytes a site at least) cannot fit: it is not even written out
    const every = sites.length * 4 > NOTICE_MAX_BYTES;
    try {
      await this.db.query(NOTIFY, [encodeDownlinkNotice(this.id, every ? 'every' : sites)]);
      this.sendDown = false;
    } catch (e) {
      // the other hubs' watches read the store again on their own (SHARED_RECHECK_MS)
      if (!this.sendDown)
        this.opts.onError?.(e, 'other hubs are not told of downlink until the database answers');
      this.sendDown = true;
    } finally {
      this.sending = this.pending.size > 0 && !this.closed ? this.send() : null;
    }
  }

  private open(): Promise<void> {
    if (this.closed || this.listener) return Promise.resolve();
    this.opening ??= this.listen().finally(() => {
      this.opening = null;
    });
    return this.opening;
  }

  private async listen(): Promise<void> {
    const c = new pg.Client({ ...this.db.clientConfig, application_name: 'driftline-hub-downlink' });
    const dropped = (e?: unknown) => {
      if (this.listener !== c) return;
      this.listener = null;
      c.end().catch(() => {});
      if (e) this.opts.onError?.(e, 'the downlink listener broke; it reconnects');
    };
    c.on('error', dropped);
    c.on('end', () => dropped());
    c.on('notification', (n) => {
      if (n.channel !== DOWNLINK_CHANNEL) return;
      const { from, sites } = decodeDownlinkNotice(n.payload);
      if (from === this.id) return;
      if (sites === 'every') this.bell.ringEvery();
      else this.bell.ring(sites);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${DOWNLINK_CHANNEL}`);
    } catch (e) {
      await c.end().catch(() => {});
      if (!this.listenDown)
        this.opts.onError?.(e, "other hubs' downlink is not heard until the database answers");
      this.listenDown = true;
      return;
    }
    if (this.closed) {
      await c.end().catch(() => {});
      return;
    }
    this.listener = c;
    this.listenDown = false;
    // whatever was notified while no one listened is lost: every held watch reads the store once
    this.bell.ringEvery();
  }
}
