import {
  type AckPayload,
  asAgentId,
  asSha256,
  asSiteId,
  concatBytes,
  encodeBundle,
  fromHex,
  wire2,
} from '@driftline/protocol';
import type { DownlinkRow } from '../../ports/HubStore.js';
import type { IdGen } from '../../ports/IdGen.js';

/** How long an ack lives on the downlink by default: an agent offline for a month still gets it. */
export const DEFAULT_ACK_LIFETIME_S = 30 * 86_400;

export type AckRow = Omit<DownlinkRow, 'seq'>;

/**
 * The one place acks are built (step 8 of docs/architecture.md#the-trip, D4): a hub-signed `ack` bundle of the hub's heads for
 * one document epoch and the blobs it holds, and the downlink row that carries it. Ingest acks the
 * documents a batch changed; a finished blob upload re-acks the documents that announced the blob.
 */
export class AckSigner {
  readonly lifetimeS: number;

  constructor(
    private readonly d: { ids: IdGen; hubPrivateKey: CryptoKey; ackLifetimeS?: number | undefined },
  ) {
    this.lifetimeS = d.ackLifetimeS ?? DEFAULT_ACK_LIFETIME_S;
  }

  /** The signed ack bundle. Its id is taken when this is called, before any await (ids stay in call order). */
  sign(
    who: { site: string; agent: string },
    docId: string,
    heads: string[],
    blobs: readonly string[],
    now: number,
    readsConfirmed = false,
  ): Promise<Uint8Array> {
    const payload: AckPayload = {
      agent: asAgentId(who.agent),
      doc: docId,
      heads,
      blobs: blobs.map(asSha256),
      committedAt: now,
      // Only for a document with the map: an agent older than decision 330 refuses unknown ack fields.
      ...(readsConfirmed ? { readsConfirmed: true as const } : {}),
    };
    return encodeBundle(
      {
        id: this.d.ids.next(),
        kind: 'ack',
        source: 'hub',
        destination: { site: asSiteId(who.site), agent: asAgentId(who.agent) },
        created: now,
        lifetimeS: this.lifetimeS,
        priority: 'control',
        doc: docId,
        heads,
      },
      payload,
      this.d.hubPrivateKey,
    );
  }

  /**
   * The downlink row for an ack, returned at once (so rows keep their order) with its bytes filled in
   * when `signed` settles.
   */
  row(
    who: { site: string; agent: string },
    docId: string,
    heads: string[],
    blobs: readonly string[],
    now: number,
    readsConfirmed = false,
  ): { row: AckRow; signed: Promise<void> } {
    const row = this.emptyRow(who, docId, now);
    const signed = this.sign(who, docId, heads, blobs, now, readsConfirmed).then((bytes) => {
      row.bytes = bytes;
    });
    return { row, signed };
  }

  /**
   * The downlink row for the ack of a hop v2 push (decision 495): the hub's signed `ack` message naming the
   * push (`upTo` its sequence, `tip` its signature), not the heads; the agent knows what that push carried.
   */
  rowWire2(
    who: { site: string; agent: string; wire2: { from: number; seq: number; tip: Uint8Array } },
    docId: string,
    blobs: readonly string[],
    now: number,
    states: { readsConfirmed?: boolean; heartbeats?: boolean } = {},
  ): { row: AckRow; signed: Promise<void> } {
    const { readsConfirmed = false, heartbeats = false } = states;
    const row = this.emptyRow(who, docId, now);
    const body: wire2.AckBody = {
      upTo: who.wire2.seq,
      tip: who.wire2.tip,
      committedAt: now,
      ...(readsConfirmed ? { readsConfirmed: true as const } : {}),
      // the hub rebuilds heartbeats (decision 500): said only to an agent that writes them, so never to
      // one older than that decision (its strict reading would refuse the field)
      ...(heartbeats ? { heartbeats: true as const } : {}),
      ...(blobs.length > 0 ? { blobs: concatBytes(...blobs.map(fromHex)) } : {}),
    };
    const signed = wire2
      .encodeMessage(
        { kind: 'ack', from: wire2.HUB_NODE_ID, to: who.wire2.from, seq: who.wire2.seq, body },
        this.d.hubPrivateKey,
      )
      .then((bytes) => {
        row.bytes = bytes;
      });
    return { row, signed };
  }

  /** An ack's downlink row, its bytes to be filled in once signed. */
  private emptyRow(who: { site: string; agent: string }, docId: string, now: number): AckRow {
    return {
      site: who.site,
      agent: who.agent,
      kind: 'ack',
      docId,
      requestId: null,
      expiresAt: now + this.lifetimeS * 1000,
      bytes: new Uint8Array(0),
    };
  }
}
