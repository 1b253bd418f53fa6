import type { IngestStore } from '../../ports/HubStore.js';
import type { Wire2Pushed } from '../verify.js';
import type { AckRow, AckSigner } from './acks.js';

/**
 * Acks of hop v2 pushes held back for the agent's next push (push field 11, `ackLater`:
 * docs/decisions/525-acks-wait-for-the-round.md). A push of a round under way says more follows within N
 * seconds; its ack is held here, one per agent, and
 * - the agent's next push of the same document takes its place: that push's ack names heads that hold
 *   everything the held one's did (the document only grows within an epoch), so one ack answers both;
 * - a push of another document (the next epoch) sends the held one at once, beside its own;
 * - it goes by itself once its N seconds have passed (`due`), the earliest of a chain of held acks
 *   counting: a stream of pushes each saying "more follows" is acked at least every N seconds.
 * In memory, per hub process: a hub that stops forgets what it held, and the agent's next push (or its
 * resend of what no ack covered) brings the next ack. Each held ack keeps the time its push was committed
 * (`committedAt`), so a rejection sent after it is not outdated by an ack signed later.
 */
export interface HeldAck {
  docId: string;
  who: { site: string; agent: string; wire2: Wire2Pushed };
  states: { readsConfirmed: boolean; heartbeats: boolean };
  /** When the push was committed: the ack's `committedAt`. */
  committedAt: number;
  /** When it goes at the latest (hub clock, ms). */
  dueAt: number;
}

/** Most acks held at once: past it, a push is acked at once (a hub that many agents' rounds fill). */
const MAX_HELD = 200_000;

export class DeferredAcks {
  private readonly held = new Map<string, HeldAck>();

  get size(): number {
    return this.held.size;
  }

  /** The ack held for an agent, left in place. */
  peek(site: string, agent: string): HeldAck | undefined {
    return this.held.get(key(site, agent));
  }

  /** Whether an ack of this agent can be held (one is already, or the cap is not reached). */
  hasRoom(site: string, agent: string): boolean {
    return this.held.size < MAX_HELD || this.held.has(key(site, agent));
  }

  /**
   * What a committed batch decided for an agent: the ack now held for it (`hold`), or none (`null`: it was
   * sent, or a later ack covers it). Applied only once the batch's writes are committed: an ack held for a
   * push that was not stored would later acknowledge what the hub does not hold (D4).
   */
  apply(site: string, agent: string, hold: HeldAck | null): void {
    if (hold) this.held.set(key(site, agent), hold);
    else this.held.delete(key(site, agent));
  }

  /** {@link apply} for each agent a committed batch decided for (`Batch.heldAcks`). */
  applyAll(decided: Iterable<{ site: string; agent: string; hold: HeldAck | null }>): void {
    for (const { site, agent, hold } of decided) this.apply(site, agent, hold);
  }

  /** Takes out every ack due by `now`. */
  due(now: number): HeldAck[] {
    const out: HeldAck[] = [];
    for (const [k, h] of this.held)
      if (h.dueAt <= now) {
        out.push(h);
        this.held.delete(k);
      }
    return out;
  }
}

/** How held acks are keyed, one per agent (here and in a batch's `heldAcks`). */
export const heldAckKey = (site: string, agent: string) => `${site}\n${agent}`;
const key = heldAckKey;

/** The signed downlink row of a held ack, naming the blobs the hub holds for its document now. */
export async function heldAckRow(
  store: Pick<IngestStore, 'heldBlobsFor'>,
  acks: AckSigner,
  h: HeldAck,
): Promise<AckRow> {
  const blobs = [...(await store.heldBlobsFor(h.docId))].sort();
  const { row, signed } = acks.rowWire2(h.who, h.docId, blobs, h.committedAt, h.states);
  await signed;
  return row;
}
