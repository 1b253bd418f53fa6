import { open } from 'node:fs/promises';

/** Caps on what a provider zip may hold. */
export interface ZipLimits {
  /** Most entries (files and directories) in the archive. Default 1000. */
  maxEntries?: number;
  /** Most bytes its entries unpack to, as the central directory declares them. Default 4 GiB. */
  maxUncompressedBytes?: number;
}

const DEFAULTS = { maxEntries: 1000, maxUncompressedBytes: 4 * 1024 ** 3 };
/** End of central directory record: 22 bytes plus a comment of at most 65535. */
const EOCD_MIN = 22;
const EOCD_SIG = 0x06054b50;
const CDH_SIG = 0x02014b50;
const CDH_MIN = 46;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const MADE_BY_UNIX = 3;

/**
 * Why a provider archive must not be placed, or null when it may: it is not a zip, it holds an entry
 * with an absolute path, a `..` segment or a symbolic link (Unix mode `S_IFLNK` in the entry's
 * external attributes), or more entries or bytes than `limits` allow.
 *
 * Reads only the end-of-central-directory record and the central directory (APPNOTE 4.3.12, 4.3.16),
 * bounded by the entry cap; never inflates an entry. ZIP64 and multi-disk archives are refused
 * (provider releases are neither).
 */
export async function checkProviderZip(path: string, limits: ZipLimits = {}): Promise<string | null> {
  const maxEntries = limits.maxEntries ?? DEFAULTS.maxEntries;
  const maxBytes = limits.maxUncompressedBytes ?? DEFAULTS.maxUncompressedBytes;
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    return `cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`;
  }
  try {
    const { size } = await fh.stat();
    if (size < EOCD_MIN) return 'not a zip archive';
    const tailLen = Math.min(size, EOCD_MIN + 0xffff);
    const tail = Buffer.alloc(tailLen);
    await fh.read(tail, 0, tailLen, size - tailLen);
    // The record is the last one whose comment length reaches exactly the end of the file.
    let at = -1;
    for (let i = tailLen - EOCD_MIN; i >= 0; i--) {
      if (tail.readUInt32LE(i) === EOCD_SIG && i + EOCD_MIN + tail.readUInt16LE(i + 20) === tailLen) {
        at = i;
        break;
      }
    }
    if (at < 0) return 'not a zip archive';
    const disk = tail.readUInt16LE(at + 4);
    const cdDisk = tail.readUInt16LE(at + 6);
    const onDisk = tail.readUInt16LE(at + 8);
    const total = tail.readUInt16LE(at + 10);
    const cdSize = tail.readUInt32LE(at + 12);
    const cdOffset = tail.readUInt32LE(at + 16);
    if (total === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff)
      return 'ZIP64 archives are not accepted as provider packages';
    if (disk !== 0 || cdDisk !== 0 || onDisk !== total) return 'multi-disk zip archives are not accepted';
    if (total > maxEntries) return `the archive has ${total} entries; at most ${maxEntries} are accepted`;
    const eocdOffset = size - tailLen + at;
    if (cdOffset + cdSize > eocdOffset || cdSize < total * CDH_MIN)
      return 'not a zip archive (its central directory lies outside the file)';
    // Each entry's header is 46 bytes plus three fields of at most 65535 each.
    if (cdSize > total * (CDH_MIN + 3 * 0xffff))
      return 'not a zip archive (its central directory is too long)';
    const cd = Buffer.alloc(cdSize);
    await fh.read(cd, 0, cdSize, cdOffset);
    return checkEntries(cd, total, maxBytes);
  } finally {
    await fh.close();
  }
}

function checkEntries(cd: Buffer, total: number, maxBytes: number): string | null {
  let p = 0;
  let bytes = 0;
  for (let n = 0; n < total; n++) {
    if (p + CDH_MIN > cd.length || cd.readUInt32LE(p) !== CDH_SIG)
      return `not a zip archive (central directory entry ${n + 1} is damaged)`;
    const madeBy = cd.readUInt16LE(p + 4) >> 8;
    const uncompressed = cd.readUInt32LE(p + 24);
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const commentLen = cd.readUInt16LE(p + 32);
    const attrs = cd.readUInt32LE(p + 38);
    const end = p + CDH_MIN + nameLen + extraLen + commentLen;
    if (end > cd.length) return `not a zip archive (central directory entry ${n + 1} is damaged)`;
    // latin1 keeps every byte; '/', '\\', '.' and ':' are the same bytes in UTF-8 and CP437.
    const name = cd.toString('latin1', p + CDH_MIN, p + CDH_MIN + nameLen);
    const problem = entryNameProblem(name);
    if (problem) return problem;
    if (madeBy === MADE_BY_UNIX && ((attrs >>> 16) & S_IFMT) === S_IFLNK)
      return `entry ${JSON.stringify(name)} is a symbolic link; provider packages may not hold links`;
    if (uncompressed === 0xffffffff) return 'ZIP64 archives are not accepted as provider packages';
    bytes += uncompressed;
    if (bytes > maxBytes) return `the archive unpacks to over ${maxBytes} bytes`;
    p = end;
  }
  return null;
}

/** Why an entry's name could escape the directory it is unpacked into, or null. */
export function entryNameProblem(name: string): string | null {
  const shown = JSON.stringify(name.slice(0, 200));
  if (!name) return 'an entry has an empty name';
  if (name.includes('\0')) return `entry ${shown} has a NUL byte in its name`;
  const slashed = name.replaceAll('\\', '/');
  if (slashed.startsWith('/') || /^[A-Za-z]:/.test(slashed))
    return `entry ${shown} has an absolute path; entries must stay inside the mirror directory`;
  if (slashed.split('/').includes('..'))
    return `entry ${shown} has a ".." segment; entries must stay inside the mirror directory`;
  return null;
}
