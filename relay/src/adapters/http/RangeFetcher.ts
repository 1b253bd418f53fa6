import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

export type ChunkResult =
  | { ok: true; offset: number; complete: boolean; bytes: number }
  | { ok: false; offset: number; bytes: number; reason: string; hashMismatch?: boolean };

/**
 * Fetches a blob from an upstream's `GET /v1/blobs/:sha256` in `Range` chunks into
 * `<dir>/.partial/<sha256>`. The partial file's length is the resume offset: every byte that arrived
 * before a drop is kept (fsync after each chunk or failure), so a restart or a reset costs only the
 * bytes in flight. When complete, the sha256 is checked and the file renamed to `<dir>/<sha256>`.
 */
export class RangeFetcher {
  private readonly stopping = new AbortController();

  /** Aborts an in-flight fetch (relay shutdown): what arrived stays in the partial file. */
  abort(): void {
    this.stopping.abort();
  }

  constructor(
    private readonly dir: string,
    private readonly timeoutMs = 120_000,
  ) {}

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
    if (this.stopping.signal.aborted) return { ok: false, offset, bytes, reason: 'relay stopping' };
    if (offset < size) {
      const end = Math.min(size, offset + chunkBytes) - 1;
      const fh = await open(path, 'a');
      try {
        const res = await fetch(`${upstream.url}/v1/blobs/${sha}`, {
          headers: {
            authorization: `Bearer ${upstream.token}`,
            range: `bytes=${offset}-${end}`,
            'if-range': `"${sha}"`,
          },
          signal: AbortSignal.any([AbortSignal.timeout(this.timeoutMs), this.stopping.signal]),
        });
        if (res.status !== 206 && !(res.status === 200 && offset === 0)) {
          await res.body?.cancel();
          return { ok: false, offset, bytes, reason: `upstream answered ${res.status} for the blob` };
        }
        // Never more than the announced size: an upstream that sends more (or a body fetch inflates
        // without end) is cut off there, and the hash check below decides.
        for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
          const room = size - offset;
          const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
          await fh.write(part);
          offset += part.length;
          bytes += chunk.length;
          if (offset >= size) break;
        }
      } catch (e) {
        return { ok: false, offset, bytes, reason: `blob fetch interrupted: ${(e as Error).message}` };
      } finally {
        await fh.sync().catch(() => {});
        await fh.close();
      }
    }
    if (offset < size) return { ok: true, offset, complete: false, bytes };
    const hash = createHash('sha256');
    for await (const c of createReadStream(path)) hash.update(c as Buffer);
    if (hash.digest('hex') !== sha) {
      await rm(path, { force: true });
      return {
        ok: false,
        offset: 0,
        bytes,
        reason: 'the fetched bytes do not match the sha256',
        hashMismatch: true,
      };
    }
    await rename(path, join(this.dir, sha));
    return { ok: true, offset, complete: true, bytes };
  }
}
