import type { BlobManifest } from '../bundle.js';
import { concatBytes, fromHex, toHex } from '../bytes.js';
import { FILE_KINDS, type FileKind } from '../publications.js';
import { ulidFromBytes, ulidToBytes } from '../ulid.js';
import type { PublicationBody } from './kinds.js';

/**
 * A publication's compact manifest (docs/decisions/505-compact-publications.md): the v2 `publication`
 * body for a manifest, and back. Names, kinds and the file travel as they are; ids as 16 bytes, times in
 * seconds, and an inline file without the sha256 and size its bytes already state.
 */

/** What a publication's manifest says, as the hub builds it (`buildManifests`). */
export interface PublicationManifest {
  publicationId: string;
  name: string;
  fileKind: FileKind;
  sha256: string;
  size: number;
  /** ms since the epoch. */
  expiresAt?: number;
  inline?: Uint8Array;
  supersedes?: readonly string[];
}

/** The compact body of a manifest, or null when it has no compact form (an id that is not a ULID). */
export function publicationBody(m: PublicationManifest): PublicationBody | null {
  const id = ulidToBytes(m.publicationId);
  const kind = FILE_KINDS.indexOf(m.fileKind);
  const supersedes = (m.supersedes ?? []).map(ulidToBytes);
  if (!id || kind < 0 || supersedes.some((s) => s === null)) return null;
  return {
    id,
    name: m.name,
    fileKind: kind,
    // rounded up: a manifest never expires before the hub said
    ...(m.expiresAt !== undefined ? { expires: Math.ceil(m.expiresAt / 1000) } : {}),
    ...(m.inline ? { inline: m.inline } : { sha256: fromHex(m.sha256), size: m.size }),
    ...(supersedes.length > 0 ? { supersedes: concatBytes(...(supersedes as Uint8Array[])) } : {}),
  };
}

/**
 * The `blob` manifest a compact body stands for, as the agent and relays take a v1 one: an inline file's
 * sha256 (`sha256Hex`, the caller's: Node's is synchronous) and size computed from its bytes.
 */
export function manifestOfPublication(
  b: PublicationBody,
  sha256Hex: (bytes: Uint8Array) => string,
): BlobManifest {
  const supersedes: string[] = [];
  for (let i = 0; b.supersedes && i < b.supersedes.length; i += 16)
    supersedes.push(ulidFromBytes(b.supersedes.subarray(i, i + 16)));
  const sha256 = b.inline ? sha256Hex(b.inline) : toHex(b.sha256 as Uint8Array);
  return {
    sha256: sha256 as BlobManifest['sha256'],
    size: b.inline ? b.inline.length : (b.size as number),
    name: b.name,
    fileKind: FILE_KINDS[b.fileKind] as FileKind,
    ...(b.expires !== undefined ? { expiresAt: b.expires * 1000 } : {}),
    bundleId: ulidFromBytes(b.id),
    ...(supersedes.length > 0 ? { supersedes } : {}),
    ...(b.inline ? { inline: b.inline } : {}),
  };
}
