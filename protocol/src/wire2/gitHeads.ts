import { concatBytes, fromHex, toHex } from '../bytes.js';

/**
 * A git bundle's heads packed for a compact publication (docs/decisions/520-packed-git-heads.md): git's v2
 * bundle begins with a text header, `# v2 git bundle`, a line per prerequisite (`-<40 hex> <subject>`)
 * and per ref (`<40 hex> <ref>`), then a blank line and the pack. The object ids are hex and the first line
 * is always the same: 121 of a 597-byte bundle of one 3-line commit, where 65 say it all.
 *
 * Packed, each line is one entry: a byte (0 a prerequisite, 1 a ref), the id's 20 bytes, a byte counting
 * the rest of the line and that rest as it was (its leading space included). The first line and the
 * blank one are implied. `packGitHeads` packs only a file that unpacks to itself byte for byte, so a
 * receiver's sha256 of the file it rebuilds is the publisher's.
 */

const FIRST_LINE = new TextEncoder().encode('# v2 git bundle\n');
const NL = 0x0a;
const PREREQUISITE = 0;
const REF = 1;
/** Most heads (prerequisites and refs) one packed bundle names. */
export const MAX_GIT_HEADS = 64;
/** Most bytes of a packed heads field (64 entries of a 40-byte ref name). */
export const MAX_GIT_HEADS_BYTES = MAX_GIT_HEADS * 64;

export interface PackedGitBundle {
  /** The packed header. */
  heads: Uint8Array;
  /** What follows git's header: the pack, as it was. */
  pack: Uint8Array;
}

/** An object id as git writes it in a bundle: lower case (upper case would not rebuild the same). */
const OBJECT_ID = /^[0-9a-f]{40}$/;

/** A git v2 bundle's heads packed, or null when `file` is not one this form rebuilds byte for byte. */
export function packGitHeads(file: Uint8Array): PackedGitBundle | null {
  if (file.length < FIRST_LINE.length || !FIRST_LINE.every((b, i) => file[i] === b)) return null;
  const out: number[] = [];
  let at = FIRST_LINE.length;
  for (let n = 0; ; n++) {
    const nl = file.indexOf(NL, at);
    if (nl < 0) return null;
    if (nl === at) {
      at = nl + 1; // the blank line: the pack follows
      break;
    }
    if (n >= MAX_GIT_HEADS) return null;
    const prerequisite = file[at] === 0x2d; // '-'
    const hexAt = prerequisite ? at + 1 : at;
    const restAt = hexAt + 40;
    if (restAt > nl || nl - restAt > 255) return null;
    const id = String.fromCharCode(...file.subarray(hexAt, restAt));
    if (!OBJECT_ID.test(id)) return null;
    out.push(prerequisite ? PREREQUISITE : REF, ...fromHex(id), nl - restAt);
    for (let i = restAt; i < nl; i++) out.push(file[i] as number);
    at = nl + 1;
  }
  if (out.length === 0 || out.length > MAX_GIT_HEADS_BYTES) return null;
  const packed = { heads: Uint8Array.from(out), pack: file.subarray(at) };
  const again = unpackGitHeads(packed.heads, packed.pack);
  return again && again.length === file.length && again.every((b, i) => file[i] === b) ? packed : null;
}

/** The bundle file `heads` and `pack` stand for, or null when `heads` is not a packed header. */
export function unpackGitHeads(heads: Uint8Array, pack: Uint8Array): Uint8Array | null {
  if (heads.length === 0 || heads.length > MAX_GIT_HEADS_BYTES) return null;
  const text: number[] = [...FIRST_LINE];
  let at = 0;
  for (let n = 0; at < heads.length; n++) {
    const kind = heads[at];
    if (n >= MAX_GIT_HEADS || (kind !== PREREQUISITE && kind !== REF) || at + 22 > heads.length) return null;
    if (kind === PREREQUISITE) text.push(0x2d);
    for (const c of toHex(heads.subarray(at + 1, at + 21))) text.push(c.charCodeAt(0));
    const restLen = heads[at + 21] as number;
    const restAt = at + 22;
    if (restAt + restLen > heads.length) return null;
    for (let i = restAt; i < restAt + restLen; i++) {
      const c = heads[i] as number;
      if (c === NL) return null; // one line per entry
      text.push(c);
    }
    text.push(NL);
    at = restAt + restLen;
  }
  text.push(NL);
  return concatBytes(Uint8Array.from(text), pack);
}
