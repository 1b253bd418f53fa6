import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { PlainTransport } from './plainRequest.js';
import { Wire2Carrier, type Wire2CarrierState } from './wire2Carrier.js';

const closers: (() => unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** An HTTP/1.1-only server (as a proxy without h2c): the preface is a malformed request, answered 400. */
async function http1Only() {
  const prefaced = new Set<Socket>();
  const server: Server = createServer((_req, res) => res.end('ok'));
  server.on('clientError', (_e, socket: Socket) => {
    prefaced.add(socket);
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  closers.push(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, prefaces: () => prefaced.size };
}

describe('Wire2Carrier', () => {
  it('carries on HTTP/1.1 when h2c is refused on the way, for a day, then tries h2c again', async () => {
    const up = await http1Only();
    let now = 1_000_000;
    const heard: Wire2CarrierState[] = [];
    const plain = new PlainTransport();
    const c = new Wire2Carrier(
      up.url,
      plain,
      true,
      (s) => heard.push(s),
      () => now,
    );
    closers.push(() => {
      c.close();
      plain.close();
    });
    expect(c.asks()).toBe(true);
    expect(c.state().carrier).toBe('http/1.1'); // not stated yet
    c.noteStated(true);
    expect(c.state().carrier).toBe('h2c');
    const send = async () => await (await c.request(`${up.url}/v2`, { method: 'POST', body: 'x' })).text();
    expect(await send()).toBe('ok'); // the same exchange, again on HTTP/1.1
    expect(c.state()).toMatchObject({
      carrier: 'http/1.1',
      reason: expect.stringMatching(/h2c is not spoken/),
    });
    expect(await send()).toBe('ok');
    expect(up.prefaces()).toBe(1); // not tried on every exchange
    now += 86_400_000;
    expect(c.state().carrier).toBe('h2c');
    expect(await send()).toBe('ok');
    expect(up.prefaces()).toBe(2);
    expect(heard.map((h) => h.carrier)).toEqual(['h2c', 'http/1.1', 'http/1.1']);
  });

  it('does not ask for h2c on an https: upstream or when not allowed', () => {
    const plain = new PlainTransport();
    expect(new Wire2Carrier('https://relay.example', plain, true).asks()).toBe(false);
    const off = new Wire2Carrier('http://relay.example', plain, false);
    off.noteStated(true);
    expect([off.asks(), off.state().carrier]).toEqual([false, 'http/1.1']);
  });
});
