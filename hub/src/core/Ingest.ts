import { docId, type Receipt, WireError, wire2 } from '@driftline/protocol';
import { AckSigner } from './ingest/acks.js';
import { Batch } from './ingest/batch.js';
import { commitBatch } from './ingest/commit.js';
import type { PathClocks } from './ingest/contact.js';
import { dedupe } from './ingest/dedupe.js';
import { DeferredAcks, heldAckRow } from './ingest/deferredAcks.js';
import { ingestDocument } from './ingest/document.js';
import { answerOnDownlink } from './ingest/downlink.js';
import { committedEvent } from './ingest/events.js';
import { batchParts } from './ingest/parts.js';
import { startMerges } from './ingest/startMerges.js';
import { verifyAll } from './ingest/verifyAll.js';
import type { Committed, IngestDeps } from './ingestTypes.js';
import { Rejections } from './rejections.js';
import { KeyCache } from './verify.js';
import { Wire2Directory } from './wire2Push.js';

export type { Committed, IngestDeps } from './ingestTypes.js';

/** Documents merged and committed together at most: a larger batch is taken in parts (`batchParts`). */
const PART_DOCS = 8;
/** How often held acks are checked for their time (decision 525). */
const HELD_ACK_CHECK_MS = 1000;

/**
 * Verify → dedupe → merge → materialise → answer → commit → events (step 7 of docs/architecture.md#the-trip), one batch at a
 * time. Each step is a function over a `Batch` under `./ingest/` (docs/decisions/140-ingest-steps.md).
 * A request's bundles are taken in parts of at most `partDocs` documents, one after the other, so the
 * hub holds one part's merges and rows at a time (docs/decisions/475-hub-memory-and-stalls-at-fleet-scale.md).
 * Everything a part changes, its acks included, goes into one transaction; receipts are returned after
 * the last part commits (D1). Should a part fail, the request fails: the parts before it stay
 * committed, and the sender's retry finds their bundles `duplicate` (D2).
 */
export class Ingest {
  /** Builds every ack the hub sends (ingest's, and the re-acks after a blob upload). */
  readonly acks: AckSigner;
  private chain: Promise<unknown> = Promise.resolve();
  /** Enrolled agents' keys as imported (the hub's `/v2` reads them too). */
  readonly keys = new KeyCache();
  /** Who hop v2 short ids are (decision 495); the hub's `/v2` reads it too. */
  readonly directory: Wire2Directory;
  private readonly listeners = new Set<(c: Committed) => void>();
  private readonly rejections: Rejections;
  /** Acks held for the agent's next push (decision 525), sent when due by `heldAckTimer`. */
  readonly heldAcks = new DeferredAcks();
  private heldAckTimer: NodeJS.Timeout | null = null;

  constructor(private readonly d: IngestDeps) {
    this.acks = new AckSigner(d);
    this.directory = new Wire2Directory(
      () => d.store.listAgents(),
      this.keys,
      () => d.clock.now(),
    );
    this.rejections = new Rejections({
      ids: d.ids,
      hubPrivateKey: d.hubPrivateKey,
      onDropped: (site, n) =>
        d.log.warn({ site, refusals: n }, 'no rejection sent: the site has the most agents with one already'),
    });
  }

  onCommitted(fn: (c: Committed) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * `clocks`: each bundle source's clock minus the hub's, as its path composed it from round trips per hop
   * (docs/decisions/070-clock-offsets.md); without it the offset falls back to one-way transit.
   */
  accept(
    peerName: string,
    bundles: readonly Uint8Array[],
    clocks?: PathClocks,
    /** The posting peer's sites: a v2 push says its site only through its key (decision 495). */
    scope?: readonly string[],
  ): Promise<Receipt[]> {
    const next = this.chain.then(async () => {
      const receipts: Receipt[] = [];
      const v2Docs = await this.v2Docs(bundles);
      for (const part of batchParts(bundles, this.d.partDocs ?? PART_DOCS, (i) => v2Docs.get(i))) {
        const got = await this.acceptNow(peerName, part.bundles, part.docs, clocks, scope);
        for (const r of got) {
          const index = part.indexes[r.index] as number;
          receipts[index] = { ...r, index };
        }
      }
      return receipts;
    });
    this.chain = next.catch(() => undefined);
    return next;
  }

  private async acceptNow(
    peerName: string,
    bundles: readonly Uint8Array[],
    docs: readonly string[],
    clocks: PathClocks | undefined,
    scope: readonly string[] | undefined,
  ): Promise<Receipt[]> {
    const { store, replicas } = this.d;
    // Another hub on the same store may be merging these documents: from reading their agents' rows
    // and the duplicate check to the commit, they are this process's alone (a no-op for a store of one
    // process). Verification then only accepts bundles of the documents locked.
    const b = await store.lockDocs(docs, async () => {
      const b = new Batch(store, this.d.clock.now(), bundles.length);
      const v2 = { directory: this.directory, scope };
      const accepted = await verifyAll(b, bundles, this.keys, this.d.count, v2);
      // A v2 push names its document only through its key: one read before the lock that did not find
      // it (a key enrolled a moment ago) is not locked here, and is not merged unlocked: sent again.
      const unlocked = accepted.find((a) => a.v.wire2 && !docs.includes(a.v.doc.id));
      if (unlocked)
        throw new WireError(
          'unavailable',
          `document ${unlocked.v.doc.id} was not locked for this batch (its agent was enrolled just now); send it again`,
        );
      const merging = startMerges(replicas, await dedupe(b, accepted));
      // Merged concurrently, read one document at a time, in order: later documents see earlier cells.
      for (const doc of merging) await ingestDocument(b, this.d, doc, peerName, clocks);
      await answerOnDownlink(b, this.rejections, this.acks, this.heldAcks);
      await commitBatch(store, replicas, b);
      this.heldAcks.applyAll(b.heldAcks.values());
      return b;
    });
    if (this.heldAcks.size > 0 && !this.heldAckTimer) {
      // one check at a time: ingest held up for minutes (a slow store) queues one, not one a second
      let checking = false;
      this.heldAckTimer = setInterval(() => {
        if (checking) return;
        checking = true;
        void this.sendHeldAcks(false).finally(() => {
          checking = false;
        });
      }, HELD_ACK_CHECK_MS);
      this.heldAckTimer.unref();
    }
    const event = committedEvent(b);
    if (event) for (const fn of this.listeners) fn(event);
    return b.receipts as Receipt[];
  }

  /**
   * Sends the held acks that are due (`all`: every one, as the hub stops), in turn with ingest so a push
   * being taken finds its agent's held ack or its successor, never both gone (decision 525).
   */
  sendHeldAcks(all: boolean): Promise<void> {
    const next = this.chain.then(async () => {
      const due = this.heldAcks.due(all ? Number.POSITIVE_INFINITY : this.d.clock.now());
      if (this.heldAcks.size === 0 && this.heldAckTimer) {
        clearInterval(this.heldAckTimer);
        this.heldAckTimer = null;
      }
      if (due.length === 0) return;
      const downlink = await Promise.all(due.map((h) => heldAckRow(this.d.store, this.acks, h)));
      await this.d.store.commit({ downlink });
    });
    this.chain = next.catch((e: unknown) =>
      this.d.log.warn({ err: e }, 'held acks were not sent: the agents’ next pushes bring them'),
    );
    return this.chain as Promise<void>;
  }

  /** Stops the held acks' timer, sending every ack held (before the store closes). */
  async close(): Promise<void> {
    await this.sendHeldAcks(true);
    if (this.heldAckTimer) clearInterval(this.heldAckTimer);
    this.heldAckTimer = null;
  }

  /** The document of each v2 push in a batch, by index, read before any part locks its documents. */
  private async v2Docs(bundles: readonly Uint8Array[]): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const [i, bytes] of bundles.entries()) {
      if (!wire2.isWire2Message(bytes)) continue;
      const m = wire2.decodeMessage(bytes);
      if (!m.ok || m.value.kind !== 'push') continue;
      // the first candidate's document: two keys sharing a short id are rare, and verification refuses a
      // push whose document is not among the part's locked ones (it is sent again)
      const [who] = await this.directory.resolve(m.value.from);
      if (who) out.set(i, docId(who.site, who.agent, (m.value.body as wire2.PushBody).epoch));
    }
    return out;
  }
}
