import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { WireError } from '@driftline/protocol';

/**
 * The hub's disk cap (`storage.maxBytes`): the bytes under its data directory (but the uploads in
 * progress), plus what those uploads have reserved (their whole `Upload-Length`), must stay under the cap. The directory is walked
 * at most once per `cacheMs`, iteratively, so a batch does not pay for a walk of every blob.
 */
export class DiskCap {
  private cached: { at: number; bytes: number } | null = null;

  constructor(
    private readonly dir: string,
    private readonly maxBytes: number | undefined,
    /** Left out of the walk: tus's in-progress uploads, counted by their reservation instead. */
    private readonly uploadsDir: string,
    private readonly now: () => number = Date.now,
    private readonly cacheMs = 5_000,
  ) {}

  /** Bytes under the data directory (files only; symlinks are not followed). */
  used(): number {
    const t = this.now();
    if (this.cached && t - this.cached.at < this.cacheMs) return this.cached.bytes;
    let bytes = 0;
    const stack = [this.dir];
    while (stack.length > 0) {
      const d = stack.pop() as string;
      let entries: import('node:fs').Dirent[];
      try {
        entries = readdirSync(d, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const e of entries) {
        const p = join(d, e.name);
        if (e.isDirectory()) {
          if (p !== this.uploadsDir) stack.push(p);
        } else if (e.isFile()) {
          try {
            bytes += lstatSync(p).size;
          } catch {
            // removed while walking
          }
        }
      }
    }
    this.cached = { at: t, bytes };
    return bytes;
  }

  /** Throws `insufficient-storage` (507) when `adding` more bytes would pass the cap. */
  check(adding: number, reserved = 0): void {
    if (this.maxBytes === undefined) return;
    const used = this.used();
    if (used + reserved + adding > this.maxBytes) {
      throw new WireError(
        'insufficient-storage',
        `the hub's storage.maxBytes (${this.maxBytes}) would be passed: ${used} bytes used, ${reserved} reserved by uploads in progress, ${adding} asked for`,
      );
    }
  }
}
