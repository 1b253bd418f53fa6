import { mkdtempSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '@driftline/protocol/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { HopClient } from '../src/client.js';
import { createHopServer, MemoryHopBackend } from '../src/index.js';

/**
 * Holds up to a day (docs/decisions/390-long-holds.md): a relay that holds pulls for six hours tells a
 * client that cannot read so long a longest an hour, and tells one that can the real one; answers and
 * requests go without `Connection`/`Keep-Alive` lines and connections are still reused.
 */
const TOKEN = 'secret-token';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** How a client before decision 390 reads the longest hold (`parseHeldMax` then): over 3600 is garbage. */
const preLongHoldsMax = (held: string | null): number | null => {
  const m = /;max=(\d{1,5})$/.exec(held ?? '');
  return m && Number(m[1]) <= 3600 ? Number(m[1]) : null;
};

interface Seen {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  held: string | undefined;
  answerHeaders: string[];
  /** Which connection to the tap carried it (0, 1, …). */
  socket: number;
}

async function listen(s: Server): Promise<number> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => s.close(r)));
  return (s.address() as AddressInfo).port;
}

/** A relay that holds pulls up to `maxHoldS`, behind a forwarder that keeps every exchange's headers. */
async function relayBehindTap(maxHoldS: number) {
  const backend = new MemoryHopBackend({ name: 'relay-1', role: 'relay', maxHoldS });
  backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  const hop = createHopServer(backend, {
    uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-long-')), maxSize: 1024 },
  });
  const { url: hopUrl } = await hop.listen();
  closers.push(() => hop.close());
  const port = Number(new URL(hopUrl).port);
  const seen: Seen[] = [];
  const sockets = new WeakMap<object, number>();
  let nextSocket = 0;
  const tap = createServer((req, res) => {
    if (!sockets.has(req.socket)) sockets.set(req.socket, nextSocket++);
    const socket = sockets.get(req.socket) ?? -1;
    const up = request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (ur) => {
        seen.push({
          url: req.url ?? '',
          headers: req.headers,
          held: ur.headers['driftline-held'] as string | undefined,
          answerHeaders: ur.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase()),
          socket,
        });
        res.writeHead(ur.statusCode ?? 502, ur.rawHeaders);
        ur.pipe(res);
      },
    );
    req.pipe(up);
  });
  const tapPort = await listen(tap);
  return { backend, seen, url: `http://127.0.0.1:${tapPort}`, hopUrl };
}

const waitOf = (s: Seen | undefined) => new URL(s?.url ?? '', 'http://x').searchParams.get('wait');

describe('holds up to a day', () => {
  it('tells a client that cannot read a longer longest an hour, and one that can (or asks more) the real one', async () => {
    const { backend, hopUrl } = await relayBehindTap(21_600);
    const auth = { authorization: `Bearer ${TOKEN}` };
    const pull = (query: string, headers: Record<string, string> = {}) =>
      fetch(`${hopUrl}/v1/bundles?for=ship-7&${query}`, { headers: { ...auth, ...headers } });

    // A client before decision 390 (no marker, asking at most an hour) reads an hour, not garbage.
    const old = await pull('wait=0');
    expect(old.headers.get('driftline-held')).toBe('0;keep=2;max=3600');
    expect(preLongHoldsMax(old.headers.get('driftline-held'))).toBe(3600);
    // One that says it reads more is told the six hours.
    const marked = await pull('wait=0', { 'driftline-long-holds': '1' });
    expect(marked.headers.get('driftline-held')).toBe('0;keep=2;max=21600');
    // One that asks more than an hour is held that long and told the real longest as well.
    const asking = pull('after=0&wait=7200');
    await until(() => backend.held.size === 1, 'one pull held');
    expect(backend.held.size).toBe(1);
    backend.held.notify('ship-7');
    expect((await asking).headers.get('driftline-held')).toBe('7200;keep=2;max=21600');
    // Only `1` says it: any other value (garbage, a long one) is told the hour, as an older client.
    for (const value of ['yes', '0', '11', 'x'.repeat(4000)]) {
      const odd = await pull('wait=0', { 'driftline-long-holds': value });
      expect(odd.headers.get('driftline-held')).toBe('0;keep=2;max=3600');
    }
    // More than a day is refused as a bad query, naming the key.
    const tooLong = await pull('wait=86401');
    expect(tooLong.status).toBe(400);
    expect(await tooLong.text()).toContain('wait');
  });

  it('learns a six-hour longest in one pull, then asks it without saying so again', async () => {
    const { backend, seen, url } = await relayBehindTap(21_600);
    const client = new HopClient({ url, token: TOKEN });
    const first = await client.pullDownlink('ship-7', undefined, undefined, { waitS: 0 });
    expect(first).toMatchObject({ ok: true, value: { holdMaxS: 21_600 } });
    expect(seen[0]?.headers['driftline-long-holds']).toBe('1');
    const cursor = first.ok ? first.value.cursor : '';

    const held = async (waitS: number) => {
      const n = backend.held.size;
      const pulling = client.pullDownlink('ship-7', cursor, undefined, { waitS });
      await until(() => backend.held.size > n, 'the pull held');
      backend.held.notify('ship-7');
      return pulling;
    };
    expect((await held(86_400)).ok).toBe(true);
    expect(waitOf(seen[1])).toBe('21600');
    expect(seen[1]?.headers['driftline-long-holds']).toBeUndefined();
    // A hold cut short by the caller (a proxy's idle timeout learnt, decision 340) is told an hour, as
    // any pull of an hour or less without the marker: that does not undo the six hours learnt.
    expect((await held(600)).ok).toBe(true);
    expect(waitOf(seen[2])).toBe('600');
    expect(seen[2]?.held).toBe('600;keep=2;max=3600');
    expect((await held(86_400)).ok).toBe(true);
    expect(waitOf(seen[3])).toBe('21600');

    // Once the relay grants less than it did (its operator lowered limits.maxHoldS), the next pull learns it.
    (backend as { maxHoldS?: number }).maxHoldS = 1800;
    expect((await held(86_400)).ok).toBe(true);
    expect(seen[4]?.held).toBe('1800;keep=2;max=1800');
    expect((await held(86_400)).ok).toBe(true);
    expect(waitOf(seen[5])).toBe('1800');
  });

  it('stops saying it reads a longer longest once an upstream states an hour or less', async () => {
    const { backend, seen, url } = await relayBehindTap(3600);
    const client = new HopClient({ url, token: TOKEN });
    const first = await client.pullDownlink('ship-7', undefined, undefined, { waitS: 0 });
    expect(first).toMatchObject({ ok: true, value: { holdMaxS: 3600 } });
    const cursor = first.ok ? first.value.cursor : '';
    const pulling = client.pullDownlink('ship-7', cursor, undefined, { waitS: 86_400 });
    await until(() => backend.held.size === 1, 'one pull held');
    backend.held.notify('ship-7');
    expect((await pulling).ok).toBe(true);
    expect(seen.map((s) => s.headers['driftline-long-holds'])).toEqual(['1', undefined]);
    expect(waitOf(seen[1])).toBe('3600');
  });

  it('keeps the connection for the next request without Connection or Keep-Alive lines either way', async () => {
    const { seen, url } = await relayBehindTap(21_600);
    const client = new HopClient({ url, token: TOKEN });
    for (let i = 0; i < 3; i++) {
      const r = await client.pullDownlink('ship-7', undefined, undefined, { waitS: 0 });
      expect(r.ok).toBe(true);
    }
    expect(seen).toHaveLength(3);
    expect(seen.map((s) => s.socket)).toEqual([0, 0, 0]);
    for (const s of seen) {
      expect(s.headers.connection).toBeUndefined();
      expect(s.answerHeaders).not.toContain('connection');
      expect(s.answerHeaders).not.toContain('keep-alive');
    }
  });
});
