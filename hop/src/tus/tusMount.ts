import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import { ERRORS, type ErrorCode, renderError, Sha256Schema, WireError } from '@driftline/protocol';
import { FileConfigstore, FileStore } from '@tus/file-store';
import { Server as TusServer } from '@tus/server';
import type { Logger } from 'pino';
import { authenticate, bearerToken } from '../http/auth.js';
import type { OpenCredentials } from '../http/openCredentials.js';
import { errorHeaders, sendError } from '../http/refuse.js';
import type { HopMetrics } from '../metrics.js';
import type { HopBackend, Peer } from '../ports/HopBackend.js';
import { OWNER_KEY, UploadLedger } from './UploadLedger.js';

export const UPLOADS_PATH = '/v1/uploads';

/** Bytes reserved by in-progress uploads when a new one asks to be created. */
export interface Reserved {
  /** By every in-progress upload (each counts its whole `Upload-Length`). */
  total: number;
  /** By the asking peer's in-progress uploads. */
  byPeer: number;
}

/** Options of the tus endpoint at `/v1/uploads/`. */
export interface UploadOptions {
  /** Where partial uploads live (one file + one `.json` per upload). */
  directory: string;
  /** Largest upload accepted, in bytes (413 at creation). Default 2 GiB. */
  maxSize?: number;
  /** An upload untouched this long is expired (tus expiration extension). Default 7 days. */
  expirationMs?: number;
  /**
   * Decides whether `peer` may create an upload of `size` bytes, given what in-progress uploads already
   * reserved: throw `WireError('insufficient-storage')` (507) or a `RetryLaterError` (429) to refuse.
   * This is where a node applies its disk cap and per-peer quotas. Default: every creation is admitted.
   */
  admit?: (peer: Peer, size: number, reserved: Reserved) => void | Promise<void>;
  /**
   * Told of each upload refused for its content (its bytes do not hash to the `sha256` it announced:
   * altered on the way, or by the peer), after it was logged; a node counts it here. Default: nothing.
   */
  onRefused?: (peer: Peer | undefined, reason: 'checksum-mismatch') => void;
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

/** The upload id of `/v1/uploads/<id>`, '' for the collection, null for an id tus never issues. */
function uploadIdOf(url: string): string | null {
  const rest = url.slice(UPLOADS_PATH.length).split('?')[0] ?? '';
  if (rest === '' || rest === '/') return '';
  const m = /^\/([A-Za-z0-9_-]{1,128})$/.exec(rest);
  return m ? (m[1] as string) : null;
}

/**
 * tus (creation, termination, expiration) mounted beside Koa, never behind a body parser
 * (FIELD-NOTES, tus). Every request but OPTIONS needs a bearer token, and an upload belongs to the peer
 * that created it: any other peer gets 404 for it, as if it did not exist. Creations pass `admit` (disk
 * cap, quotas) with what in-progress uploads reserved. On the last PATCH the bytes are hashed and
 * compared with the `sha256` announced in `Upload-Metadata` (460 and the upload deleted on a mismatch);
 * then `backend.uploadFinished` records the blob before the PATCH is answered.
 */
export function createTusMount(
  backend: HopBackend,
  metrics: HopMetrics,
  logger: Logger,
  opts: UploadOptions,
  /** Tokens of uploads in progress, checked again while they are open (decision 411). */
  credentials?: OpenCredentials,
) {
  const peers = new WeakMap<IncomingMessage, Peer>();
  const records = new FileConfigstore(opts.directory);
  const ledger = new UploadLedger(opts.directory, records);
  const loaded = ledger.load().catch((err) => logger.warn({ err }, 'reading in-progress uploads failed'));
  const store = new FileStore({
    directory: opts.directory,
    configstore: records,
    expirationPeriodInMilliseconds: opts.expirationMs ?? 7 * 24 * 3600 * 1000,
  });
  const nodeReq = (req: unknown): IncomingMessage | undefined =>
    (req as { runtime?: { node?: { req?: IncomingMessage } } }).runtime?.node?.req;
  const peerOf = (req: unknown): Peer | undefined => {
    const r = nodeReq(req);
    return r ? peers.get(r) : undefined;
  };
  const tus = new TusServer({
    path: UPLOADS_PATH,
    datastore: store,
    relativeLocation: true,
    maxSize: opts.maxSize ?? 2 * 1024 ** 3,
    onUploadCreate: async (req, upload) => {
      const sha = upload.metadata?.sha256;
      if (!sha || !Sha256Schema.safeParse(sha).success) {
        throw tusError(
          'bad-request',
          'Upload-Metadata must carry sha256 (64 lowercase hex) of the whole file',
        );
      }
      if (upload.sizeIsDeferred || upload.size === undefined)
        throw tusError('bad-request', 'Upload-Length is required (no deferred length)');
      const peer = peerOf(req);
      if (!peer) throw tusError('unauthorized');
      const reserved = { total: ledger.total(), byPeer: ledger.byPeer(peer.name) };
      // Reserved before `admit` resolves, so a concurrent creation counts this one.
      ledger.reserve(upload.id, peer.name, upload.size);
      try {
        await opts.admit?.(peer, upload.size, reserved);
      } catch (e) {
        ledger.release(upload.id);
        if (e instanceof WireError) throw tusError(e.code, e.detail);
        throw e;
      }
      return { metadata: { ...upload.metadata, [OWNER_KEY]: peer.name } };
    },
    onUploadFinish: async (req, upload) => {
      const path = join(opts.directory, upload.id);
      const announced = upload.metadata?.sha256 ?? '';
      const actual = await sha256File(path);
      ledger.release(upload.id);
      if (actual !== announced) {
        await store.remove(upload.id).catch(() => undefined);
        metrics.uploadsInProgress.dec();
        const peer = peerOf(req);
        logger.warn(
          { peer: peer?.name, upload: upload.id, announced, actual, reason: 'checksum-mismatch' },
          'upload refused: its bytes do not hash to the sha256 it announced (altered on the way?); the uploader must send it again',
        );
        opts.onRefused?.(peer, 'checksum-mismatch');
        throw tusError('checksum-mismatch', `upload ${upload.id} hashes to ${actual}, not ${announced}`);
      }
      const { sha256: _s, [OWNER_KEY]: _o, ...metadata } = upload.metadata ?? {};
      const clean = Object.fromEntries(Object.entries(metadata).filter(([, v]) => v != null)) as Record<
        string,
        string
      >;
      try {
        await backend.uploadFinished(peerOf(req) ?? null, {
          path,
          size: upload.size ?? upload.offset,
          sha256: actual,
          metadata: clean,
        });
      } catch (e) {
        // Not recorded: the upload goes, so a resuming client finds no complete upload to trust and
        // starts over (a kept, complete one would look delivered).
        await store.remove(upload.id).catch(() => undefined);
        metrics.uploadsInProgress.dec();
        if (e instanceof WireError) throw tusError(e.code, e.detail);
        logger.error({ err: e, upload: upload.id }, 'recording a finished upload failed');
        throw tusError('internal');
      }
      metrics.uploadsInProgress.dec();
      return {};
    },
  });
  // tus's own errors (404, 409 offset, 412 version, 400 headers, 413 size…) are rendered like every
  // other hop error; `write` is the one place every tus response passes through. An error closes the
  // connection: the PATCH body it refused is not read.
  const write = tus.write.bind(tus);
  tus.write = (context, headers, status, body) => {
    if (status < 400) return write(context, headers, status, body);
    for (const [k, v] of Object.entries(errorHeaders(status))) headers.set(k, v);
    headers.set('connection', 'close');
    if (body?.startsWith('{')) return write(context, headers, status, body);
    const code =
      (Object.keys(ERRORS) as ErrorCode[]).find((c) => ERRORS[c].status === status) ??
      (status < 500 ? 'bad-request' : 'internal');
    headers.set('content-type', 'application/json');
    const r = renderError(code, code === 'internal' ? undefined : body?.trim() || undefined);
    return write(context, headers, status, JSON.stringify(r.body));
  };
  tus.on('POST_CREATE', () => metrics.uploadsInProgress.inc());
  tus.on('POST_TERMINATE', (_req: unknown, _res: unknown, id: string) => {
    ledger.release(id);
    metrics.uploadsInProgress.dec();
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    await loaded;
    if (req.method !== 'OPTIONS') {
      let peer: Peer;
      try {
        peer = await authenticate(backend, req.headers.authorization);
      } catch (e) {
        const we = e instanceof WireError ? e : new WireError('internal');
        sendError(req, res, we.code, we.detail, { 'tus-resumable': '1.0.0' });
        return;
      }
      peers.set(req, peer);
      const id = uploadIdOf(req.url ?? '');
      const owner = id ? await ledger.owner(id) : undefined;
      if (id === null || (owner !== undefined && owner !== peer.name)) {
        sendError(req, res, 'not-found', 'no such upload', { 'tus-resumable': '1.0.0' });
        return;
      }
      const len = Number(req.headers['content-length'] ?? 0);
      if (req.method === 'PATCH' && len > 0) metrics.bytesIn.inc({ peer: peer.name }, len);
      // A PATCH over a slow link lasts minutes: one whose token is revoked meanwhile is cut at once
      // (decision 411); the bytes that came before stay, as after any cut (tus).
      const token = bearerToken(req.headers.authorization);
      if (credentials && token && req.method === 'PATCH') {
        const release = credentials.hold(token, () => {
          req.destroy();
          res.destroy();
        });
        res.once('close', release);
      }
    }
    await tus.handle(req, res);
  }
  return {
    tus,
    store,
    ledger,
    handle,
    cleanUpExpired: async () => {
      const n = await tus.cleanUpExpiredUploads();
      await ledger.load();
      return n;
    },
  };
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
