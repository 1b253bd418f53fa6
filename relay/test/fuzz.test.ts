import { BATCH_CONTENT_TYPE, encodeBatch } from '@driftline/protocol';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Relay } from '../src/app.js';
import { makeBundle, startRelay } from './helpers.js';

let relay: Relay;
let url: string;
let token: string;
beforeAll(async () => {
  ({ relay, url } = await startRelay({ name: 'fuzz', limits: { maxBatchBytes: 64 * 1024 } }, []));
  token = relay.tokens.add('ship-7', ['ship-7']);
  const b = await makeBundle();
  await fetch(`${url}/v1/bundles`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': BATCH_CONTENT_TYPE },
    body: encodeBatch([b.bytes]) as BodyInit,
  });
});
afterAll(() => relay.stop());

const snapshot = () => JSON.stringify([relay.custody.queueStats(0), relay.custody.blobs.pending('x', 100)]);

const paths = [
  '/v1/bundles',
  '/v1/bundles?for=ship-7',
  '/v1/bundles?for=',
  '/v1/bundles?for=ship-7&after=abc',
  '/v1/bundles?for=ship-7&limit=99999',
  '/v1/bundles?for=other',
  '/v1/uploads',
  '/v1/uploads/',
  '/v1/uploads/deadbeef',
  '/v1/uploads/../../etc/passwd',
  `/v1/blobs/${'a'.repeat(64)}`,
  '/v1/blobs/zz',
  '/v1/health',
  '/metrics',
  '/nope',
];
const methods = ['GET', 'POST', 'PATCH', 'HEAD', 'DELETE', 'PUT', 'OPTIONS'];
const headerSets = fc.record({
  auth: fc.constantFrom(undefined, 'Bearer nope', 'Basic x', 'Bearer ', 'TOKEN'),
  type: fc.constantFrom(undefined, BATCH_CONTENT_TYPE, 'application/offset+octet-stream', 'text/plain'),
  encoding: fc.constantFrom(undefined, 'br', 'gzip', 'zstd'),
  tus: fc.constantFrom(undefined, '1.0.0', '0.2'),
  offset: fc.constantFrom(undefined, '0', '-1', 'x'),
  length: fc.constantFrom(undefined, '5', '-3', '99999999999999'),
  meta: fc.constantFrom(
    undefined,
    'sha256 eA==',
    'garbage',
    `sha256 ${Buffer.from('a'.repeat(64)).toString('base64')}`,
  ),
  range: fc.constantFrom(undefined, 'bytes=0-1', 'bytes=9-1', 'bytes=x', 'bytes=-0'),
});

describe('fuzzing every endpoint with malformed requests', () => {
  it('answers each with a 4xx and an error code (or success for harmless ones), stays up, stores nothing', async () => {
    const before = snapshot();
    let cases = 0;
    const deadline = Date.now() + 60_000;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...methods),
        fc.constantFrom(...paths),
        headerSets,
        fc.uint8Array({ maxLength: 300 }),
        fc.boolean(),
        async (method, path, h, body, batchLike) => {
          if (Date.now() > deadline) return;
          cases++;
          const headers: Record<string, string> = {};
          if (h.auth) headers.authorization = h.auth === 'TOKEN' ? `Bearer ${token}` : h.auth;
          if (h.type) headers['content-type'] = h.type;
          if (h.encoding) headers['content-encoding'] = h.encoding;
          if (h.tus) headers['tus-resumable'] = h.tus;
          if (h.offset) headers['upload-offset'] = h.offset;
          if (h.length) headers['upload-length'] = h.length;
          if (h.meta) headers['upload-metadata'] = h.meta;
          if (h.range) headers.range = h.range;
          // half the bodies look like a batch header so the decoder is exercised past the magic bytes
          const payload = batchLike
            ? Buffer.concat([Buffer.from('DLT\x01'), Buffer.from(body)])
            : Buffer.from(body);
          const hasBody = !['GET', 'HEAD', 'OPTIONS'].includes(method);
          const r = await fetch(`${url}${path}`, { method, headers, body: hasBody ? payload : undefined });
          const text = method === 'HEAD' ? '' : await r.text();
          expect(r.status, `${method} ${path} ${JSON.stringify(headers)} -> ${text}`).toBeLessThan(500);
          if (r.status >= 400 && method !== 'HEAD') {
            expect(JSON.parse(text).error.code, `${method} ${path}`).toMatch(/^[a-z-]+$/);
          }
        },
      ),
      { numRuns: 2000, seed: 42 },
    );
    expect(cases).toBeGreaterThan(200);
    expect((await fetch(`${url}/v1/health`)).status).toBe(200);
    expect(snapshot()).toBe(before);
  }, 120_000);
});
