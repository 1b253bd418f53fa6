import type { IncomingMessage } from 'node:http';
import { createBrotliDecompress, createGunzip } from 'node:zlib';
import { WireError } from '@driftline/protocol';

/**
 * Reads a request body into memory, refusing anything over `limit` bytes: first from
 * `Content-Length` before a byte is read, then while streaming (a sender may lie or send chunked),
 * and again after decompression so a small compressed bomb cannot inflate past the limit.
 */
export async function readLimitedBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw new WireError(
      'payload-too-large',
      `Content-Length ${declared} is over the limit of ${limit} bytes`,
    );
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  let source: NodeJS.ReadableStream = req;
  if (encoding === 'br') source = req.pipe(createBrotliDecompress());
  else if (encoding === 'gzip') source = req.pipe(createGunzip());
  else if (encoding !== 'identity') {
    req.resume();
    throw new WireError(
      'unsupported-media-type',
      `Content-Encoding '${encoding}' is not accepted (use br or gzip)`,
    );
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > limit) {
        req.resume();
        throw new WireError('payload-too-large', `body is over the limit of ${limit} bytes`);
      }
      chunks.push(chunk);
    }
  } catch (e) {
    if (e instanceof WireError) throw e;
    throw new WireError('bad-request', `the body could not be read or decompressed: ${(e as Error).message}`);
  }
  const out = Buffer.concat(chunks, total);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
