import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { EventLog } from '../../core/EventLog.js';
import { feedOf, frame } from './liveFeed.js';

/** A client gets at most one flush of live events per this many ms (a few a second). */
export const COALESCE_MS = 250;

/**
 * `GET /api/events` (Server-Sent Events, WHATWG HTML §9.2). Ids are `<epoch>-<seq>`. A client that
 * reconnects with `Last-Event-ID` (or `?lastEventId=`) gets what it missed, or, when it cannot be caught
 * up (the hub restarted, it fell behind the replay window, or the id is not one this hub gave out), one
 * `reset` event carrying the current id, after which it must re-read everything. `HEAD` answers the
 * headers only and opens no stream.
 */
export async function serveEvents(
  ctx: Context,
  log: EventLog,
  keepAliveMs = 15_000,
  coalesceMs = COALESCE_MS,
): Promise<void> {
  const lastId =
    ctx.get('last-event-id') || (typeof ctx.query.lastEventId === 'string' ? ctx.query.lastEventId : '');
  ctx.set({
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
  ctx.status = 200;
  const stream = new PassThrough();
  ctx.body = stream;
  if (ctx.method === 'HEAD') {
    stream.end();
    return;
  }
  ctx.set('connection', 'keep-alive');
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  stream.write('retry: 5000\n\n');
  if (lastId !== '') {
    // Shared between hubs: the id may be another hub's, a moment ahead of this one's ring.
    await log.catchUp?.().catch(() => {});
    const since = log.since(lastId);
    if (since.kind === 'reset') stream.write(frame(since.id, { type: 'reset', reason: since.reason }));
    else if (since.events.length > 0) stream.write(since.events.map((e) => frame(e.id, e.event)).join(''));
  }
  // Live events are coalesced at most once per `coalesceMs` (decision 402), for all clients at once
  // (docs/decisions/476-live-feed-and-view-reads-at-fleet-scale.md).
  const off = feedOf(log, coalesceMs).join({ write: (t) => stream.write(t), afterSeq: log.seq });
  const timer = setInterval(() => stream.write(': keep-alive\n\n'), keepAliveMs);
  timer.unref();
  const close = () => {
    off();
    clearInterval(timer);
    stream.end();
  };
  ctx.req.on('close', close);
  ctx.res.on('close', close);
}
