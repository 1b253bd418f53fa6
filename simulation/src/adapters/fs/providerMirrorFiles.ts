import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { crc32, inflateRawSync } from 'node:zlib';
import type { CachedPackage, MirroredZip } from '../../core/terraform/providersMirror.js';

/** Bounds for the fake's `providers mirror`: entries walked, bytes per file, bytes inflated per entry. */
const MAX_ENTRIES = 10_000;
const MAX_FILE_BYTES = 1024 * 1024 * 1024;

const dirs = (d: string) =>
  existsSync(d)
    ? readdirSync(d, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .slice(0, MAX_ENTRIES)
    : [];

/** Packages of a local provider cache in the unpacked layout `<host>/<ns>/<type>/<version>/<os_arch>/`. */
export function readProviderCache(base: string): CachedPackage[] {
  const out: CachedPackage[] = [];
  for (const host of dirs(base))
    for (const ns of dirs(join(base, host)))
      for (const type of dirs(join(base, host, ns)))
        for (const version of dirs(join(base, host, ns, type)))
          for (const platform of dirs(join(base, host, ns, type, version))) {
            const dir = join(base, host, ns, type, version, platform);
            const files = readdirSync(dir, { withFileTypes: true })
              .filter((e) => e.isFile() || e.isSymbolicLink())
              .slice(0, MAX_ENTRIES)
              .map((e) => {
                const st = statSync(join(dir, e.name));
                if (st.size > MAX_FILE_BYTES) throw new Error(`${join(dir, e.name)} is larger than 1 GiB`);
                return {
                  name: e.name,
                  data: readFileSync(join(dir, e.name)),
                  executable: (st.mode & 0o111) !== 0,
                };
              });
            out.push({ address: `${host}/${ns}/${type}`, version, platform, files });
          }
  return out;
}

/** A zip (stored, no compression) with Unix modes, as a provider package: Terraform keeps the exec bit. */
export function writeZip(path: string, files: CachedPackage['files']): void {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const f of files) {
    const name = Buffer.from(f.name, 'utf8');
    const crc = crc32(f.data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(f.data.length, 18);
    local.writeUInt32LE(f.data.length, 22);
    local.writeUInt16LE(name.length, 26);
    locals.push(local, name, f.data);
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE((3 << 8) | 20, 4); // made by Unix
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(0x0800, 8);
    c.writeUInt32LE(crc, 16);
    c.writeUInt32LE(f.data.length, 20);
    c.writeUInt32LE(f.data.length, 24);
    c.writeUInt16LE(name.length, 28);
    c.writeUInt32LE(((0o100000 | (f.executable ? 0o755 : 0o644)) << 16) >>> 0, 38);
    c.writeUInt32LE(offset, 42);
    central.push(c, name);
    offset += 30 + name.length + f.data.length;
  }
  const cd = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(offset, 16);
  mkdirSync(dirname(path), { recursive: true });
  // Like the real command: a staging file renamed over the target.
  const staging = join(dirname(path), `.${path.split('/').pop()}`);
  writeFileSync(staging, Buffer.concat([...locals, cd, end]));
  renameSync(staging, path);
}

/** The entries of a zip (stored or deflated), each inflated to at most `MAX_FILE_BYTES`. */
export function readZipEntries(path: string): { name: string; data: Buffer }[] {
  const buf = readFileSync(path);
  const eocd = buf.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0) throw new Error(`${path} is not a zip file (no end of central directory)`);
  const count = Math.min(buf.readUInt16LE(eocd + 10), MAX_ENTRIES);
  let p = buf.readUInt32LE(eocd + 16);
  const out: { name: string; data: Buffer }[] = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error(`${path}: bad central directory entry ${i}`);
    const method = buf.readUInt16LE(p + 10);
    const compressed = buf.readUInt32LE(p + 20);
    const size = buf.readUInt32LE(p + 24);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.toString('utf8', p + 46, p + 46 + nameLen);
    const dataAt = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(dataAt, dataAt + compressed);
    if (!name.endsWith('/')) {
      const data =
        method === 0
          ? Buffer.from(raw)
          : inflateRawSync(raw, { maxOutputLength: Math.max(1, Math.min(size, MAX_FILE_BYTES)) });
      out.push({ name, data });
    }
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

const ZIP = /^terraform-provider-([a-z0-9_-]+)_([0-9][0-9A-Za-z.+-]*)_([a-z0-9]+_[a-z0-9]+)\.zip$/;

/** Every provider zip in a packed mirror `<host>/<ns>/<type>/*.zip`, for the JSON indexes. */
export function readMirroredZips(base: string): MirroredZip[] {
  const out: MirroredZip[] = [];
  for (const host of dirs(base))
    for (const ns of dirs(join(base, host)))
      for (const type of dirs(join(base, host, ns))) {
        const dir = join(base, host, ns, type);
        for (const file of readdirSync(dir).slice(0, MAX_ENTRIES)) {
          const m = ZIP.exec(file);
          if (!m || m[1] !== type) continue;
          out.push({
            address: `${host}/${ns}/${type}`,
            version: m[2]!,
            platform: m[3]!,
            file,
            entries: readZipEntries(join(dir, file)),
          });
        }
      }
  return out;
}

export function writeIndexes(base: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(base, rel)), { recursive: true });
    writeFileSync(join(base, rel), text);
  }
}
