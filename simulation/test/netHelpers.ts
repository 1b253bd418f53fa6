import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';

/** An echo server on 127.0.0.1:0 that ends its side when the client ends (half-close aware). */
export async function echoServer(): Promise<{
  port: number;
  connections: () => number;
  close: () => Promise<void>;
}> {
  let count = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer({ allowHalfOpen: true }, (s) => {
    count++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.on('data', (b) => s.write(b));
    s.on('end', () => s.end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => count,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Connects, resolving with the socket or rejecting with the error code (ECONNREFUSED, …). */
export function open(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    s.once('connect', () => resolve(s));
    s.once('error', reject);
  });
}

/** Reads from `s` until `n` bytes have come (resolves with them) or the socket closes/errors first. */
export function readBytes(s: Socket, n: number, deadlineMs = 10_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    let got = 0;
    const timer = setTimeout(
      () => reject(new Error(`only ${got} of ${n} bytes within ${deadlineMs} ms`)),
      deadlineMs,
    );
    const done = (e?: Error) => {
      clearTimeout(timer);
      s.off('data', onData);
      if (e) reject(e);
      else resolve(Buffer.concat(parts).subarray(0, n));
    };
    const onData = (b: Buffer) => {
      parts.push(b);
      got += b.length;
      if (got >= n) done();
    };
    s.on('data', onData);
    s.once('error', (e) => done(e));
    s.once('close', () => {
      if (got < n) done(new Error(`socket closed after ${got} of ${n} bytes`));
    });
  });
}

/** Resolves with how the socket ended: 'reset' (ECONNRESET) or 'closed'. */
export function ended(s: Socket, deadlineMs = 10_000): Promise<'reset' | 'closed' | string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`socket still open after ${deadlineMs} ms`)), deadlineMs);
    let how: string | null = null;
    s.once('error', (e: NodeJS.ErrnoException) => {
      how = e.code === 'ECONNRESET' ? 'reset' : (e.code ?? e.message);
    });
    s.once('close', () => {
      clearTimeout(timer);
      resolve(how ?? 'closed');
    });
    s.resume();
  });
}

/** Polls `check` every 10 ms until it is true; throws after `deadlineMs`. */
export async function until(
  check: () => boolean | Promise<boolean>,
  deadlineMs = 5000,
  what = 'condition',
): Promise<void> {
  const end = Date.now() + deadlineMs;
  for (let i = 0; i < 10_000; i++) {
    if (await check()) return;
    if (Date.now() > end) throw new Error(`${what} not reached within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`${what} not reached after 10000 polls`);
}

export function pattern(n: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + (i >> 8)) & 0xff;
  return b;
}
