import { randomBytes } from 'node:crypto';
import type { DownlinkBell } from '../../core/downlinkBell.js';
import {
  DOWNLINK_CHANNEL,
  decodeDownlinkNotice,
  encodeDownlinkNotice,
  NOTICE_MAX_BYTES,
} from './downlinkNotice.js';
import type { PgDatabase, Stmt } from './PgDatabase.js';
import { PgListener } from './PgListener.js';

const NOTIFY: Stmt = { name: 'hub_dl_notify', text: `SELECT pg_notify('${DOWNLINK_CHANNEL}', $1)` };

export interface PgDownlinkBellOptions {
  /** The hub's listener, shared with its other users; without it, one of its own (`driftline-hub-downlink`). */
  listener?: PgListener;
  /** A notification not sent (the database is down), and listener trouble; told once per outage. */
  onError?: (e: unknown, what: string) => void;
}

/**
 * The downlink bell across the hubs of one database (docs/decisions/635-downlink-bell-across-hubs.md):
 * `tell` notifies the channel of the sites a commit here wrote downlink for (what is told while a notice
 * is on its way goes together in the next one), and the sites other hubs notify, heard on the hub's
 * listener, ring the local bell. A listener opened again (it dropped, notices may be lost) rings every site.
 */
export class PgDownlinkBell {
  /** This hub on the channel: its own notices come back to it, and its bell rang for them already. */
  private readonly id = randomBytes(8).toString('hex');
  private readonly listener: PgListener;
  private readonly unlisten: () => void;
  private pending = new Set<string>();
  private sending: Promise<void> | null = null;
  private closed = false;
  private sendDown = false;
  private listenDown = false;

  constructor(
    private readonly db: PgDatabase,
    private readonly bell: DownlinkBell,
    private readonly opts: PgDownlinkBellOptions = {},
  ) {
    this.listener = opts.listener ?? new PgListener(db, { name: 'driftline-hub-downlink' });
    this.unlisten = this.listener.add(DOWNLINK_CHANNEL, {
      notified: (payload) => {
        const { from, sites } = decodeDownlinkNotice(payload);
        if (from === this.id) return;
        if (sites === 'every') this.bell.ringEvery();
        else this.bell.ring(sites);
      },
      opened: () => {
        this.listenDown = false;
        // whatever was notified while no one listened is lost: every held watch reads the store once
        this.bell.ringEvery();
      },
      failed: (e) => {
        if (!this.listenDown)
          this.opts.onError?.(e, "other hubs' downlink is not heard until the database answers");
        this.listenDown = true;
      },
      broke: (e) => this.opts.onError?.(e, 'the downlink listener broke; it reconnects'),
    });
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
    this.unlisten();
    await this.sent();
    if (!this.opts.listener) await this.listener.close();
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
}
