import { createHash } from 'node:crypto';
import { fromHex, toHex, wire2 } from '@driftline/protocol';
import { brotliIfSmaller, inflateWithin } from './brotli.js';

/**
 * A quiet round as a heartbeat (docs/decisions/500-heartbeat-rebuilds-the-change.md): the agent writes the
 * round's confirmations (decision 330's `confirmed` entries) as one Automerge change made by a rule both
 * ends run, so a v2 push carries the heartbeat (which cells, when) and the hub rebuilds the very change
 * from its copy of the document. The document stays the one record: same heads at both ends, acks by
 * heads, compaction and every reader unchanged. The push names the change's hash; a change the hub does
 * not rebuild to that hash is refused, never merged as something else.
 *
 * The rule: the change is made on a fork of the document at its heads by the document's heartbeat actor
 * ({@link heartbeatActor}), sets `confirmed[key]` for each named cell in key order to the JSON
 * `{at, n, commit?}` where `n` is the entry's count plus one and `commit` the entry's (carried), and its
 * time is the latest `at` in seconds. No message. With facts (`HeartbeatFacts`), it then sets
 * `facts.queueDepth`, `facts.oldestUnsentAt` (or deletes it, when none and present) and `facts.reportedAt`,
 * as integers, in that order: what every recorded round writes besides its cells.
 */

/** The Automerge backend calls the rule needs (structural: hop does not load Automerge itself). */
export interface HeartbeatBackend {
  fork(actor?: string, heads?: string[]): HeartbeatBackend;
  get(obj: string, prop: string, heads?: string[]): unknown;
  keys(obj: string, heads?: string[]): string[];
  put(obj: string, prop: string, value: string | number, datatype: 'str' | 'int'): void;
  delete(obj: string, prop: string): void;
  commit(message?: string | null, time?: number | null): string | null;
  getLastLocalChange(): Uint8Array | null;
  getHeads(): string[];
  free(): void;
}

interface HeartbeatCellAt {
  key: string;
  /** When its plan finished, ms since the epoch (agent clock). */
  at: number;
}

/** The facts a heartbeat change writes besides its cells. */
export interface HeartbeatFacts {
  queueDepth: number;
  oldestUnsentAt?: number;
  reportedAt: number;
}

/** How many bytes of the change's hash a heartbeat names (a signed name: no collision to fear). */
const HEARTBEAT_HASH_BYTES = 8;

/** The actor of a document's heartbeat changes: both ends derive it from the document id. */
export function heartbeatActor(docId: string): string {
  return createHash('sha256').update(`driftline/heartbeat\0${docId}`).digest('hex').slice(0, 32);
}

/** The document's cell keys in the heartbeat's order (sorted as `cellListDigest` sorts them). */
export function heartbeatCellKeys(h: HeartbeatBackend, heads?: string[]): string[] {
  const cells = h.get('_root', 'cells', heads);
  return typeof cells === 'string' ? [...h.keys(cells, heads)].sort() : [];
}

/** The `confirmed` entry the rule writes over `prev` (the entry's JSON text, or none). */
export function confirmedAfter(prev: unknown, at: number): string {
  let p: { n?: unknown; commit?: unknown } = {};
  if (typeof prev === 'string') {
    try {
      p = JSON.parse(prev) as typeof p;
    } catch {
      p = {};
    }
  }
  const n = typeof p.n === 'number' && Number.isSafeInteger(p.n) && p.n >= 0 ? p.n + 1 : 1;
  return JSON.stringify({ at, n, ...(typeof p.commit === 'string' ? { commit: p.commit } : {}) });
}

/**
 * The heartbeat change for `cells` on the document `h` is at (its heads), and its hash; null when the
 * document has no `confirmed` map (or no `facts` map for `facts`). Made on a fork: `h` itself is not
 * changed and the caller merges the bytes. `inPlace`: made in `h` itself, whose actor must be the
 * document's heartbeat actor (the hub's merge loads its replica so: no copy of the document per
 * heartbeat); a null answer may then leave `h` with uncommitted operations (load it again).
 */
export function heartbeatChange(
  h: HeartbeatBackend,
  docId: string,
  cells: readonly HeartbeatCellAt[],
  facts?: HeartbeatFacts,
  inPlace = false,
): { bytes: Uint8Array; hash: string } | null {
  if (cells.length === 0) return null;
  const f = inPlace ? h : h.fork(heartbeatActor(docId));
  try {
    const confirmed = f.get('_root', 'confirmed');
    if (typeof confirmed !== 'string') return null;
    let latest = 0;
    for (const { key, at } of [...cells].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))) {
      f.put(confirmed, key, confirmedAfter(f.get(confirmed, key), at), 'str');
      latest = Math.max(latest, at);
    }
    if (facts) {
      const obj = f.get('_root', 'facts');
      if (typeof obj !== 'string') return null;
      f.put(obj, 'queueDepth', facts.queueDepth, 'int');
      if (facts.oldestUnsentAt !== undefined) f.put(obj, 'oldestUnsentAt', facts.oldestUnsentAt, 'int');
      else if (f.get(obj, 'oldestUnsentAt') !== undefined) f.delete(obj, 'oldestUnsentAt');
      f.put(obj, 'reportedAt', facts.reportedAt, 'int');
    }
    const hash = f.commit(null, Math.floor(latest / 1000));
    const bytes = f.getLastLocalChange();
    return hash && bytes ? { bytes, hash } : null;
  } finally {
    if (!inPlace) f.free();
  }
}

/** protocol's `cellListDigest`, at once (the hub's merge is synchronous): node's sha256 of the same text. */
function cellListDigestNow(keys: readonly string[]): Uint8Array {
  const d = createHash('sha256').update(wire2.cellListText(keys)).digest();
  return Uint8Array.from(d.subarray(0, wire2.CELL_LIST_DIGEST_BYTES));
}

/** The first {@link HEARTBEAT_HASH_BYTES} of a change hash (hex), as a heartbeat names it. */
function heartbeatHashPrefix(hash: string): Uint8Array {
  return fromHex(hash.slice(0, HEARTBEAT_HASH_BYTES * 2));
}

/**
 * The heartbeat naming `cells` of the document whose sorted cell keys are `keys`, and the change hash;
 * null when a cell is not in the list.
 */
export function encodeHeartbeatOf(
  keys: readonly string[],
  cells: readonly HeartbeatCellAt[],
  hash: string,
  facts?: HeartbeatFacts,
): wire2.HeartbeatBody | null {
  const index = new Map(keys.map((k, i) => [k, i]));
  const named: wire2.HeartbeatCell[] = [];
  for (const c of cells) {
    const i = index.get(c.key);
    if (i === undefined) return null;
    named.push({ index: i, at: c.at });
  }
  const body = wire2.encodeHeartbeat(cellListDigestNow(keys), named);
  // brotli when it pays, as a push's changes: plans that finish at a steady pace have gaps alike
  const gaps = brotliIfSmaller(body.gaps);
  return {
    ...body,
    ...(gaps.br ? { gaps: gaps.bytes, gapsEncoding: 'br' as const } : {}),
    change: heartbeatHashPrefix(hash),
    ...(facts
      ? {
          depth: facts.queueDepth,
          ...(facts.oldestUnsentAt === undefined ? {} : { oldest: facts.oldestUnsentAt }),
          reported: facts.reportedAt,
        }
      : {}),
  };
}

/**
 * Whether the document already holds the change a heartbeat names, as one of its heads: the agent sent the
 * same round again (a new message, so no duplicate by id: a lost ack, another relay). Rebuilt on top of
 * itself it would hash otherwise and be refused.
 */
export function heartbeatHeld(h: Pick<HeartbeatBackend, 'getHeads'>, body: wire2.HeartbeatBody): boolean {
  const named = toHex(body.change ?? new Uint8Array());
  return named.length > 0 && h.getHeads().some((head) => head.startsWith(named));
}

/**
 * What the hub merges for a heartbeat: the change rebuilt on `h` (at the heads the push's changes left),
 * or why it cannot be (another cell list, a change that does not rebuild to the hash the agent signed).
 * `inPlace`: as `heartbeatChange`'s, the change is made (and left, even when refused) in `h`.
 */
export function rebuildHeartbeat(
  h: HeartbeatBackend,
  docId: string,
  body: wire2.HeartbeatBody,
  inPlace = false,
): { ok: true; bytes: Uint8Array } | { ok: false; reason: string } {
  const keys = heartbeatCellKeys(h);
  let gaps = body.gaps;
  if (body.gapsEncoding === 'br') {
    const inflated = inflateWithin(body.gaps, wire2.MAX_HEARTBEAT_GAPS_BYTES, 'heartbeat gaps');
    if (!inflated.ok) return inflated;
    gaps = inflated.bytes;
  }
  const read = wire2.decodeHeartbeat({ ...body, gaps }, cellListDigestNow(keys), keys.length);
  if (!read.ok) return read;
  const cells = read.cells.map((c) => ({ key: keys[c.index] as string, at: c.at }));
  const facts =
    body.reported === undefined
      ? undefined
      : {
          queueDepth: body.depth ?? 0,
          reportedAt: body.reported,
          ...(body.oldest === undefined ? {} : { oldestUnsentAt: body.oldest }),
        };
  const made = heartbeatChange(h, docId, cells, facts, inPlace);
  if (!made)
    return { ok: false, reason: 'heartbeat for a document with no confirmed map, no facts or no cells' };
  const want = toHex(body.change ?? new Uint8Array());
  if (want.length === 0 || !made.hash.startsWith(want))
    return {
      ok: false,
      reason: `heartbeat does not rebuild the agent's change (${want || 'no hash named'}, rebuilt ${made.hash.slice(0, 16)}): the agent sends the change itself next`,
    };
  return { ok: true, bytes: made.bytes };
}
