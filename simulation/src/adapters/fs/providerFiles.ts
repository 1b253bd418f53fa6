import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import { isProviderVersion, packedZipPath, parsePackedZipPath, unpackedDirPath } from '@driftline/protocol';
import type { Installed, MirrorPackage, MirrorPort } from '../../core/terraform/init.js';

/** The fake's filesystem mirrors, relative paths resolved from `base` (the working directory). */
export function fsMirror(base: string): MirrorPort {
  return {
    versions(dir, address) {
      const typeDir = resolve(base, dir, address);
      let names: string[];
      try {
        names = readdirSync(typeDir).slice(0, 10_000);
      } catch {
        return [];
      }
      const out = new Set<string>();
      for (const n of names) {
        const packed = parsePackedZipPath(`${address}/${n}`);
        if (packed) out.add(packed.version);
        else if (isProviderVersion(n) && statSync(join(typeDir, n), { throwIfNoEntry: false })?.isDirectory())
          out.add(n);
      }
      return [...out];
    },
    find(dir, address, version, platform): MirrorPackage | null {
      const unpacked = resolve(base, dir, unpackedDirPath(address, version, platform));
      if (statSync(unpacked, { throwIfNoEntry: false })?.isDirectory()) return { layout: 'unpacked' };
      const zip = resolve(base, dir, packedZipPath(address, version, platform));
      if (!statSync(zip, { throwIfNoEntry: false })?.isFile()) return null;
      return { layout: 'packed', sha256: sha256File(zip) };
    },
  };
}

/** SHA-256 of a file, read in 1 MiB chunks (a provider zip can be hundreds of MB). */
function sha256File(path: string): string {
  const h = createHash('sha256');
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(1024 * 1024);
    for (;;) {
      const n = readSync(fd, buf, 0, buf.length, null);
      if (n === 0) break;
      h.update(buf.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return h.digest('hex');
}

/** A text file's content, or null when it does not exist; over `cap` bytes is an error. */
export function readTextFile(path: string, cap: number): string | null {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return null;
  if (st.size > cap) throw new Error(`${path} is over ${cap} bytes`);
  return readFileSync(path, 'utf8');
}

const MARKER = 'fake-terraform-providers.json';

/** Provider builds earlier `init`s installed, from the marker under the data dir (`TF_DATA_DIR`). */
export function readInstalled(dataDir: string): Installed[] {
  try {
    const j = JSON.parse(readFileSync(join(dataDir, MARKER), 'utf8')) as { installed?: Installed[] };
    return Array.isArray(j.installed) ? j.installed.slice(0, 1000) : [];
  } catch {
    return [];
  }
}

/** Adds builds to the marker (the way `.terraform/providers` keeps what was installed), atomically. */
export function recordInstalled(dataDir: string, more: Installed[]): void {
  const all = readInstalled(dataDir);
  for (const m of more)
    if (!all.some((x) => x.address === m.address && x.version === m.version && x.platform === m.platform))
      all.push(m);
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, MARKER);
  writeFileSync(`${file}.${process.pid}.tmp`, `${JSON.stringify({ installed: all }, null, 2)}\n`);
  renameSync(`${file}.${process.pid}.tmp`, file);
}

/**
 * A number in 1..9999 folded from the `*.tf` files of `dir` (names and contents, at most 200 files
 * and 4 MiB), or 0 when there are none: a commit that changes the configuration changes the plan.
 */
export function configurationDigest(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir)
      .filter((n) => n.endsWith('.tf') || n.endsWith('.tf.json'))
      .sort()
      .slice(0, 200);
  } catch {
    return 0;
  }
  if (!names.length) return 0;
  const h = createHash('sha256');
  let budget = 4 * 1024 * 1024;
  for (const n of names) {
    const p = join(dir, n);
    if (!existsSync(p) || !statSync(p).isFile()) continue;
    const text = readFileSync(p);
    budget -= text.length;
    if (budget < 0) break;
    h.update(`${n}\0`).update(text).update('\0');
  }
  return (h.digest().readUInt32BE(0) % 9999) + 1;
}
