import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { ERRORS, type ErrorCode, renderError, Sha256Schema, WireError } from '@driftline/protocol';
import { FileStore } from '@tus/file-store';
import { Server as TusServer } from '@tus/server';
import type { Logger } from 'pino';
import { authenticate } from '../http/auth.js';
import type { HopMetrics } from '../metrics.js';
import type { HopBackend, Peer } from '../ports/HopBackend.js';

export const UPLOADS_PATH = '/v1/uploads';

/** Options of the tus endpoint at `/v1/uploads/`. */
export interface UploadOptions {
  /** Where partial uploads live (one file + one `.json` per upload). */
  directory: string;
  /** Largest upload accepted, in bytes (413 at creation). Default 2 GiB. */
  maxSize?: number;
  /** An upload untouched this long is expired (tus expiration extension). Default 7 days. */
  expirationMs?: number;
}

type TusError = { status_code: number; body: string };
const tusError = (code: ErrorCode, detail?: string): TusError => {
  const r = renderError(code, detail);
  return { status_code: r.status, body: JSON.stringify(r.body) };
};

/** true for `/v1/uploads`, `/v1/uploads/…` and `/v1/uploads?…`: everything tus must see unparsed. */
export function isUploadPath(url: string | undefined): boolean {
  if (!url) return false;
  return url === UPLOADS_PATH || url.startsWith(`${UPLOADS_PATH}/`) || url.startsWith(`${UPLOADS_PATH}?`);
}

/**
 * tus (creation, termination, expiration) mounted beside Koa, never behind a body parser
 * (FIELD-NOTES, tus). Every request but OPTIONS needs a bearer token. On the last PATCH the bytes are
 * hashed and compared with the `sha256` announced in `Upload-Metadata` (460 and the upload deleted on a
 * mismatch); then `backend.uploadFinished` records the blob before the PATCH is answered.
 */
export function createTusMount(
  backend: HopBackend,
  metrics: HopMetrics,
  logger: Logger,
  opts: UploadOptions,
) {
  const peers = new WeakMap<IncomingMessage, Peer>();
  const store = new FileStore({
    directory: opts.directory,
    expirationPeriodInMilliseconds: opts.expirationMs ?? 7 * 24 * 3600 * 1000,
  });
  const nodeReq = (req: unknown): IncomingMessage | undefined =>
    (req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
  const tus = new TusServer({
    path: UPLOADS_PATH,
    datastore: store,
    relativeLocation: true,
    maxSize: opts.maxSize ?? 2 * 1024 ** 3,
    onUploadCreate: async (_req, upload) => {
      const sha = upload.metadata?.sha256;
      if (!sha || !Sha256Schema.safeParse(sha).success) {
        throw tusError(
          'bad-request',
          'Upload-Metadata must carry sha256 (64 lowercase hex) of the whole file',
        );
      }
      if (upload.sizeIsDeferred)
        throw tusError('bad-request', 'Upload-Length is required (no deferred length)');
      return {};
    },
    onUploadFinish: async (req, upload) => {
      const path = join(opts.directory, upload.id);
      const announced = upload.metadata?.sha256 ?? '';
      const actual = await sha256File(path);
      if (actual !== announced) {
        await store.remove(upload.id).catch(() => undefined);
        metrics.uploadsInProgress.dec();
        throw tusError('checksum-mismatch', `upload ${upload.id} hashes to ${actual}, not ${announced}`);
      }
      const { sha256: _s, ...metadata } = upload.metadata ?? {};
      const clean = Object.fromEntries(Object.entries(metadata).filter(([, v]) => v != null)) as Record<
        string,
        string
      >;
      const r = nodeReq(req);
      try {
        await backend.uploadFinished((r && peers.get(r)) ?? null, {
          path,
          size: upload.size ?? upload.offset,
          sha256: actual,
          metadata: clean,
        });
      } catch (e) {
        if (e instanceof WireError) throw tusError(e.code, e.detail);
        logger.error({ err: e, upload: upload.id }, 'recording a finished upload failed');
        throw tusError('internal');
      }
      metrics.uploadsInProgress.dec();
      return {};
    },
  });
  // tus's own errors (404, 409 offset, 412 version, 400 headers, 413 size…) are rendered like every
  // other hop error; `write` is the one place every tus response passes through.
  const write = tus.write.bind(tus);
  tus.write = (context, headers, status, body) => {
    if (status < 400 || body?.startsWith('{')) return write(context, headers, status, body);
    const code =
      (Object.keys(ERRORS) as ErrorCode[]).find((c) => ERRORS[c].status === status) ??
      (status < 500 ? 'bad-request' : 'internal');
    headers.set('content-type', 'application/json');
    const r = renderError(code, code === 'internal' ? undefined : body?.trim() || undefined);
    return write(context, headers, status, JSON.stringify(r.body));
  };
  tus.on('POST_CREATE', () => metrics.uploadsInProgress.inc());
  tus.on('POST_TERMINATE', () => metrics.uploadsInProgress.dec());

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'OPTIONS') {
      try {
        const peer = await authenticate(backend, req.headers.authorization);
        peers.set(req, peer);
        const len = Number(req.headers['content-length'] ?? 0);
        if (req.method === 'PATCH' && len > 0) metrics.bytesIn.inc({ peer: peer.name }, len);
      } catch (e) {
        const r = renderError(e instanceof WireError ? e.code : 'internal');
        res.writeHead(r.status, { 'content-type': 'application/json', 'tus-resumable': '1.0.0' });
        res.end(JSON.stringify(r.body));
        req.resume();
        return;
      }
    }
    await tus.handle(req, res);
  }
  return { tus, store, handle, cleanUpExpired: () => tus.cleanUpExpiredUploads() };
}

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
}
