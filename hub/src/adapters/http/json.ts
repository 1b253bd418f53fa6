import { WireError } from '@driftline/protocol';
import type { Context } from 'koa';

/**
 * Reads a JSON request body of at most `limit` bytes: refused from `Content-Length` before a byte is
 * read, then while streaming (a sender may lie or send chunked). The unread rest is never drained: the
 * error middleware closes the connection after the answer.
 */
export async function readJson(ctx: Context, limit: number, what: string): Promise<unknown> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new WireError('payload-too-large', `${what} is at most ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  // Leaving the loop early must not destroy the socket: the 413 still has to reach the client.
  for await (const c of ctx.req.iterator({ destroyOnReturn: false })) {
    size += (c as Buffer).length;
    if (size > limit) throw new WireError('payload-too-large', `${what} is at most ${limit} bytes`);
    chunks.push(c as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new WireError('bad-request', `${what} is not JSON`);
  }
}
