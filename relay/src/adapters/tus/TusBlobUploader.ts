import { createReadStream, openSync } from 'node:fs';
import type { HopClient } from '@driftline/hop/client';
import { BLOB_LOST, type BlobUploader, type PendingBlob } from '../../ports/BlobUploader.js';

/**
 * Blob uploads to an upstream's `/v1/uploads/` through hop's client (tus). The upload URL is handed to
 * `onUrl` as soon as it exists (the relay keeps it in custody), and passed back after a restart so the
 * upload resumes from the upstream's offset. Retries are the forwarding loop's, with its backoff.
 */
export class TusBlobUploader implements BlobUploader {
  /** `stallMs`: an upload with nothing sent or answered that long is cut as stalled (`forward.stallS`). */
  constructor(
    private readonly clients: ReadonlyMap<string, HopClient>,
    private readonly stallMs?: number,
  ) {}

  async upload(upstream: string, blob: PendingBlob, onUrl: (url: string) => void) {
    const client = this.clients.get(upstream);
    if (!client)
      return {
        ok: false as const,
        code: 'bad-request',
        message: `no upstream '${upstream}'`,
        retryable: false,
      };
    const lost = {
      ok: false as const,
      code: BLOB_LOST,
      message: `blob ${blob.sha256} is gone from ${blob.path}`,
      retryable: false,
    };
    // Opened here, not by the stream: a file deleted between a check and the stream's own (later) open
    // emitted 'error' on a stream nobody read yet (the upload failed before its body), and the unhandled
    // error ended the relay (hostile/blobDirDeleted in a whole run). An open file stays readable.
    let fd: number;
    try {
      fd = openSync(blob.path, 'r');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return lost;
      throw e;
    }
    const body = createReadStream('', { fd });
    let readError: Error | null = null;
    body.on('error', (e) => {
      readError = e;
    });
    try {
      const r = await client.upload({
        sha256: blob.sha256,
        size: blob.size,
        body,
        metadata: blob.metadata,
        uploadUrl: blob.url,
        onUrl,
        chunkSize: 4 * 1024 * 1024,
        ...(this.stallMs === undefined ? {} : { stallMs: this.stallMs }),
      });
      if (r.ok) return { ok: true as const };
      const why = readError ? ` (reading it: ${(readError as Error).message})` : '';
      return { ...r, message: `${r.message} to ${upstream}${why}` };
    } finally {
      body.destroy();
    }
  }
}
