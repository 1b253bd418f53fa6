import { createHash } from 'node:crypto';
import {
  BlobAnnouncementSchema,
  type ClockEstimate,
  type DocDeltaPayload,
  encodeUlid,
  MAX_BLOB_ANNOUNCEMENTS,
  type Priority,
  wire2,
} from '@driftline/protocol';
import { z } from 'zod';
import { compressChanges, inflateChanges } from './brotli.js';

/** A doc-delta as v1 carries it, and what a v2 push carries of it (docs/decisions/495-hop-v2-on-the-agent-link.md). */
export interface PushDelta {
  epoch: number;
  changes: Uint8Array;
  blobs: DocDeltaPayload['blobs'];
  sealed?: boolean | undefined;
  priority: Priority;
  /**
   * The round's heartbeat, standing for the Automerge change the hub rebuilds after `changes`
   * (docs/decisions/500-heartbeat-rebuilds-the-change.md); `changes` may then be empty.
   */
  heartbeat?: wire2.HeartbeatBody | undefined;
}

const BlobsSchema = z.array(BlobAnnouncementSchema).max(MAX_BLOB_ANNOUNCEMENTS);

/** The compact forms of a push every node on the way reads (decision 510); none by default. */
export interface PushForms {
  /** Blob announcements in binary, field 9 (`PUSH_FORM_BLOB_LIST`). */
  blobList?: boolean;
  /** Changes deflated against the shared dictionary where that is smaller (`PUSH_FORM_DZ1`). */
  dz1?: boolean;
  /** The agent's clock term, field 10 (`PUSH_FORM_CLOCK`, decision 495's clock terms). */
  clock?: boolean;
  /** `ackLater`, field 11: the hub may ack with the agent's next push (`PUSH_FORM_ACK_LATER`, decision 525). */
  ackLater?: boolean;
  /** A push with `ackLater` is answered 204, its custody with the next (`PUSH_FORM_CUSTODY_LATER`, decision 530). */
  custodyLater?: boolean;
}

/** Push field 11 as `encodePush` writes it for these forms and seconds; undefined: not written. */
export function ackLaterField(compact: PushForms, ackLaterS: number | undefined): number | undefined {
  return compact.ackLater && ackLaterS !== undefined && ackLaterS >= 1
    ? Math.min(Math.round(ackLaterS), wire2.MAX_ACK_LATER_S)
    : undefined;
}

/** The compact forms a node's registration answer (its `pushForms`) allows. */
export function pushFormsOf(said: readonly string[] | undefined): PushForms {
  return {
    blobList: said?.includes(wire2.PUSH_FORM_BLOB_LIST) === true,
    dz1: said?.includes(wire2.PUSH_FORM_DZ1) === true,
    clock: said?.includes(wire2.PUSH_FORM_CLOCK) === true,
    ackLater: said?.includes(wire2.PUSH_FORM_ACK_LATER) === true,
    custodyLater: said?.includes(wire2.PUSH_FORM_CUSTODY_LATER) === true,
  };
}

/**
 * Signs a round's delta as a v2 push from the agent (`from`) to the hub. The changes go brotli'd when that
 * is smaller (an Automerge change of 200 cells: 9.2 kB raw, ~1 kB); `t0` asks the first node for a stamp;
 * `clock`, the agent's clock minus that node's (v1's `driftline-clock`), goes where the forms allow it.
 */
export function encodePush(
  d: PushDelta,
  header: {
    from: number;
    seq: number;
    t0: number;
    clock?: ClockEstimate | null;
    /** More of the round follows within these seconds (decision 525); sent where the forms allow it. */
    ackLaterS?: number | undefined;
  },
  privateKey: CryptoKey,
  /** The compact forms every node on the way reads (its `pushForms`, decision 510). */
  compact: PushForms = {},
): Promise<Uint8Array> {
  const changes = compressChanges(d.changes, compact.dz1 === true);
  const list = compact.blobList && d.blobs.length > 0 ? wire2.encodeBlobList(d.blobs) : null;
  const some = d.changes.length > 0 || !d.heartbeat;
  const clock = compact.clock ? wire2.pushClockOf(header.clock) : undefined;
  const ackLater = ackLaterField(compact, header.ackLaterS);
  const body: wire2.PushBody = {
    epoch: d.epoch,
    ...(some ? { changes: changes.bytes } : {}),
    ...(some && changes.encoding ? { changesEncoding: changes.encoding } : {}),
    ...(d.heartbeat ? { heartbeat: d.heartbeat } : {}),
    ...(d.sealed ? { sealed: true as const } : {}),
    t0: header.t0,
    ...(list
      ? { blobList: list }
      : d.blobs.length > 0
        ? { blobs: new TextEncoder().encode(JSON.stringify(d.blobs)) }
        : {}),
    ...(d.priority === 'failure' ? { failure: true as const } : {}),
    ...(clock ? { clock } : {}),
    ...(ackLater ? { ackLater } : {}),
  };
  return wire2.encodeMessage(
    { kind: 'push', from: header.from, to: wire2.HUB_NODE_ID, seq: header.seq, body },
    privateKey,
  );
}

/**
 * A push's delta as the hub merges it: the changes inflated within `maxChanges` bytes (S8), the blob
 * announcements read by their schema. A reason naming what is wrong when it is not one.
 */
export function pushDelta(
  body: wire2.PushBody,
  maxChanges: number,
): { ok: true; value: PushDelta } | { ok: false; reason: string } {
  let changes = body.changes ?? new Uint8Array();
  if (body.changes && body.changesEncoding) {
    const inflated = inflateChanges(body.changes, body.changesEncoding, maxChanges);
    if (!inflated.ok) return inflated;
    changes = inflated.bytes;
  }
  let blobs: DocDeltaPayload['blobs'] = [];
  if (body.blobList) {
    const list = wire2.decodeBlobList(body.blobList);
    if (!list.ok) return list;
    // the same schema as field 7's JSON: a digest, size and content type read as v1's announcements
    const parsed = BlobsSchema.safeParse(list.value);
    if (!parsed.success)
      return {
        ok: false,
        reason: `its blob list is not blob announcements: ${parsed.error.issues[0]?.message}`,
      };
    blobs = parsed.data;
  } else if (body.blobs) {
    let json: unknown;
    try {
      json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body.blobs));
    } catch {
      return { ok: false, reason: 'its blobs field is not UTF-8 JSON' };
    }
    const parsed = BlobsSchema.safeParse(json);
    if (!parsed.success)
      return {
        ok: false,
        reason: `its blobs field is not a list of blob announcements: ${parsed.error.issues[0]?.message}`,
      };
    blobs = parsed.data;
  }
  return {
    ok: true,
    value: {
      epoch: body.epoch,
      changes,
      blobs,
      sealed: body.sealed ?? undefined,
      priority: body.failure ? 'failure' : 'status',
      ...(body.heartbeat ? { heartbeat: body.heartbeat } : {}),
    },
  };
}

/**
 * The bundle id a push is known by where ids are kept (relay custody, the hub's dedupe, receipts): a ULID
 * of the agent's send time and its signature's hash, so the same message always has the same id.
 */
export function pushBundleId(t0: number | undefined, signature: Uint8Array): string {
  const time = Math.max(0, Math.min(t0 ?? 0, 2 ** 48 - 1));
  return encodeUlid(time, createHash('sha256').update(signature).digest().subarray(0, 10));
}

/**
 * An agent's short id, from its raw public key alone: the first 4 bytes of its sha256 as a uint. Every node
 * computes the same one without asking anybody (a relay forwards the push verbatim, the hub checks it).
 */
export function wire2KeyId(rawPublicKey: Uint8Array): number {
  return createHash('sha256').update(rawPublicKey).digest().readUInt32BE(0);
}

/**
 * A site's short id, `to` of the hub's v2 messages for the whole site (a publication, decision 505): the
 * first 4 bytes of sha256 over a domain and the site id. The agent takes only those naming its own site.
 */
export function wire2SiteId(site: string): number {
  return createHash('sha256').update(`driftline/site\0${site}`).digest().readUInt32BE(0);
}

/** A relay's short id, from its name (1…65,535; 0 is the hub's). */
export function wire2NodeId(name: string): number {
  return (createHash('sha256').update(name).digest().readUInt16BE(0) % 65_535) + 1;
}
