import type { Readable } from 'node:stream';
import { DetailedError, Upload, type UrlStorage } from 'tus-js-client';
import type { HopTransport } from './hopTransport.js';
import { answered, failure, type HopResult, thrown } from './result.js';
import { TransportHttpStack } from './transportHttpStack.js';

/** One blob to upload, and how to resume it. */
export interface TusUpload {
  sha256: string;
  size: number;
  /** The bytes, in memory or as a stream (a relay reads the file it holds). */
  body: Buffer | Readable;
  /** Upload-Metadata besides `sha256` (which the server checks the finished bytes against). */
  metadata?: Record<string, string>;
  /** Resume the upload at this URL (kept by the caller from `onUrl`, maybe before a restart). */
  uploadUrl?: string | null;
  /** Sees the upload's URL as soon as the server made it, so the caller can keep it. */
  onUrl?(url: string): void;
  /** Or: keep and find URLs in this storage, keyed by upstream and sha256 (tus-js-client's fingerprints). */
  urlStorage?: UrlStorage;
  /**
   * Most bytes per PATCH (default 64 MiB). Not the resume granularity: the server keeps every byte that
   * reached it before a cut. Each PATCH ends with a round trip in which nothing is sent, so small
   * chunks waste a long link; the cap only keeps one request below body limits of proxies.
   */
  chunkSize?: number;
  onProgress?(sent: number, total: number): void;
  /** Aborting keeps the upload on the server (and its URL in storage): the next attempt resumes. */
  signal?: AbortSignal;
  /**
   * Cut the upload as `stalled` (retryable; the server keeps what reached it) when this long passes with no
   * byte sent and no answer: an upstream that takes the request and never answers (a relay's
   * `forward.stallS`: docs/decisions/535-relay-cuts-a-stalled-upstream.md). Unset: no such cut.
   */
  stallMs?: number;
}

/**
 * tus-js-client against `<url>/v1/uploads/`. It never retries by itself (`retryDelays: null`): a link
 * may be down for hours, and retrying is the caller's loop's job, with its backoff (FIELD-NOTES, tus).
 */
export function tusUpload(
  url: string,
  token: string,
  blob: TusUpload,
  stopping: AbortSignal,
  transport?: HopTransport,
): Promise<HopResult<void>> {
  const what = `upload of ${blob.sha256.slice(0, 12)}…`;
  const signals = [stopping, ...(blob.signal ? [blob.signal] : [])];
  return new Promise<HopResult<void>>((settle) => {
    let watchdog: ReturnType<typeof setTimeout> | undefined;
    const resolve = (r: HopResult<void>) => {
      clearTimeout(watchdog);
      for (const s of signals) s.removeEventListener('abort', onAbort);
      settle(r);
    };
    // restarted by every byte sent; runs out only when nothing moved for stallMs
    const watch = () => {
      if (blob.stallMs === undefined) return;
      clearTimeout(watchdog);
      watchdog = setTimeout(() => {
        void upload.abort(false);
        const s = Math.round((blob.stallMs as number) / 1000);
        resolve(failure('stalled', `${what}: stalled: nothing sent or answered for ${s} s`, true));
      }, blob.stallMs);
    };
    const upload = new Upload(blob.body, {
      endpoint: `${url}/v1/uploads/`,
      ...(blob.uploadUrl ? { uploadUrl: blob.uploadUrl } : {}),
      headers: { authorization: `Bearer ${token}` },
      metadata: { ...blob.metadata, sha256: blob.sha256 },
      uploadSize: blob.size,
      chunkSize: blob.chunkSize ?? 64 * 1024 * 1024,
      retryDelays: null,
      ...(transport ? { httpStack: new TransportHttpStack(transport) } : {}),
      ...(blob.urlStorage
        ? {
            urlStorage: blob.urlStorage,
            fingerprint: async () => `${url}|${blob.sha256}`,
            storeFingerprintForResuming: true,
            removeFingerprintOnSuccess: true,
          }
        : { storeFingerprintForResuming: false }),
      onUploadUrlAvailable: () => {
        if (upload.url) blob.onUrl?.(upload.url);
      },
      onProgress: (sent, total) => {
        watch();
        blob.onProgress?.(sent, total);
      },
      onSuccess: () => resolve({ ok: true, value: undefined }),
      onError: (e) => {
        const res = e instanceof DetailedError ? e.originalResponse : null;
        if (!res) return resolve(failure('unreachable', `${what}: ${e.message.split('\n')[0]}`, true));
        const f = answered(res.getStatus(), { ok: true, text: res.getBody() ?? '' });
        resolve({ ...f, message: `${what}: ${f.message}` });
      },
    });
    function onAbort() {
      // Keep the upload on the server and its URL: the next attempt resumes from its offset.
      void upload.abort(false);
      resolve(failure('aborted', `${what}: aborted`, true));
    }
    for (const s of signals) s.addEventListener('abort', onAbort, { once: true });
    if (signals.some((s) => s.aborted)) return onAbort();
    const start = blob.urlStorage && !blob.uploadUrl ? upload.findPreviousUploads() : Promise.resolve([]);
    start
      .then((previous) => {
        if (previous[0]) upload.resumeFromPreviousUpload(previous[0]);
        watch();
        upload.start();
      })
      .catch((e: unknown) => resolve(thrown(e, what)));
  });
}
