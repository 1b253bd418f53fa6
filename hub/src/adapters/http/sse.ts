import { PassThrough } from 'node:stream';
import type { Context } from 'koa';
import type { EventLog, LoggedEvent } from '../../core/EventLog.js';

const frame = (e: LoggedEvent) => `id: ${e.id}\nevent: ${e.event.type}\ndata: ${JSON.stringify(e.event)}\n\n`;

/**
 * `GET /api/events` (Server-Sent Events, WHATWG HTML §9.2). Replays what a reconnecting client
 * missed after `Last-Event-ID`; a client further behind gets a `reload` event and refetches.
 */
export function serveEvents(ctx: Context, log: EventLog, keepAliveMs = 15_000): void {
  const raw = ctx.get('last-event-id') || String(ctx.query.lastEventId ?? '');
  const lastId = /^[0-9]{1,15}$/.test(raw) ? Number(raw) : null;
  const stream = new PassThrough();
  ctx.req.socket.setTimeout(0);
  ctx.req.socket.setNoDelay(true);
  ctx.set({
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  ctx.status = 200;
  ctx.body = stream;
  stream.write('retry: 5000\n\n');
  if (lastId !== null) {
    const { events, tooOld } = log.since(lastId);
    if (tooOld) stream.write('event: reload\ndata: {}\n\n');
    for (const e of events) stream.write(frame(e));
  }
  const off = log.subscribe((e) => stream.write(frame(e)));
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
