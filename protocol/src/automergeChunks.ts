/**
 * Automerge's chunk framing, as a doc-delta's `changes` carry it (`saveSince` writes one chunk per change):
 * magic (4 bytes), checksum (4: the first bytes of the SHA-256 of the rest), type (1), LEB128 length, data.
 * Walked by the agent to split off a delta's last change (its heartbeat, decision 500) and by the hub's
 * merge to refuse chunks Automerge would skip (docs/decisions/500-heartbeat-rebuilds-the-change.md).
 */

const MAGIC = [0x85, 0x6f, 0x4a, 0x83] as const;

/** Where one chunk lies in the bytes walked: `start` its magic, `end` past its data. */
export interface ChunkSpan {
  start: number;
  end: number;
}

/** Why the walk stopped short: no magic, a length that does not read, or data past the end. */
export interface ChunkBreak {
  at: number;
  why: 'magic' | 'length' | 'short';
}

/** The whole chunks of `bytes` in order, up to the first that is not whole (`broken`: which, and why). */
export function automergeChunks(bytes: Uint8Array): { chunks: ChunkSpan[]; broken?: ChunkBreak } {
  const chunks: ChunkSpan[] = [];
  let at = 0;
  while (at < bytes.length) {
    if (MAGIC.some((m, i) => bytes[at + i] !== m)) return { chunks, broken: { at, why: 'magic' } };
    let p = at + 9;
    let len = 0;
    for (let shift = 0; ; shift += 7) {
      const b = bytes[p++];
      if (b === undefined || shift > 28) return { chunks, broken: { at, why: 'length' } };
      len += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) break;
    }
    if (p + len > bytes.length) return { chunks, broken: { at, why: 'short' } };
    chunks.push({ start: at, end: p + len });
    at = p + len;
  }
  return { chunks };
}
