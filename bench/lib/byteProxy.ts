import type { AddressInfo } from 'node:net';
import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP forwarder in front of `targetPort` that counts every byte on its sockets, each way: HTTP heads,
 * bodies, HTTP/2 frames, settings and pings alike (TLS excluded: there is none on 127.0.0.1). Connections
 * are counted too, so a carrier that opens one per exchange shows it.
 */
export async function startByteProxy(targetPort: number) {
  const counts = { up: 0, down: 0, connections: 0 };
  const open = new Set<Socket>();
  const server = createServer((client) => {
    counts.connections++;
    const upstream = connect(targetPort, '127.0.0.1');
    open.add(client);
    open.add(upstream);
    client.on('data', (d: Buffer) => {
      counts.up += d.length;
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => {
      counts.down += d.length;
      client.write(d);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      open.delete(client);
      open.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    counts,
    /** The counts so far, and zeroes them. */
    take() {
      const out = { ...counts };
      counts.up = 0;
      counts.down = 0;
      counts.connections = 0;
      return out;
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of open) s.destroy();
        server.close(() => r());
      }),
  };
}
