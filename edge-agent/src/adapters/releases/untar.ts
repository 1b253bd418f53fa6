import { createReadStream } from 'node:fs';
import { mkdir, open, symlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createGunzip } from 'node:zlib';

/** Bounds on what one tarball may unpack to. */
export interface UnpackLimits {
  /** Bytes of regular files, summed. */
  maxBytes: number;
  /** Entries of any type. */
  maxEntries: number;
}

/** A tarball that may not be unpacked: why, in words for the operator (and the hub). */
export class UnsafeTarball extends Error {}

const BLOCK = 512;
/** Longest GNU long-name or pax header body read (they hold one path, or a few records). */
const META_MAX = 64 * 1024;

/** Reads exact byte counts from a stream of chunks. */
class Reader {
  private buf: Buffer = Buffer.alloc(0);
  private done = false;
  constructor(private readonly it: AsyncIterator<Buffer>) {}

  private async fill(n: number): Promise<boolean> {
    while (this.buf.length < n && !this.done) {
      const r = await this.it.next();
      if (r.done) this.done = true;
      else this.buf = this.buf.length ? Buffer.concat([this.buf, r.value]) : r.value;
    }
    return this.buf.length >= n;
  }

  /** Exactly `n` bytes, or null at the end of the stream. */
  async take(n: number): Promise<Buffer | null> {
    if (!(await this.fill(n))) return null;
    const out = this.buf.subarray(0, n);
    this.buf = this.buf.subarray(n);
    return out;
  }

  /** `n` bytes handed to `sink` as they arrive (never all held at once). */
  async pipe(n: number, sink: (b: Buffer) => Promise<void>): Promise<void> {
    let left = n;
    while (left > 0) {
      if (!(await this.fill(1))) throw new UnsafeTarball('the tarball ends inside a file (truncated)');
      const part = this.buf.subarray(0, Math.min(left, this.buf.length));
      this.buf = this.buf.subarray(part.length);
      left -= part.length;
      await sink(part);
    }
  }
}

const field = (h: Buffer, at: number, len: number) => {
  const raw = h.subarray(at, at + len);
  const nul = raw.indexOf(0);
  return raw.subarray(0, nul < 0 ? len : nul).toString('utf8');
};

function octal(h: Buffer, at: number, len: number, what: string): number {
  if ((h[at] ?? 0) & 0x80) throw new UnsafeTarball(`a ${what} in base-256 (over 8 GB) is not accepted`);
  const s = field(h, at, len).trim();
  if (s === '') return 0;
  if (!/^[0-7]+$/.test(s)) throw new UnsafeTarball(`a tar header has a ${what} that is not octal`);
  return Number.parseInt(s, 8);
}

function checksumOk(h: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (h[i] as number);
  return sum === octal(h, 148, 8, 'checksum');
}

/** A member path made relative and checked: never absolute, never `..`, never empty. */
export function memberPath(raw: string): string {
  if (raw.includes('\0')) throw new UnsafeTarball('a member name holds a NUL byte');
  if (raw.startsWith('/')) throw new UnsafeTarball(`member ${JSON.stringify(raw)} has an absolute path`);
  const parts = raw.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw new UnsafeTarball(`member ${JSON.stringify(raw)} climbs out with '..'`);
  return parts.join('/');
}

/** A symlink target that stays below the link's folder: relative, with no `..` (so no chain leads out). */
function linkTarget(path: string, target: string): string {
  if (target === '' || target.startsWith('/') || target.split('/').includes('..'))
    throw new UnsafeTarball(
      `symlink ${JSON.stringify(path)} points at ${JSON.stringify(target)}, outside its folder`,
    );
  return target;
}

function paxRecords(body: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  for (let i = 0; at < body.length && i < 1000; i++) {
    const sp = body.indexOf(0x20, at);
    const len = Number(body.subarray(at, sp).toString());
    if (sp < 0 || !Number.isInteger(len) || len <= 0 || at + len > body.length)
      throw new UnsafeTarball('a pax header does not parse');
    const rec = body.subarray(sp + 1, at + len - 1).toString('utf8');
    const eq = rec.indexOf('=');
    if (eq > 0) out[rec.slice(0, eq)] = rec.slice(eq + 1);
    at += len;
  }
  return out;
}

/**
 * Unpacks the gzip'd tar `file` into `dest` (an empty folder) without trusting it: regular files,
 * folders and symlinks that stay below their folder only (no hard links, devices or fifos); no absolute
 * path, no `..`, no member twice; at most `limits` bytes and entries; every header's checksum checked.
 * Files are created new (O_EXCL), 0755 when the tarball marks them executable, else 0644. Throws
 * `UnsafeTarball` saying what is wrong; the caller removes `dest` then.
 */
export async function unpackTarGz(
  file: string,
  dest: string,
  limits: UnpackLimits,
): Promise<{ files: number; bytes: number }> {
  const source = createReadStream(file);
  const gunzip = source.pipe(createGunzip());
  const r = new Reader(gunzip[Symbol.asyncIterator]());
  let entries = 0;
  let files = 0;
  let bytes = 0;
  let longName: string | undefined;
  let longLink: string | undefined;
  let pax: Record<string, string> = {};
  try {
    for (;;) {
      const h = await r.take(BLOCK);
      if (!h) throw new UnsafeTarball('the tarball ends without its end-of-archive blocks (truncated)');
      if (h.every((b) => b === 0)) break; // end of archive
      if (!checksumOk(h)) throw new UnsafeTarball('a tar header fails its checksum (corrupt)');
      if (++entries > limits.maxEntries)
        throw new UnsafeTarball(`it has more than ${limits.maxEntries} entries (releases.maxEntries)`);
      const type = String.fromCharCode(h[156] as number);
      const size = octal(h, 124, 12, 'size');
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      if (type === 'L' || type === 'K' || type === 'x' || type === 'g') {
        if (size > META_MAX) throw new UnsafeTarball(`a tar extension header of ${size} bytes is too long`);
        const body = (await r.take(padded))?.subarray(0, size);
        if (!body) throw new UnsafeTarball('the tarball ends inside a header (truncated)');
        if (type === 'L') longName = field(body, 0, body.length);
        else if (type === 'K') longLink = field(body, 0, body.length);
        else if (type === 'x') pax = paxRecords(body);
        continue;
      }
      const magic = h.subarray(257, 263).toString('latin1');
      const prefix = magic === 'ustar\0' ? field(h, 345, 155) : '';
      const raw = pax.path ?? longName ?? (prefix ? `${prefix}/${field(h, 0, 100)}` : field(h, 0, 100));
      const link = pax.linkpath ?? longLink ?? field(h, 157, 100);
      longName = longLink = undefined;
      pax = {};
      const path = memberPath(raw);
      const to = join(dest, ...path.split('/'));
      if (type === '5') {
        if (path) await mkdir(to, { recursive: true, mode: 0o755 });
        await r.pipe(padded, async () => {});
        continue;
      }
      if (!path) throw new UnsafeTarball('a member has an empty name');
      if (type === '2') {
        await mkdir(dirname(to), { recursive: true, mode: 0o755 });
        await symlink(linkTarget(path, link), to).catch((e: NodeJS.ErrnoException) => {
          throw new UnsafeTarball(`cannot make symlink ${path}: ${e.code}`);
        });
        await r.pipe(padded, async () => {});
        continue;
      }
      if (type !== '0' && type !== '\0' && type !== '7')
        throw new UnsafeTarball(
          `member ${JSON.stringify(path)} is a ${type === '1' ? 'hard link' : `type '${type}' entry (device, fifo or other)`}; only files, folders and symlinks inside are accepted`,
        );
      bytes += size;
      if (bytes > limits.maxBytes)
        throw new UnsafeTarball(`it unpacks to more than ${limits.maxBytes} bytes (releases.maxBytes)`);
      await mkdir(dirname(to), { recursive: true, mode: 0o755 });
      const mode = octal(h, 100, 8, 'mode') & 0o111 ? 0o755 : 0o644;
      const fh = await open(to, 'wx', mode).catch((e: NodeJS.ErrnoException) => {
        throw new UnsafeTarball(
          e.code === 'EEXIST'
            ? `member ${JSON.stringify(path)} appears twice`
            : `cannot write ${path}: ${e.code}`,
        );
      });
      try {
        await r.pipe(size, async (b) => {
          await fh.write(b);
        });
        await fh.sync();
      } finally {
        await fh.close();
      }
      await r.pipe(padded - size, async () => {});
      files++;
    }
  } catch (e) {
    if (e instanceof UnsafeTarball) throw e;
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR')
      throw new UnsafeTarball(`it is not a gzip'd tar (${(e as Error).message})`);
    throw e;
  } finally {
    gunzip.destroy();
    source.destroy();
  }
  return { files, bytes };
}
