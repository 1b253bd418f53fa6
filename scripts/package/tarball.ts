/**
 * A staged folder turned into what ships: `SHA256SUMS` over every file, then a tar.gz that is the same
 * bytes for the same input (names sorted, one mtime, owner and group 0, fixed modes, gzip without a
 * timestamp). GNU tar makes the archive; Node's zlib compresses it.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  createReadStream,
  createWriteStream,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';

/** Every regular file under `dir`, as sorted paths relative to it (`/` separated). */
export function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * Sets modes that do not depend on the builder's umask: folders and `executables` 0755, the rest 0644.
 */
export function normaliseModes(dir: string, executables: string[]): void {
  const walk = (d: string) => {
    chmodSync(d, 0o755);
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else chmodSync(p, executables.includes(relative(dir, p)) ? 0o755 : 0o644);
    }
  };
  walk(dir);
}

/** Writes `SHA256SUMS` in `dir` (the `sha256sum` format: hash, two spaces, path) over every other file. */
export function writeSums(dir: string): void {
  const lines = listFiles(dir)
    .filter((f) => f !== 'SHA256SUMS')
    .map(
      (f) =>
        `${createHash('sha256')
          .update(readFileSync(join(dir, f)))
          .digest('hex')}  ${f}`,
    );
  writeFileSync(join(dir, 'SHA256SUMS'), `${lines.join('\n')}\n`, { mode: 0o644 });
}

/**
 * Packs the contents of `dir` (no leading folder: `tar xzf` unpacks into the current one) into `out`.
 * `mtime` is seconds since the epoch for every entry.
 */
export async function deterministicTarGz(dir: string, out: string, mtime: number): Promise<void> {
  const tar = `${out}.tar`;
  const top = readdirSync(dir).sort();
  const r = spawnSync(
    'tar',
    [
      '--create',
      `--file=${tar}`,
      `--directory=${dir}`,
      '--sort=name',
      `--mtime=@${mtime}`,
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      '--format=gnu',
      ...top,
    ],
    { encoding: 'utf8' },
  );
  if (r.error || r.status !== 0)
    throw new Error(
      `tar failed (${r.error?.message ?? r.stderr.trim()}); the package needs GNU tar 1.28 or newer (--sort=name)`,
    );
  try {
    await pipeline(createReadStream(tar), createGzip({ level: 9 }), createWriteStream(out));
  } finally {
    rmSync(tar, { force: true });
  }
}

/** Bytes of every regular file under `dir`. */
export function treeBytes(dir: string): number {
  return listFiles(dir).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
}
