import { readFile, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { BlobFiles } from '../../ports/BlobFiles.js';

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Blobs in memory, for tests and as a model of the port: the same answers as `FileBlobs` (both pass
 * `runBlobFilesContract`). `adopt` reads the finished upload and removes it (the file moves in) and
 * answers `memory:<sha256>` as the stored path; a name that is not a sha256 is refused as `FileBlobs`
 * refuses it. Nothing survives the process.
 */
export class MemoryBlobFiles implements BlobFiles {
  private readonly held = new Map<string, { bytes: Uint8Array; mtimeMs: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async adopt(sha256: string, fromPath: string): Promise<string> {
    if (!SHA256.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    const bytes = new Uint8Array(await readFile(fromPath));
    await rm(fromPath);
    this.held.set(sha256, { bytes, mtimeMs: this.now() });
    return `memory:${sha256}`;
  }

  async stat(sha256: string) {
    const b = this.held.get(sha256);
    return b ? { size: b.bytes.length, etag: `"${sha256}"`, mtimeMs: b.mtimeMs } : null;
  }

  read(sha256: string, start: number, end: number): NodeJS.ReadableStream {
    if (!SHA256.test(sha256)) throw new Error(`not a sha256: ${sha256}`);
    const b = this.held.get(sha256);
    if (!b) {
      const missing = new Readable({ read() {} });
      process.nextTick(() => missing.destroy(new Error(`no blob ${sha256}`)));
      return missing;
    }
    return Readable.from([Buffer.from(b.bytes.subarray(start, end + 1))]);
  }

  async readAll(sha256: string): Promise<Uint8Array | null> {
    const b = this.held.get(sha256);
    return b ? b.bytes.slice() : null;
  }
}
