import { spawnSync } from 'node:child_process';
import { crc32 } from 'node:zlib';

/**
 * One entry of a zip written by `writeZip`: a file (Unix permission bits `mode`, default 0644), or a
 * Unix symbolic link to `target`.
 */
export type ZipEntry = { name: string; data?: string; mode?: number } | { name: string; symlinkTo: string };

/**
 * A stored (uncompressed) zip, byte for byte as APPNOTE 4.3 lays it out, for tests that need entries
 * the `zip` program will not write (`../evil`, `/etc/x`). Not for production: no ZIP64, no compression.
 */
export function writeZip(entries: ZipEntry[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const e of entries) {
    const link = 'symlinkTo' in e;
    const data = Buffer.from(link ? e.symlinkTo : (e.data ?? ''));
    const name = Buffer.from(e.name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(10, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by Unix, spec 2.0
    central.writeUInt16LE(10, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    const mode = link ? 0o120777 : 0o100000 | ((('mode' in e ? e.mode : undefined) ?? 0o644) & 0o7777);
    central.writeUInt32LE((mode << 16) >>> 0, 38);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const cd = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cd, end]);
}

/** Whether the system `zip` program is on PATH. */
export function hasZipProgram(): boolean {
  return spawnSync('zip', ['-v'], { encoding: 'utf8' }).status === 0;
}
