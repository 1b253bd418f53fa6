import { WireError, wire2 } from '@driftline/protocol';

/** Senders whose sequence windows a node keeps in memory (the oldest goes first). */
const MAX_WINDOWS = 100_000;

/** Each sender's sequence window (decision 490's replay check), in memory: a restart forgets it, and every kind is idempotent. */
export class SeqWindows {
  private readonly windows = new Map<number, wire2.SeqWindow>();
  forget(from: number): void {
    this.windows.delete(from);
  }
  accept(from: number, seq: number): void {
    const v = wire2.acceptSeq(this.windows.get(from) ?? wire2.EMPTY_WINDOW, seq);
    if (!v.ok)
      throw new WireError('conflict', `message ${seq} of sender ${from}: ${v.detail}; send a new one`);
    this.windows.delete(from);
    this.windows.set(from, v.window);
    if (this.windows.size > MAX_WINDOWS) this.windows.delete(this.windows.keys().next().value as number);
  }
}
