import type { HubEvent } from '@driftline/protocol';

export interface LoggedEvent {
  id: number;
  event: HubEvent;
}

/**
 * Live events for `/api/events` with ids, kept in a bounded ring so a client reconnecting with
 * `Last-Event-ID` gets what it missed. A client further behind than the ring is told to reload
 * (`tooOld`), since the API holds the full state anyway.
 */
export class EventLog {
  private ring: LoggedEvent[] = [];
  private lastId = 0;
  private readonly subs = new Set<(e: LoggedEvent) => void>();

  constructor(private readonly capacity = 10_000) {}

  get listening(): boolean {
    return this.subs.size > 0;
  }

  publish(event: HubEvent): void {
    const e = { id: ++this.lastId, event };
    this.ring.push(e);
    if (this.ring.length > this.capacity) this.ring = this.ring.slice(-this.capacity);
    for (const fn of this.subs) fn(e);
  }

  since(lastId: number): { events: LoggedEvent[]; tooOld: boolean } {
    const first = this.ring[0]?.id ?? this.lastId + 1;
    return { events: this.ring.filter((e) => e.id > lastId), tooOld: lastId < first - 1 };
  }

  subscribe(fn: (e: LoggedEvent) => void): () => void {
    this.subs.add(fn);
    return () => this.subs.delete(fn);
  }
}
