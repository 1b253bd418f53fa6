import type { HubEvent } from '@driftline/protocol';
import { coalesceEvents } from '../../core/coalesceEvents.js';
import type { EventLog, LoggedEvent } from '../../core/EventLog.js';

/** One Server-Sent Events frame (WHATWG HTML §9.2). */
export const frame = (id: string, e: HubEvent) =>
  `id: ${id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

/** A connected `/api/events` client: where its text goes, and the last event it was already sent. */
export interface FeedClient {
  write(text: string): void;
  /** Events up to this sequence number were sent to it before it joined the feed (its replay). */
  afterSeq: number;
}

/**
 * The live part of `/api/events` for every client of one hub (docs/decisions/476-live-feed-and-view-reads-at-fleet-scale.md):
 * one subscription to the event log, one coalescing window of `coalesceMs` (decision 402), and per flush
 * one coalesced list serialised once into one text that each client gets in one write. It used to be done
 * per client: each coalesced its own copy of the batch, serialised every event and wrote each frame apart,
 * so the hub's cost per ingest batch grew with the number of dashboards. A client that joined inside the
 * window gets only what came after its replay, coalesced for it alone (once, at its first flush).
 */
export class LiveFeed {
  private readonly clients = new Set<FeedClient>();
  private pending: LoggedEvent[] = [];
  private timer: NodeJS.Timeout | null = null;
  private off: (() => void) | null = null;

  constructor(
    private readonly log: Pick<EventLog, 'subscribe'>,
    private readonly coalesceMs: number,
  ) {}

  /** Adds a client; answers the function that removes it. */
  join(client: FeedClient): () => void {
    this.clients.add(client);
    this.off ??= this.log.subscribe((e) => {
      this.pending.push(e);
      this.timer ??= setTimeout(() => this.flush(), this.coalesceMs);
    });
    return () => {
      this.clients.delete(client);
      if (this.clients.size > 0) return;
      this.off?.();
      this.off = null;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
      this.pending = [];
    };
  }

  private flush(): void {
    this.timer = null;
    const batch = this.pending;
    this.pending = [];
    const first = batch[0];
    if (!first) return;
    let shared: string | null = null;
    for (const c of this.clients) {
      if (c.afterSeq < first.seq) {
        shared ??= text(batch);
        c.write(shared);
      } else {
        const own = batch.filter((e) => e.seq > c.afterSeq);
        if (own.length > 0) c.write(text(own));
      }
      c.afterSeq = Math.max(c.afterSeq, batch.at(-1)?.seq ?? c.afterSeq);
    }
  }
}

const text = (events: readonly LoggedEvent[]) =>
  coalesceEvents(events)
    .map((e) => frame(e.id, e.event))
    .join('');

/** One feed per event log and coalescing window (a hub has one of each), made at its first client. */
const feeds = new WeakMap<object, Map<number, LiveFeed>>();
export function feedOf(log: EventLog, coalesceMs: number): LiveFeed {
  const byWindow = feeds.get(log) ?? new Map<number, LiveFeed>();
  feeds.set(log, byWindow);
  const feed = byWindow.get(coalesceMs) ?? new LiveFeed(log, coalesceMs);
  byWindow.set(coalesceMs, feed);
  return feed;
}
