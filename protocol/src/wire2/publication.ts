import type { BlobManifest } from '../bundle.js';
import { concatBytes, fromHex, toHex } from '../bytes.js';
import { FILE_KINDS, type FileKind } from '../publications.js';
import { ulidFromBytes, ulidToBytes } from '../ulid.js';
import { packGitHeads, unpackGitHeads } from './gitHeads.js';
import type { PublicationBody } from './kinds.js';

/**
 * A publication's compact manifest (docs/decisions/505-compact-publications.md): the v2 `publication`
 * body for a manifest, and back. Names, kinds and the file travel as they are; ids as 16 bytes, times in
 * seconds, and an inline file without the sha256 and size its bytes already state (a git bundle's heads
 * packed where the site reads them so, docs/decisions/520-packed-git-heads.md).
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
  /**
   * The site reads a git bundle's heads packed (decision 520): an inline `git` file goes so where that
   * rebuilds it byte for byte.
   */
  packGitHeads?: boolean;
}

/** The compact body of a manifest, or null when it has no compact form (an id that is not a ULID). */
export function publicationBody(m: PublicationManifest): PublicationBody | null {
  const id = ulidToBytes(m.publicationId);
  const kind = FILE_KINDS.indexOf(m.fileKind);
  const supersedes = (m.supersedes ?? []).map(ulidToBytes);
  if (!id || kind < 0 || supersedes.some((s) => s === null)) return null;
  const packed = m.inline && m.packGitHeads && m.fileKind === 'git' ? packGitHeads(m.inline) : null;
  return {
    id,
    name: m.name,
    fileKind: kind,
    // rounded up: a manifest never expires before the hub said
    ...(m.expiresAt !== undefined ? { expires: Math.ceil(m.expiresAt / 1000) } : {}),
    ...(packed
      ? { inline: packed.pack, gitHeads: packed.heads }
      : m.inline
        ? { inline: m.inline }
        : { sha256: fromHex(m.sha256), size: m.size }),
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
  // packed heads were checked on decoding (`bodyFromValue`): they unpack
  const file = b.inline && b.gitHeads ? (unpackGitHeads(b.gitHeads, b.inline) as Uint8Array) : b.inline;
  const sha256 = file ? sha256Hex(file) : toHex(b.sha256 as Uint8Array);
  return {
    sha256: sha256 as BlobManifest['sha256'],
    size: file ? file.length : (b.size as number),
    name: b.name,
    fileKind: FILE_KINDS[b.fileKind] as FileKind,
    ...(b.expires !== undefined ? { expiresAt: b.expires * 1000 } : {}),
    bundleId: ulidFromBytes(b.id),
    ...(supersedes.length > 0 ? { supersedes } : {}),
    ...(file ? { inline: file } : {}),
  };
}
