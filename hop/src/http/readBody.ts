import type { IncomingMessage } from 'node:http';
import { createBrotliDecompress, createGunzip } from 'node:zlib';
import { WireError } from '@driftline/protocol';
import type { z } from 'zod';

/**
 * Reads a request body into memory, refusing anything over `limit` bytes: first from
 * `Content-Length` before a byte is read, then while streaming (a sender may lie or send chunked),
 * counting both the bytes on the wire and the bytes after decompression, so neither a small compressed
 * bomb nor an endless stream that inflates to nothing passes the limit. A refused body is not drained:
 * the error middleware closes the connection instead.
 */
export async function readLimitedBody(req: IncomingMessage, limit: number): Promise<Uint8Array> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) {
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
    throw new WireError(
      'unsupported-media-type',
      `Content-Encoding '${encoding}' is not accepted (use br or gzip)`,
    );
  }
  const tooLarge = () => new WireError('payload-too-large', `body is over the limit of ${limit} bytes`);
  let wire = 0;
  const onWire = (chunk: Buffer) => {
    wire += chunk.length;
    if (wire > limit) {
      req.unpipe();
      (source as unknown as { destroy(e: Error): void }).destroy(tooLarge());
    }
  };
  if (source !== req) req.on('data', onWire);
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > limit) {
        req.unpipe();
        throw tooLarge();
      }
      chunks.push(chunk);
    }
  } catch (e) {
    if (e instanceof WireError) throw e;
    throw new WireError('bad-request', `the body could not be read or decompressed: ${(e as Error).message}`);
  } finally {
    req.off('data', onWire);
  }
  const out = Buffer.concat(chunks, total);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/**
 * A JSON body within `limit` bytes, checked by `schema`: `bad-request` saying `says.notJson`, or
 * `says.mismatch` with the first issue and where it is.
 */
export async function readJsonBody<T>(
  req: IncomingMessage,
  limit: number,
  schema: z.ZodType<T>,
  says: { notJson: string; mismatch: string },
): Promise<T> {
  const bytes = await readLimitedBody(req, limit);
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch {
    throw new WireError('bad-request', says.notJson);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw new WireError(
      'bad-request',
      `${says.mismatch}: ${parsed.error.issues[0]?.message ?? ''} at ${parsed.error.issues[0]?.path.join('.') ?? ''}`,
    );
  return parsed.data;
}
