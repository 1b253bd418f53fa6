import { MAX_INLINE_PUBLICATION_BYTES, MAX_SUPERSEDES } from '../bundle.js';
import type { ClockEstimate } from '../clock.js';
import { FILE_KINDS } from '../publications.js';
import type { Value } from './cbor.js';
import { MAX_GIT_HEADS_BYTES, unpackGitHeads } from './gitHeads.js';
import { type HeartbeatBody, MAX_HEARTBEAT_GAPS_BYTES } from './heartbeat.js';
import { clockFromValue, clockToValue } from './pushClock.js';

/**
 * The kinds of hop v2 message and their bodies (docs/decisions/490-hop-v2-wire-format.md). A body is a
 * CBOR map keyed by field numbers; an unknown field, a missing one or a value of the wrong type is refused
 * (as v1's strict payload schemas: a new field comes with a capability the receiver states).
 */
export const KINDS = { push: 1, pull: 2, custody: 3, ack: 4, publication: 5 } as const;
export type KindName = keyof typeof KINDS;
export const KIND_NAMES = Object.keys(KINDS) as KindName[];
export const kindName = (n: number): KindName | undefined => KIND_NAMES.find((k) => KINDS[k] === n);

/** Most bytes of Automerge changes one push carries (as v1's batch cap); larger rounds go as several pushes. */
export const MAX_CHANGES_BYTES = 4 * 1024 * 1024;
/** Most bytes of a cumulative bitmap (`above`): 8,192 sequences past the cumulative one. */
export const MAX_ABOVE_BYTES = 1024;
/** Longest a push may ask its ack to wait for the agent's next push, seconds (push field 11, decision 525). */
export const MAX_ACK_LATER_S = 3600;
/** Longest hold a pull may ask, seconds (as v1's `MAX_DOWNLINK_WAIT_S`). */
export const MAX_HOLD_S = 86_400;

/** `push`, agent → hub through any relays: a round's results. At least one of `changes` and `heartbeat`. */
export interface PushBody {
  /** The agent document's epoch the changes belong to (numbered from 1). */
  epoch: number;
  /** Automerge changes (`saveSince` the acknowledged heads), as v1's doc-delta carries them. */
  changes?: Uint8Array;
  /**
   * `br`: `changes` are brotli-compressed; `dz1`: raw deflate against the shared dictionary
   * (`changesDictionary.ts`, decision 510), sent only where every node says it reads it (`PUSH_FORM_DZ1`).
   * The receiver inflates within its cap (S8).
   */
  changesEncoding?: 'br' | 'dz1';
  /** Cells re-planned unchanged, and when (the quiet-round form). */
  heartbeat?: HeartbeatBody;
  /** No change will follow in this epoch. */
  sealed?: true;
  /** The agent's send time, ms: asks the relay to stamp the exchange in its custody answer (decision 290). */
  t0?: number;
  /**
   * Detail blobs the changes announce, as v1's `blobs`: UTF-8 JSON of the `BlobAnnouncement` array, read
   * by its schema on arrival (`wire2/push.ts`). Rare on a quiet day; a compact form can come with a version.
   */
  blobs?: Uint8Array;
  /** The round holds a failed plan: relays forward it first (v1's `failure` priority). */
  failure?: true;
  /**
   * The same announcements in binary (`blobList.ts`, decision 510), never beside `blobs`: sent only where
   * every node on the way says it reads them (`PUSH_FORM_BLOB_LIST`).
   */
  blobList?: Uint8Array;
  /**
   * The agent's clock minus its upstream's (the node it sent this push to), as v1's `driftline-clock`
   * (`pushClock.ts`): signed with the push, sent only where every node on the way says it reads it
   * (`PUSH_FORM_CLOCK`). The first node composes it into the push's source clock (decision 070).
   */
  clock?: ClockEstimate;
  /**
   * More of the round follows within this many seconds: the hub may ack this push with the agent's next
   * one (whose ack covers it, by heads), or after these seconds at the latest (decision 525). Sent only
   * where every node on the way says it reads it (`PUSH_FORM_ACK_LATER`).
   */
  ackLater?: number;
}

/** `pull`, agent → its relay: a held pull, and the cumulative receipt of the downlink. */
export interface PullBody {
  /** The agent holds every message of the stream to it up to this sequence (0: none yet). */
  have: number;
  /** Hold the answer up to this many seconds while nothing is due (0: answer at once). */
  holdS: number;
  /** The agent's send time, ms: asks the relay to stamp the exchange (clock sample, decision 290). */
  t0?: number;
}

/** `custody`, relay → agent: the relay holds durably (D1) every push of the agent up to `upTo`. */
export interface CustodyBody {
  upTo: number;
  /** Bitmap of sequences after `upTo + 1` also held (bit i of byte j: `upTo + 2 + 8j + i`). */
  above?: Uint8Array;
  /** The exchange's times: the client's t0, the relay's t1 (received) and t2 (answered), ms. */
  stamp?: [number, number, number];
}

/** `ack`, hub → agent: the hub committed every push of the agent up to `upTo` (D4: prune on this). */
export interface AckBody {
  upTo: number;
  /** First 8 bytes of sha256 over the signature of the push `upTo`: the ack names that exact message. */
  tip: Uint8Array;
  /** Hub time of the commit, ms. */
  committedAt: number;
  /** The hub reads confirmations written apart (decision 330). */
  readsConfirmed?: true;
  /** The hub rebuilds heartbeats (decision 500); stated only to an agent that writes heartbeat changes. */
  heartbeats?: true;
  /** As custody's `above`: pushes after `upTo + 1` also committed. */
  above?: Uint8Array;
  /** The detail blobs the hub holds for the document, 32-byte sha256 digests concatenated (v1's `blobs`). */
  blobs?: Uint8Array;
}

/**
 * `publication`, hub → a site (`to` its {@link wire2SiteId}-style short id): a file headquarters published
 * for the site, the compact form of v1's signed `blob` manifest (docs/decisions/505-compact-publications.md).
 * Either the file itself (`inline`: its sha256 and size are the receiver's to compute, the signature
 * covers every byte) or `sha256` and `size` for a fetch by Range.
 */
export interface PublicationBody {
  /** The publication id, a ULID as its 16 bytes. */
  id: Uint8Array;
  name: string;
  /** Index into `FILE_KINDS`. */
  fileKind: number;
  /** When relays and the site drop it, seconds since the epoch; absent: never. */
  expires?: number;
  inline?: Uint8Array;
  sha256?: Uint8Array;
  size?: number;
  /** Earlier publications of the same name and kind it replaces there, 16-byte ids concatenated. */
  supersedes?: Uint8Array;
  /**
   * A git bundle's header packed (`gitHeads.ts`, decision 520): the file is its unpacked heads followed by
   * `inline`. Sent only to sites whose every agent, and every relay on the way, says it reads it.
   */
  gitHeads?: Uint8Array;
}

export interface Bodies {
  push: PushBody;
  pull: PullBody;
  custody: CustodyBody;
  ack: AckBody;
  publication: PublicationBody;
}

type FieldType = 'uint' | 'bytes' | 'text' | 'true' | 'stamp' | 'heartbeat' | 'encoding' | 'clock';
interface Field {
  key: number;
  name: string;
  type: FieldType;
  required?: boolean;
  /** uint: largest value; bytes, text: most bytes (text: UTF-16 units). */
  max?: number;
  min?: number;
  /** bytes: exact length. */
  len?: number;
  /** encoding: the encodings it may name (default `br` alone). */
  encodings?: readonly EncodingName[];
}

const HEARTBEAT: Field[] = [
  { key: 1, name: 'list', type: 'bytes', required: true, len: 4 },
  { key: 2, name: 'start', type: 'uint', required: true },
  { key: 3, name: 'runs', type: 'bytes', required: true, max: 64 * 1024 },
  { key: 4, name: 'gaps', type: 'bytes', required: true, max: MAX_HEARTBEAT_GAPS_BYTES },
  { key: 5, name: 'change', type: 'bytes', len: 8 },
  { key: 6, name: 'depth', type: 'uint' },
  { key: 7, name: 'oldest', type: 'uint' },
  { key: 8, name: 'reported', type: 'uint' },
  { key: 9, name: 'gapsEncoding', type: 'encoding' },
];

export const FIELDS: Record<KindName, Field[]> = {
  push: [
    { key: 1, name: 'epoch', type: 'uint', required: true, min: 1 },
    { key: 2, name: 'changes', type: 'bytes', max: MAX_CHANGES_BYTES },
    { key: 3, name: 'changesEncoding', type: 'encoding', encodings: ['br', 'dz1'] },
    { key: 4, name: 'heartbeat', type: 'heartbeat' },
    { key: 5, name: 'sealed', type: 'true' },
    { key: 6, name: 't0', type: 'uint' },
    { key: 7, name: 'blobs', type: 'bytes', max: 256 * 1024 },
    { key: 8, name: 'failure', type: 'true' },
    { key: 9, name: 'blobList', type: 'bytes', max: 256 * 1024 },
    { key: 10, name: 'clock', type: 'clock' },
    { key: 11, name: 'ackLater', type: 'uint', min: 1, max: MAX_ACK_LATER_S },
  ],
  pull: [
    { key: 1, name: 'have', type: 'uint', required: true },
    { key: 2, name: 'holdS', type: 'uint', required: true, max: MAX_HOLD_S },
    { key: 3, name: 't0', type: 'uint' },
  ],
  custody: [
    { key: 1, name: 'upTo', type: 'uint', required: true },
    { key: 2, name: 'above', type: 'bytes', max: MAX_ABOVE_BYTES },
    { key: 3, name: 'stamp', type: 'stamp' },
  ],
  ack: [
    { key: 1, name: 'upTo', type: 'uint', required: true },
    { key: 2, name: 'tip', type: 'bytes', required: true, len: 8 },
    { key: 3, name: 'committedAt', type: 'uint', required: true },
    { key: 4, name: 'readsConfirmed', type: 'true' },
    { key: 5, name: 'above', type: 'bytes', max: MAX_ABOVE_BYTES },
    { key: 6, name: 'blobs', type: 'bytes', max: 32 * 4096 },
    { key: 7, name: 'heartbeats', type: 'true' },
  ],
  publication: [
    { key: 1, name: 'id', type: 'bytes', required: true, len: 16 },
    { key: 2, name: 'name', type: 'text', required: true, max: 255 },
    { key: 3, name: 'fileKind', type: 'uint', required: true, max: FILE_KINDS.length - 1 },
    { key: 4, name: 'expires', type: 'uint' },
    { key: 5, name: 'inline', type: 'bytes', max: MAX_INLINE_PUBLICATION_BYTES },
    { key: 6, name: 'sha256', type: 'bytes', len: 32 },
    { key: 7, name: 'size', type: 'uint' },
    { key: 8, name: 'supersedes', type: 'bytes', max: 16 * MAX_SUPERSEDES },
    { key: 9, name: 'gitHeads', type: 'bytes', max: MAX_GIT_HEADS_BYTES },
  ],
};

/** Encodings of a compressed field on the wire (`changesEncoding`, `gapsEncoding`). */
const ENCODINGS = { br: 1, dz1: 2 } as const;
type EncodingName = keyof typeof ENCODINGS;

function fieldsToMap(fields: Field[], body: Record<string, unknown>): Map<number, Value> {
  const out = new Map<number, Value>();
  for (const f of fields) {
    const v = body[f.name];
    if (v === undefined) continue;
    if (f.type === 'heartbeat') out.set(f.key, fieldsToMap(HEARTBEAT, v as Record<string, unknown>));
    else if (f.type === 'encoding') out.set(f.key, ENCODINGS[v as EncodingName]);
    else if (f.type === 'clock') out.set(f.key, clockToValue(v as ClockEstimate));
    else out.set(f.key, v as Value);
  }
  return out;
}

/** A body as the CBOR map it travels as (field names → numbers). Checks nothing: `bodyFromValue` does. */
export function bodyToValue<K extends KindName>(kind: K, body: Bodies[K]): Map<number, Value> {
  return fieldsToMap(FIELDS[kind], body as unknown as Record<string, unknown>);
}

const isUint = (v: Value): v is number => typeof v === 'number';

function readField(
  f: Field,
  v: Value,
  where: string,
): { ok: true; value: unknown } | { ok: false; reason: string } {
  const bad = (what: string) => ({
    ok: false as const,
    reason: `${where} field ${f.key} (${f.name}) ${what}`,
  });
  switch (f.type) {
    case 'uint':
      if (!isUint(v)) return bad('is not a uint');
      if (f.max !== undefined && v > f.max) return bad(`is ${v}, over ${f.max}`);
      if (f.min !== undefined && v < f.min) return bad(`is ${v}, under ${f.min}`);
      return { ok: true, value: v };
    case 'bytes':
      if (!(v instanceof Uint8Array)) return bad('is not a byte string');
      if (f.len !== undefined && v.length !== f.len) return bad(`is ${v.length} bytes, not ${f.len}`);
      if (f.max !== undefined && v.length > f.max) return bad(`is ${v.length} bytes, over ${f.max}`);
      return { ok: true, value: v };
    case 'text':
      if (typeof v !== 'string') return bad('is not a text string');
      if (f.max !== undefined && v.length > f.max) return bad(`is ${v.length} characters, over ${f.max}`);
      return { ok: true, value: v };
    case 'true':
      return v === true ? { ok: true, value: true } : bad('is not true (leave it out instead)');
    case 'encoding': {
      const name = (f.encodings ?? ['br']).find((e) => ENCODINGS[e] === v);
      return name ? { ok: true, value: name } : bad(`names no known encoding (${String(v)})`);
    }
    case 'stamp':
      return Array.isArray(v) && v.length === 3 && v.every(isUint)
        ? { ok: true, value: v }
        : bad('is not three uint times [t0, t1, t2]');
    case 'heartbeat':
      return v instanceof Map ? readFields(HEARTBEAT, v, `${where} heartbeat`) : bad('is not a map');
    case 'clock': {
      const c = clockFromValue(v);
      return c.ok ? c : bad(c.reason);
    }
  }
}

function readFields(
  fields: Field[],
  map: ReadonlyMap<number, Value>,
  where: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; reason: string } {
  for (const k of map.keys())
    if (!fields.some((f) => f.key === k))
      return {
        ok: false,
        reason: `${where} has unknown field ${k} (known: ${fields.map((f) => f.key).join(', ')})`,
      };
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = map.get(f.key);
    if (v === undefined) {
      if (f.required) return { ok: false, reason: `${where} lacks field ${f.key} (${f.name})` };
      continue;
    }
    const r = readField(f, v, where);
    if (!r.ok) return r;
    out[f.name] = r.value;
  }
  return { ok: true, value: out };
}

/** A decoded body checked against its kind's fields; a reason naming the field when it is not one. */
export function bodyFromValue<K extends KindName>(
  kind: K,
  value: Value,
): { ok: true; body: Bodies[K] } | { ok: false; reason: string } {
  if (!(value instanceof Map)) return { ok: false, reason: `${kind} body is not a map` };
  const r = readFields(FIELDS[kind], value, `${kind} body`);
  if (!r.ok) return r;
  if (kind === 'push') {
    const p = r.value as unknown as PushBody;
    if (!p.changes && !p.heartbeat)
      return { ok: false, reason: 'push body has neither changes nor heartbeat' };
    if (p.changesEncoding && !p.changes)
      return { ok: false, reason: 'push body names an encoding without changes' };
    if (p.blobs && p.blobList)
      return { ok: false, reason: 'push body carries its blobs twice (fields 7 and 9)' };
  }
  if (kind === 'ack') {
    const a = r.value as unknown as AckBody;
    if (a.blobs && a.blobs.length % 32 !== 0)
      return {
        ok: false,
        reason: `ack body field 6 (blobs) is ${a.blobs.length} bytes, not whole sha256 digests`,
      };
  }
  if (kind === 'publication') {
    const p = r.value as unknown as PublicationBody;
    const fetched = p.sha256 !== undefined && p.size !== undefined;
    if (p.inline ? p.sha256 !== undefined || p.size !== undefined : !fetched)
      return {
        ok: false,
        reason: 'publication body must carry either the file (5 inline) or its sha256 and size (6, 7)',
      };
    if (p.gitHeads) {
      const file =
        p.inline && p.fileKind === FILE_KINDS.indexOf('git') && unpackGitHeads(p.gitHeads, p.inline);
      if (!file)
        return {
          ok: false,
          reason:
            'publication body field 9 (gitHeads) must be packed git bundle heads, beside a git file inline (5)',
        };
      if (file.length > MAX_INLINE_PUBLICATION_BYTES)
        return {
          ok: false,
          reason: `publication body's git bundle is ${file.length} bytes unpacked, over the ${MAX_INLINE_PUBLICATION_BYTES} an inline file may be`,
        };
    }
    if (p.supersedes && p.supersedes.length % 16 !== 0)
      return {
        ok: false,
        reason: `publication body field 8 (supersedes) is ${p.supersedes.length} bytes, not whole 16-byte ids`,
      };
  }
  return { ok: true, body: r.value as unknown as Bodies[K] };
}
