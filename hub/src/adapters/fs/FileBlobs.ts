import { createReadStream } from 'node:fs';
import { mkdir, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { BlobFiles } from '../../ports/BlobFiles.js';

/** Blobs as files named by their sha256 under one directory. */
export class FileBlobs implements BlobFiles {
  constructor(private readonly dir: string) {}

  private path(sha256: string): string {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    return join(this.dir, sha256);
  }

  async adopt(sha256: string, fromPath: string): Promise<string> {
    await mkdir(this.dir, { recursive: true });
    const to = this.path(sha256);
    await rename(fromPath, to);
    return to;
  }

  async stat(sha256: string) {
    try {
      const s = await stat(this.path(sha256));
      return { size: s.size, etag: `"${sha256}"`, mtimeMs: s.mtimeMs };
    } catch {
      return null;
    }
  }

  read(sha256: string, start: number, end: number): NodeJS.ReadableStream {
    return createReadStream(this.path(sha256), { start, end });
  }

  async readAll(sha256: string): Promise<Uint8Array | null> {
    try {
      return new Uint8Array(await readFile(this.path(sha256)));
    } catch {
      return null;
    }
  }
}
