import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PublicationFiles } from '../../core/publications/ports.js';

/**
 * Where partial downloads are: `<dataDir>/bundles-partial`, its name from before decision 170, so an
 * upgraded agent resumes the downloads it had started.
 */
export const partialDirOf = (dataDir: string) => join(dataDir, 'bundles-partial');

/** Partial downloads under `partialDirOf(dataDir)/<sha256>`; placement by temp file, fsync, rename. */
export class FsPublicationFiles implements PublicationFiles {
  constructor(private readonly partialDir: string) {}

  pathOf(sha: string): string {
    return this.path(sha);
  }

  private path(sha: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha)) throw new Error(`not a sha256: ${sha}`);
    return join(this.partialDir, sha);
  }

  async offset(sha: string): Promise<number> {
    try {
      return (await stat(this.path(sha))).size;
    } catch {
      return 0;
    }
  }

  async openAppend(sha: string) {
    await mkdir(this.partialDir, { recursive: true, mode: 0o700 });
    const fh = await open(this.path(sha), 'a', 0o600);
    return {
      write: async (chunk: Uint8Array) => {
        await fh.write(chunk);
      },
      close: async () => {
        await fh.sync().catch(() => {});
        await fh.close();
      },
    };
  }

  async digest(sha: string): Promise<string> {
    const h = createHash('sha256');
    for await (const c of createReadStream(this.path(sha))) h.update(c as Buffer);
    return h.digest('hex');
  }

  async place(sha: string, dir: string, name: string): Promise<string> {
    await mkdir(dir, { recursive: true });
    const tmp = join(dir, `.incoming-${sha}`);
    const dest = join(dir, name);
    // Copy into the destination's file system first, so the final rename is atomic there.
    await copyFile(this.path(sha), tmp);
    const fh = await open(tmp, 'r+');
    await fh.sync();
    await fh.close();
    await rename(tmp, dest);
    const d = await open(dir, 'r');
    await d.sync().catch(() => {});
    await d.close();
    await rm(this.path(sha), { force: true });
    return dest;
  }

  async discard(sha: string): Promise<void> {
    await rm(this.path(sha), { force: true });
  }
}
