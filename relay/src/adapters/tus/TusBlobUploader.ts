import { createReadStream } from 'node:fs';
import { Upload } from 'tus-js-client';
import type { BlobUploader, PendingBlob } from '../../ports/BlobUploader.js';

/**
 * tus-js-client against an upstream's `/v1/uploads/`. The upload URL is handed to `onUrl` as soon as
 * it exists (the relay persists it in SQLite), and passed back as `uploadUrl` after a restart so the
 * upload resumes from the upstream's offset. Retries are the forwarding loop's (with its backoff),
 * not the client's: `retryDelays` is empty (FIELD-NOTES, tus).
 */
export class TusBlobUploader implements BlobUploader {
  constructor(private readonly upstreams: Map<string, { url: string; token: string }>) {}

  upload(upstream: string, blob: PendingBlob, onUrl: (url: string) => void) {
    const up = this.upstreams.get(upstream);
    if (!up) return Promise.resolve({ ok: false as const, reason: `no upstream '${upstream}'` });
    return new Promise<{ ok: true } | { ok: false; reason: string }>((resolve) => {
      const u = new Upload(createReadStream(blob.path), {
        endpoint: `${up.url}/v1/uploads/`,
        ...(blob.url ? { uploadUrl: blob.url } : {}),
        uploadSize: blob.size,
        chunkSize: 4 * 1024 * 1024,
        headers: { authorization: `Bearer ${up.token}` },
        metadata: { ...blob.metadata, sha256: blob.sha256 },
        retryDelays: [],
        storeFingerprintForResuming: false,
        onUploadUrlAvailable: () => {
          if (u.url) onUrl(u.url);
        },
        onSuccess: () => resolve({ ok: true }),
        onError: (e) =>
          resolve({ ok: false, reason: `blob ${blob.sha256} upload to ${upstream}: ${e.message}` }),
      });
      u.start();
    });
  }
}
