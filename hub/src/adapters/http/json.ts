import { WireError } from '@driftline/protocol';
import type { Context } from 'koa';

/** How long a JSON body on the people's side may take to arrive, ms. */
export const JSON_BODY_DEADLINE_MS = 30_000;

/**
 * Reads a JSON request body of at most `limit` bytes: refused from `Content-Length` before a byte is
 * read, then while streaming (a sender may lie or send chunked). The unread rest is never drained: the
 * error middleware closes the connection after the answer.
 */
export async function readJson(
  ctx: Context,
  limit: number,
  what: string,
  deadlineMs = JSON_BODY_DEADLINE_MS,
): Promise<unknown> {
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new WireError('payload-too-large', `${what} is at most ${limit} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  // A small JSON body that has not arrived within the deadline is a client holding a socket open
  // (the servers have no overall request timeout, for slow hop uploads): answer 408 and close.
  const timer = setTimeout(() => {
    ctx.req.destroy(new WireError('request-timeout', `${what} did not arrive within ${deadlineMs} ms`));
  }, deadlineMs);
  try {
    // Leaving the loop early must not destroy the socket: the 413 still has to reach the client.
    for await (const c of ctx.req.iterator({ destroyOnReturn: false })) {
      size += (c as Buffer).length;
      if (size > limit) throw new WireError('payload-too-large', `${what} is at most ${limit} bytes`);
      chunks.push(c as Buffer);
    }
  } catch (e) {
    if (e instanceof WireError) throw e;
    throw new WireError('request-timeout', `${what} did not arrive in time or was cut off`);
  } finally {
    clearTimeout(timer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new WireError('bad-request', `${what} is not JSON`);
  }
}
