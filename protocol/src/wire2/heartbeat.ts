/**
 * A quiet round's heartbeat (docs/decisions/490-hop-v2-wire-format.md): which cells of the site's enrolled
 * cell list were re-planned unchanged, and when each plan finished, in a few bytes a cell.
 *
 * - `list`: the first 4 bytes of sha256 over the cell keys, sorted, joined by `\n`. Both ends hold the
 *   list (the agent's declared cells, as the hub keeps them in its brief); a heartbeat for another list is
 *   refused, never read against the wrong cells.
 * - `runs`: LEB128 varints, alternating lengths of runs of cells named and not named, starting with a run
 *   named (possibly 0). A quiet round of 200 cells is one run: 2 bytes.
 * - `start` and `gaps`: the first named cell's time (ms since the epoch, agent clock), then for each next
 *   named cell in list order the difference from the previous one, zigzag LEB128 (plans finish in any order).
 */

export interface HeartbeatCell {
  /** Position in the sorted cell list. */
  index: number;
  /** When its plan finished, ms since the epoch (agent clock). */
  at: number;
}

export interface HeartbeatBody {
  list: Uint8Array;
  start: number;
  runs: Uint8Array;
  gaps: Uint8Array;
  /**
   * The first 8 bytes of the hash of the Automerge change the heartbeat stands for: the hub rebuilds the
   * change and merges it only when it hashes so (docs/decisions/500-heartbeat-rebuilds-the-change.md).
   */
  change?: Uint8Array;
  /** The facts the change writes besides its cells (decision 500): the queue's depth, its oldest unsent result (ms) and the report time (ms). */
  depth?: number;
  oldest?: number;
  reported?: number;
  /** `br`: `gaps` are brotli-compressed (the reader inflates within the field's cap, S8). */
  gapsEncoding?: 'br';
}

/** Most bytes a heartbeat's gaps inflate to (the field's cap on the wire). */
export const MAX_HEARTBEAT_GAPS_BYTES = 512 * 1024;

/** Most cells a heartbeat may name (S8); the varints of a larger one are refused. */
export const MAX_HEARTBEAT_CELLS = 100_000;

/** LEB128 unsigned varints (at most 8 bytes each: values up to 2^56). */
export function writeVarints(values: readonly number[]): Uint8Array {
  const out: number[] = [];
  for (let v of values) {
    if (!Number.isSafeInteger(v) || v < 0) throw new RangeError(`varint ${v} is not a safe uint`);
    while (v >= 0x80) {
      out.push((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    out.push(v);
  }
  return Uint8Array.from(out);
}

/** Reads LEB128 varints; null when one is unterminated, overlong (a trailing zero byte) or too many. */
export function readVarints(bytes: Uint8Array, max: number): number[] | null {
  const out: number[] = [];
  let v = 0;
  let scale = 1;
  let len = 0;
  for (const b of bytes) {
    if (len === 8) return null;
    v += (b & 0x7f) * scale;
    scale *= 0x80;
    len++;
    if (b & 0x80) continue;
    if (b === 0 && len > 1) return null;
    if (out.length === max) return null;
    out.push(v);
    v = 0;
    scale = 1;
    len = 0;
  }
  return len === 0 ? out : null;
}

const zig = (n: number) => (n < 0 ? -2 * n - 1 : 2 * n);
const unzig = (n: number) => (n % 2 === 1 ? -(n + 1) / 2 : n / 2);

/** Bytes of a cell list's name: the first of the sha256 of {@link cellListText}. */
export const CELL_LIST_DIGEST_BYTES = 4;

/**
 * What a cell list's name digests: the keys sorted, so both ends agree on positions, joined by `\n`. For a
 * caller that must hash at once (the hub's merge is synchronous: `@driftline/hop/heartbeat`).
 */
export const cellListText = (keys: readonly string[]): string => [...keys].sort().join('\n');

/** The 4-byte name of a cell list ({@link cellListText}). */
export async function cellListDigest(keys: readonly string[]): Promise<Uint8Array> {
  const data = new TextEncoder().encode(cellListText(keys));
  const d = await globalThis.crypto.subtle.digest('SHA-256', data);
  return new Uint8Array(d).slice(0, CELL_LIST_DIGEST_BYTES);
}

/** The heartbeat naming `cells` (any order; each index once) of the list named `list`. */
export function encodeHeartbeat(list: Uint8Array, cells: readonly HeartbeatCell[]): HeartbeatBody {
  const sorted = [...cells].sort((a, b) => a.index - b.index);
  const runs: number[] = [];
  let next = 0;
  let run = 0;
  for (const c of sorted) {
    if (c.index < next) throw new RangeError(`cell ${c.index} is named twice`);
    if (c.index > next) {
      runs.push(run, c.index - next);
      run = 0;
    }
    run++;
    next = c.index + 1;
  }
  runs.push(run);
  const gaps = sorted.slice(1).map((c, i) => zig(c.at - (sorted[i] as HeartbeatCell).at));
  return { list, start: sorted[0]?.at ?? 0, runs: writeVarints(runs), gaps: writeVarints(gaps) };
}

/**
 * The cells a heartbeat names, against a list of `listSize` cells named `list`; a string saying what is
 * wrong when it does not fit that list.
 */
export function decodeHeartbeat(
  body: HeartbeatBody,
  list: Uint8Array,
  listSize: number,
): { ok: true; cells: HeartbeatCell[] } | { ok: false; reason: string } {
  if (body.list.length !== list.length || body.list.some((b, i) => b !== list[i]))
    return {
      ok: false,
      reason: 'heartbeat names another cell list (the agent and hub disagree on its cells)',
    };
  const runs = readVarints(body.runs, 2 * Math.min(listSize, MAX_HEARTBEAT_CELLS) + 1);
  if (!runs) return { ok: false, reason: 'heartbeat runs are not varints or too many' };
  const named: number[] = [];
  let at = 0;
  for (const [i, n] of runs.entries()) {
    if (at + n > listSize) return { ok: false, reason: `heartbeat runs pass the list's ${listSize} cells` };
    if (i % 2 === 0) for (let k = 0; k < n; k++) named.push(at + k);
    at += n;
  }
  const gaps = readVarints(body.gaps, Math.max(0, named.length - 1));
  if (!gaps || gaps.length !== Math.max(0, named.length - 1))
    return {
      ok: false,
      reason: `heartbeat has ${gaps?.length ?? 'unreadable'} gaps for ${named.length} cells`,
    };
  const cells: HeartbeatCell[] = [];
  let t = body.start;
  for (const [k, index] of named.entries()) {
    if (k > 0) t += unzig(gaps[k - 1] as number);
    if (!Number.isSafeInteger(t) || t < 0)
      return { ok: false, reason: `heartbeat time of cell ${index} is negative` };
    cells.push({ index, at: t });
  }
  return { ok: true, cells };
}
