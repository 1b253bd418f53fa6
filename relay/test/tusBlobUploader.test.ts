import { rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { HopClient } from '@driftline/hop/client';
import { afterEach, describe, expect, it } from 'vitest';
import { TusBlobUploader } from '../src/adapters/tus/TusBlobUploader.js';
import { BLOB_LOST } from '../src/ports/BlobUploader.js';
import { tmp } from './helpers.js';

/**
 * The relay's blob uploads when its own file goes away: a blob already gone is `blob-lost`; one deleted
 * while its upload begins (an upstream that refuses before reading the body) is an ordinary failed upload.
 * Before, the stream opened the file itself, later: the deletion came first, the stream emitted 'error'
 * with nobody reading it, and the relay process ended (hostile/blobDirDeleted, in a whole run).
 */

const closers: Array<() => void> = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/** An upstream that answers 503 to everything, or (`silent`) takes every request and never answers. */
async function refusingUpstream(silent = false, stallMs?: number) {
  const server = createServer((req, res) => {
    req.resume();
    if (silent) return;
    res.writeHead(503, { 'content-type': 'application/json' });
    res.end('{"error":{"code":"unavailable","message":"down"}}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(() => {
    server.closeAllConnections();
    server.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new HopClient({ url, token: 't', timeoutMs: 600_000 });
  return new TusBlobUploader(new Map([['up', client]]), stallMs);
}

const blob = (path: string) => ({ sha256: 'ab'.repeat(32), size: 5, path, metadata: {}, url: null });

describe('TusBlobUploader', () => {
  it('answers blob-lost for a blob already gone from disk', async () => {
    const up = await refusingUpstream();
    const r = await up.upload('up', blob(join(tmp(), 'gone')), () => {});
    expect(r).toMatchObject({ ok: false, code: BLOB_LOST, retryable: false });
  });

  it('fails the upload, and nothing else, when the file is deleted as the upload begins', async () => {
    const up = await refusingUpstream();
    const path = join(tmp(), 'blob');
    writeFileSync(path, 'hello');
    const pending = up.upload('up', blob(path), () => {});
    rmSync(path);
    const r = await pending;
    expect(r).toMatchObject({ ok: false, retryable: true });
    expect(r.ok ? '' : r.message).toContain('to up');
  });

  it('cuts an upload the upstream takes and never answers, after forward.stallS with nothing moving', async () => {
    // the request timeout is ten minutes and tus has none of its own: before, this waited for TCP
    const up = await refusingUpstream(true, 500);
    const path = join(tmp(), 'blob');
    writeFileSync(path, 'hello');
    const r = await up.upload('up', blob(path), () => {});
    expect(r).toMatchObject({ ok: false, code: 'stalled', retryable: true });
  }, 30_000);
});
