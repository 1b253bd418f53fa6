import { connect, createServer, type Socket } from 'node:net';
import { H2_PREFACE } from '@driftline/hop';
import type { TappedResponse } from './httpTap.js';

const DATA = 0x0;
const HEADERS = 0x1;
const CONTINUATION = 0x9;
const END_STREAM = 0x1;
/** `:status` as an indexed field of HPACK's static table (RFC 7541 Appendix A), as Node sends the common ones. */
const STATIC_STATUS: Record<number, number> = { 8: 200, 9: 204, 10: 206, 11: 304, 12: 400, 13: 404, 14: 500 };

/**
 * A TCP forwarder that counts h2c on the socket (issue 46): HTTP/2 has no per-request framing to tap at
 * the HTTP layer, so each connection that begins with the preface is read as frames, both ways, and each
 * frame's bytes (its 9-byte header included) go to its stream: one {@link TappedResponse} per stream in
 * `responses`, pushed when the answer ends (its request head is its HEADERS frames, its request body the
 * rest it sent). The preface and stream 0's frames (SETTINGS, their ACKs, WINDOW_UPDATE, PING, GOAWAY)
 * are the connection's (`connection`). Any other connection goes on to `http1Port` (the HTTP/1.1 tap),
 * counted there. Every exchange it sees is `POST /v2` (only hop v2 rides h2c); status from HPACK's static
 * table, else 200 with a body, 204 without. Each answer's body (its DATA payloads) is kept in `body`.
 */
export async function startH2Tap(
  h2Port: number,
  http1Port: number,
  responses: TappedResponse[],
  now: () => number = () => performance.now(),
) {
  const connection = { up: 0, down: 0, opened: 0 };
  /** The first connection's bytes before any stream's: its preface and settings exchange. */
  const setup = { up: 0, down: 0 };
  const setupOpen = { up: true, down: true };
  const open = new Set<Socket>();
  const server = createServer((client) => {
    open.add(client);
    client.once('close', () => open.delete(client));
    client.once('data', (first: Buffer) => {
      const h2 = first.subarray(0, 3).equals(H2_PREFACE.subarray(0, 3));
      const up = connect(h2 ? h2Port : http1Port, '127.0.0.1');
      open.add(up);
      const end = () => {
        client.destroy();
        up.destroy();
        open.delete(up);
      };
      for (const s of [client, up]) {
        s.on('error', end);
        s.once('close', end);
      }
      if (h2) {
        connection.opened++;
        const streams = new Map<number, TappedResponse & { hasData: boolean }>();
        const stream = (id: number) => {
          let r = streams.get(id);
          if (!r) {
            r = {
              start: now(),
              at: 0,
              reqBytes: 0,
              reqHeadBytes: 0,
              method: 'POST',
              path: '/v2',
              status: 0,
              bytes: 0,
              hasData: false,
            };
            streams.set(id, r);
          }
          return r;
        };
        const upFrames = frames(H2_PREFACE.length, (type, _flags, id, size, payload) => {
          if (id === 0) {
            connection.up += size;
            if (setupOpen.up) setup.up += size;
          } else setupOpen.up = false;
          if (id === 0) return;
          const r = stream(id);
          if (type === HEADERS || type === CONTINUATION) r.reqHeadBytes += size;
          else r.reqBytes += size;
          // the request's body (a push or a pull: what a 204 answered)
          if (type === DATA && payload.length > 0)
            r.reqBody = r.reqBody ? Buffer.concat([r.reqBody, payload]) : Buffer.from(payload);
        });
        const downFrames = frames(0, (type, flags, id, size, payload) => {
          if (id === 0) {
            connection.down += size;
            if (setupOpen.down) setup.down += size;
            return;
          }
          setupOpen.down = false;
          const r = stream(id);
          r.bytes += size;
          if (type === HEADERS && r.status === 0) r.status = STATIC_STATUS[(payload[0] ?? 0) & 0x7f] ?? -1;
          if (type === DATA && payload.length > 0) {
            r.hasData = true;
            // the answer's body (frames unpadded, as Node sends them), for what it carried
            r.body = r.body ? Buffer.concat([r.body, payload]) : Buffer.from(payload);
          }
          if ((type === HEADERS || type === DATA) && flags & END_STREAM && r.at === 0) {
            r.at = now();
            if (r.status === -1) r.status = r.hasData ? 200 : 204;
            // the record stays the stream's: frames after its end (a reset, a window update) still add to it
            responses.push(r);
          }
        });
        connection.up += H2_PREFACE.length;
        if (setupOpen.up) setup.up += H2_PREFACE.length;
        upFrames(first);
        client.on('data', (d: Buffer) => upFrames(d));
        up.on('data', (d: Buffer) => downFrames(d));
      }
      up.write(first);
      client.pipe(up);
      up.pipe(client);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as { port: number }).port,
    /** Bytes of the preface and stream 0 (settings, window updates, pings), each way, and connections opened. */
    connection,
    /** The first connection's preface and settings exchange, each way (before its first stream). */
    setup,
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}

/** A reader of HTTP/2 frames across chunks, skipping `skip` bytes first (the preface); `on` gets each whole frame. */
function frames(
  skip: number,
  on: (type: number, flags: number, stream: number, size: number, payload: Buffer) => void,
): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  let toSkip = skip;
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    if (toSkip > 0) {
      const n = Math.min(toSkip, buf.length);
      buf = buf.subarray(n);
      toSkip -= n;
    }
    while (buf.length >= 9) {
      const len = buf.readUIntBE(0, 3);
      if (buf.length < 9 + len) return;
      const type = buf[3] ?? 0;
      const flags = buf[4] ?? 0;
      const id = buf.readUInt32BE(5) & 0x7fffffff;
      on(type, flags, id, 9 + len, buf.subarray(9, 9 + len));
      buf = buf.subarray(9 + len);
    }
  };
}
