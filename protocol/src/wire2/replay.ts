/**
 * Sequences of a hop v2 stream (docs/decisions/490-hop-v2-wire-format.md). Each sender numbers the
 * messages it signs for one receiver from 1 and never reuses a number (it persists the next one before
 * sending). A receiver keeps, per sender, a {@link SeqWindow}: the highest sequence accepted and which of the
 * {@link SEQ_WINDOW} before it were. A message is accepted once; a replay, or one too old to tell, is refused
 * (its content is idempotent anyway, D2: the window stops a replayed pull or heartbeat from being acted on
 * twice, and bounds what the receiver keeps to two numbers per sender).
 */

export const SEQ_WINDOW = 64;

export interface SeqWindow {
  /** Highest sequence accepted (0: none yet). */
  highest: number;
  /** Bit i set: `highest - i` was accepted (bit 0 is `highest` itself). */
  seen: bigint;
}

export const EMPTY_WINDOW: SeqWindow = { highest: 0, seen: 0n };
const MASK = (1n << BigInt(SEQ_WINDOW)) - 1n;

export type SeqVerdict =
  | { ok: true; window: SeqWindow }
  | { ok: false; reason: 'replayed' | 'too-old'; detail: string };

/** Whether `seq` is new on a stream whose receiver kept `w`; the window to keep when it is. */
export function acceptSeq(w: SeqWindow, seq: number): SeqVerdict {
  if (!Number.isSafeInteger(seq) || seq < 1)
    return { ok: false, reason: 'too-old', detail: `sequence ${seq} is not a positive integer` };
  if (seq > w.highest) {
    const shift = seq - w.highest;
    const seen = shift >= SEQ_WINDOW ? 1n : ((w.seen << BigInt(shift)) | 1n) & MASK;
    return { ok: true, window: { highest: seq, seen } };
  }
  const back = w.highest - seq;
  if (back >= SEQ_WINDOW)
    return {
      ok: false,
      reason: 'too-old',
      detail: `sequence ${seq} is more than ${SEQ_WINDOW} before the highest seen (${w.highest})`,
    };
  const bit = 1n << BigInt(back);
  if (w.seen & bit) return { ok: false, reason: 'replayed', detail: `sequence ${seq} was already accepted` };
  return { ok: true, window: { highest: w.highest, seen: w.seen | bit } };
}

/**
 * What a cumulative receipt says (custody, ack): every sequence up to `upTo`, and the listed ones after it.
 * The sender of the receipt keeps this per stream; it grows by {@link advanceReceipt}.
 */
export interface ReceiptState {
  upTo: number;
  above: readonly number[];
}

/** Most sequences past `upTo` a receipt lists (its bitmap's 1,024 bytes). */
export const MAX_ABOVE = 8192;

/** The state once `seq` is also held; the contiguous run after `upTo` is folded in. */
export function advanceReceipt(s: ReceiptState, seq: number): ReceiptState {
  if (seq <= s.upTo || s.above.includes(seq)) return s;
  const above = [...s.above, seq].sort((a, b) => a - b);
  let upTo = s.upTo;
  while (above[0] === upTo + 1) {
    upTo++;
    above.shift();
  }
  return { upTo, above: above.filter((x) => x - upTo - 2 < MAX_ABOVE) };
}

/** `above` as a receipt carries it: bit i of byte j is `upTo + 2 + 8j + i`; undefined when empty. */
export function aboveBitmap(s: ReceiptState): Uint8Array | undefined {
  if (s.above.length === 0) return undefined;
  const last = Math.max(...s.above) - s.upTo - 2;
  const out = new Uint8Array(Math.floor(last / 8) + 1);
  for (const x of s.above) {
    const i = x - s.upTo - 2;
    out[i >> 3] = (out[i >> 3] as number) | (1 << (i & 7));
  }
  return out;
}

/** The sequences a receipt's bitmap names after `upTo`. */
export function readAbove(upTo: number, bitmap: Uint8Array | undefined): number[] {
  const out: number[] = [];
  for (const [j, b] of (bitmap ?? new Uint8Array()).entries())
    for (let i = 0; i < 8; i++) if (b & (1 << i)) out.push(upTo + 2 + 8 * j + i);
  return out;
}

/** true when a receipt covers `seq`. */
export function receiptCovers(upTo: number, bitmap: Uint8Array | undefined, seq: number): boolean {
  if (seq <= upTo) return true;
  const i = seq - upTo - 2;
  if (i < 0 || !bitmap || i >> 3 >= bitmap.length) return false;
  return ((bitmap[i >> 3] as number) & (1 << (i & 7))) !== 0;
}
