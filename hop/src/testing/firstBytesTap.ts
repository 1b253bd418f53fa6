import { connect, createServer, type Socket } from 'node:net';

/**
 * A TCP forwarder to `127.0.0.1:port` that notes how each connection began (`kinds`): the HTTP/2 preface
 * (`h2c`) or anything else (`http/1.1`). For tests of what carries an exchange. `freeze()` stops carrying
 * the bytes of every connection open now, both ways, leaving them open (a path that silently dropped
 * them: a NAT that forgot them, a radio link gone); connections opened after are carried.
 */
export async function startFirstBytesTap(port: number) {
  const kinds: ('h2c' | 'http/1.1')[] = [];
  const open = new Set<Socket>();
  const pairs = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const up = connect(port, '127.0.0.1');
    const pair: [Socket, Socket] = [client, up];
    pairs.add(pair);
    client.once('close', () => pairs.delete(pair));
    for (const s of [client, up]) {
      open.add(s);
      s.on('error', () => {});
      s.once('close', () => {
        client.destroy();
        up.destroy();
        open.delete(s);
      });
    }
    client.once('data', (d: Buffer) =>
      kinds.push(d.subarray(0, 3).toString() === 'PRI' ? 'h2c' : 'http/1.1'),
    );
    client.pipe(up);
    up.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    kinds,
    freeze: () => {
      for (const [client, up] of pairs) {
        client.unpipe(up);
        up.unpipe(client);
        client.pause();
        up.pause();
      }
      pairs.clear();
    },
    close: () => {
      for (const s of open) s.destroy();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}
