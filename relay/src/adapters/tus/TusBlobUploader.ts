import { createReadStream, existsSync } from 'node:fs';
import type { HopClient } from '@driftline/hop/client';
import { BLOB_LOST, type BlobUploader, type PendingBlob } from '../../ports/BlobUploader.js';

/**
 * Blob uploads to an upstream's `/v1/uploads/` through hop's client (tus). The upload URL is handed to
 * `onUrl` as soon as it exists (the relay keeps it in custody), and passed back after a restart so the
 * upload resumes from the upstream's offset. Retries are the forwarding loop's, with its backoff.
 */
export class TusBlobUploader implements BlobUploader {
  constructor(private readonly clients: ReadonlyMap<string, HopClient>) {}

  async upload(upstream: string, blob: PendingBlob, onUrl: (url: string) => void) {
    const client = this.clients.get(upstream);
    if (!client)
      return {
        ok: false as const,
        code: 'bad-request',
        message: `no upstream '${upstream}'`,
        retryable: false,
      };
    if (!existsSync(blob.path))
      return {
        ok: false as const,
        code: BLOB_LOST,
        message: `blob ${blob.sha256} is gone from ${blob.path}`,
        retryable: false,
      };
    const r = await client.upload({
      sha256: blob.sha256,
      size: blob.size,
      body: createReadStream(blob.path),
      metadata: blob.metadata,
      uploadUrl: blob.url,
      onUrl,
      chunkSize: 4 * 1024 * 1024,
    });
    return r.ok ? { ok: true as const } : { ...r, message: `${r.message} to ${upstream}` };
  }
}
