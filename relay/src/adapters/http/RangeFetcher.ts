import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HopClient, type HopTransport } from '@driftline/hop/client';
import type { BlobFetcher, ChunkResult } from '../../ports/PublicationCache.js';

/**
 * Fetches a blob from an upstream's `GET /v1/blobs/:sha256` in `Range` chunks (hop's client) into
 * `<dir>/.partial/<sha256>`. The partial file's length is the resume offset: every byte that arrived
 * before a drop is kept (fsync after each chunk or failure), so a restart or a reset costs only the
 * bytes in flight. When complete, the sha256 is checked and the file renamed to `<dir>/<sha256>`.
 */
export class RangeFetcher implements BlobFetcher {
  private readonly stopping = new AbortController();
  private readonly clients = new Map<string, HopClient>();

  constructor(
    private readonly dir: string,
    private readonly timeoutMs = 120_000,
    /** What carries the fetches (default: sockets; a deterministic world's links in simulation). */
    private readonly transport?: HopTransport,
  ) {}

  /** Aborts an in-flight fetch (relay shutdown): what arrived stays in the partial file. */
  abort(): void {
    this.stopping.abort();
  }

  partialPath(sha: string): string {
    return join(this.dir, '.partial', sha);
  }

  async offset(sha: string): Promise<number> {
    try {
      return (await stat(this.partialPath(sha))).size;
    } catch {
      return 0;
    }
  }

  async remove(sha: string): Promise<void> {
    await rm(this.partialPath(sha), { force: true });
    await rm(join(this.dir, sha), { force: true });
  }

  private client(up: { url: string; token: string }): HopClient {
    const key = `${up.url}\n${up.token}`;
    let c = this.clients.get(key);
    if (!c) {
      c = new HopClient({
        url: up.url,
        token: up.token,
        timeoutMs: this.timeoutMs,
        ...(this.transport ? { transport: this.transport } : {}),
      });
      this.clients.set(key, c);
    }
    return c;
  }

  async fetchChunk(
    upstream: { url: string; token: string },
    sha: string,
    size: number,
    chunkBytes: number,
  ): Promise<ChunkResult> {
    await mkdir(join(this.dir, '.partial'), { recursive: true });
    const path = this.partialPath(sha);
    let offset = await this.offset(sha);
    let bytes = 0;
    if (this.stopping.signal.aborted)
      return { ok: false, code: 'aborted', message: 'relay stopping', retryable: true, offset, bytes };
    if (offset < size) {
      const fh = await open(path, 'a');
      try {
        const end = Math.min(size, offset + chunkBytes) - 1;
        const r = await this.client(upstream).fetchRange(sha, offset, end, fh, this.stopping.signal);
        offset = r.offset;
        bytes = r.bytes;
        if (!r.ok) return r;
      } finally {
        await fh.sync().catch(() => {});
        await fh.close();
      }
    }
    if (offset < size) return { ok: true, offset, complete: false, bytes };
    return this.keep(sha, offset, bytes, 'fetched');
  }

  /** Bytes a manifest carried (decision 360): written as a fetch writes them, kept only if they hash. */
  async adopt(sha: string, data: Uint8Array): Promise<ChunkResult> {
    await mkdir(join(this.dir, '.partial'), { recursive: true });
    const fh = await open(this.partialPath(sha), 'w');
    try {
      await fh.writeFile(data);
    } finally {
      await fh.sync().catch(() => {});
      await fh.close();
    }
    return this.keep(sha, data.length, data.length, 'inline');
  }

  /** The complete partial file, checked against its sha256, renamed into place (or removed). */
  private async keep(sha: string, offset: number, bytes: number, what: string): Promise<ChunkResult> {
    const path = this.partialPath(sha);
    const hash = createHash('sha256');
    for await (const c of createReadStream(path)) hash.update(c as Buffer);
    if (hash.digest('hex') !== sha) {
      await rm(path, { force: true });
      const message = `the ${what} bytes do not match the sha256`;
      return { ok: false, code: 'hash-mismatch', message, retryable: false, offset: 0, bytes };
    }
    await rename(path, join(this.dir, sha));
    return { ok: true, offset, complete: true, bytes };
  }
}
