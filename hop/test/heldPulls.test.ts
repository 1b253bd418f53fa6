import { mkdtempSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BATCH_CONTENT_TYPE, encodeBatch } from '@driftline/protocol';
import { until } from '@driftline/protocol/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { HELD_SAMPLE_EVERY_MS, HopClient } from '../src/client.js';
import { MAX_REPEATS_HELD } from '../src/http/downlinkWaiters.js';
import { createHopServer, type HopServer, MemoryHopBackend } from '../src/index.js';
import { makeBundle } from '../src/testing.js';

/**
 * Held pulls on a costly link (docs/decisions/320-bytes-on-a-costly-link.md): the server states its longest
 * hold, the client asks for it, and a pull that finds nothing since the client's cursor is a bare 304.
 */
const TOKEN = 'secret-token';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

interface Seen {
  url: string;
  headers: Record<string, string | string[] | undefined>;
  status: number;
  answerHeaders: string[];
}

/** A forwarder in front of `port` that keeps every request's URL and headers and every answer's status and headers. */
async function tap(port: number): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const s = createServer((req, res) => {
    const up = request(
      { host: '127.0.0.1', port, method: req.method, path: req.url, headers: req.headers },
      (ur) => {
        seen.push({
          url: req.url ?? '',
          headers: req.headers,
          status: ur.statusCode ?? 0,
          answerHeaders: ur.rawHeaders.filter((_, i) => i % 2 === 0).map((h) => h.toLowerCase()),
        });
        res.writeHead(ur.statusCode ?? 502, ur.rawHeaders);
        ur.pipe(res);
      },
    );
    req.pipe(up);
  });
  await listen(s);
  return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}`, seen };
}

async function listen(s: Server): Promise<void> {
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => s.close(r)));
}

async function hopServer(
  maxHoldS?: number,
): Promise<{ backend: MemoryHopBackend; hop: HopServer; port: number }> {
  const backend = new MemoryHopBackend({ name: 'relay-1', role: 'relay', ...(maxHoldS ? { maxHoldS } : {}) });
  backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  const hop = createHopServer(backend, {
    uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-held-')), maxSize: 1024 },
  });
  const { url } = await hop.listen();
  closers.push(() => hop.close());
  return { backend, hop, port: Number(new URL(url).port) };
}

describe('held pulls on a costly link', () => {
  it('asks for the longest hold the upstream states and answers nothing new with a bare 304', async () => {
    const { backend, port } = await hopServer(900);
    const { url, seen } = await tap(port);
    const client = new HopClient({ url, token: TOKEN });

    const first = await client.pullDownlink('ship-7', undefined, undefined, { waitS: 0 });
    expect(first.ok && first.value.held).toBe(true);
    const cursor = first.ok ? first.value.cursor : '';
    expect(seen[0]?.url).toContain('wait=0');
    expect(seen[0]?.headers['if-none-match']).toBeUndefined();

    // The next pull asks for the stated 900 s (not the 3600 asked of the client), conditionally.
    const pulling = client.pullDownlink('ship-7', cursor, undefined, { waitS: 3600 });
    await until(() => backend.held.size === 1, 'one pull held');
    expect(backend.held.size).toBe(1);
    // Something arrives: the long hold wakes at once with it.
    // (two of this test's acks: one alone is ~150 B with random ids and signature, and brotli saves it
    // 20-37 B, around the 24 B the encoding's header costs; a hub's real ack saves more)
    const acks = await Promise.all(
      [1, 2].map(() => makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never)),
    );
    for (const ack of acks) backend.enqueueDownlink('ship-7', ack.bytes);
    const woke = await pulling;
    expect(woke.ok && woke.value.bundles).toHaveLength(2);
    expect(seen[1]?.url).toContain('wait=900');
    expect(seen[1]?.headers['if-none-match']).toBe(`"${cursor}"`);
    expect(seen[1]?.status).toBe(200);
    // a page of small acks still goes compressed (decision 380: whenever that pays for its header)
    expect(seen[1]?.answerHeaders).toContain('content-encoding');

    // Nothing since the client's cursor: 304, no body, no cursor or type header, the cursor kept.
    const after = woke.ok ? woke.value.cursor : '';
    const quiet = client.pullDownlink('ship-7', after, undefined, { waitS: 3600 });
    await until(() => backend.held.size === 1, 'one pull held');
    backend.held.notify('ship-7'); // woken with nothing (as at the end of a hold)
    const q = await quiet;
    expect(q).toMatchObject({ ok: true, value: { bundles: [], cursor: after, held: true } });
    expect(seen[2]?.status).toBe(304);
    expect(seen[2]?.answerHeaders).not.toContain('driftline-cursor');
    expect(seen[2]?.answerHeaders).not.toContain('content-type');
    // A pull does not repeat the client's clock estimate (only posts use it), and a held one within the
    // hour after the last clock sample is not timed: no send time, no server times in the answer.
    expect(seen[2]?.headers['driftline-clock']).toBeUndefined();
    expect(seen[0]?.headers['driftline-sent']).toBeDefined();
    expect(seen[2]?.headers['driftline-sent']).toBeUndefined();
    expect(seen[2]?.answerHeaders).not.toContain('driftline-received');
    // Only headers the hop API reads (decision 380): none of fetch's own (~115 B a pull), no
    // `Connection: keep-alive` (HTTP/1.1's default, decision 390), and the 304 is read raw (nothing asked
    // the server to encode it). Nor does the answer say `Connection` or `Keep-Alive`.
    expect(Object.keys(seen[2]?.headers ?? {}).sort()).toEqual([
      'accept-encoding',
      'authorization',
      'host',
      'if-none-match',
    ]);
    expect(seen[2]?.answerHeaders.sort()).toEqual(['date', 'driftline-held', 'etag']);
  });

  it('times a held pull again once the last clock sample is an hour old', async () => {
    const { backend, port } = await hopServer(900);
    const { url, seen } = await tap(port);
    // The client's clock runs with the real one (a frozen clock makes the server's own processing time
    // look longer than the round trip, and the exchange is not taken as a sample), shifted by `skew`.
    let skew = 0;
    const client = new HopClient({ url, token: TOKEN, now: () => Date.now() + skew });
    const first = await client.pullDownlink('ship-7', undefined, undefined, { waitS: 0 });
    const cursor = first.ok ? first.value.cursor : '';
    const held = async () => {
      const pulling = client.pullDownlink('ship-7', cursor, undefined, { waitS: 900 });
      await until(() => backend.held.size === 1, 'one pull held');
      backend.held.notify('ship-7');
      return pulling;
    };
    skew += HELD_SAMPLE_EVERY_MS - 60_000; // not yet an hour (the test itself takes far less than a minute)
    expect((await held()).ok).toBe(true);
    skew += 60_000;
    expect((await held()).ok).toBe(true);
    expect(seen.map((x) => x.headers['driftline-sent'] !== undefined)).toEqual([true, false, true]);
    expect(seen[2]?.answerHeaders).toContain('driftline-received');
  });

  it('asks an older upstream (no stated longest hold) for at most 55 s, unconditionally', async () => {
    const urls: string[] = [];
    const conditions: (string | undefined)[] = [];
    const old = createServer((req, res) => {
      urls.push(req.url ?? '');
      conditions.push(req.headers['if-none-match']);
      // What a relay before decision 320 answers: the held header is the seconds asked, nothing more.
      res.writeHead(200, {
        'content-type': BATCH_CONTENT_TYPE,
        'driftline-held': new URL(req.url ?? '', 'http://x').searchParams.get('wait') ?? '0',
        'driftline-cursor': '4',
      });
      res.end(Buffer.from(encodeBatch([])));
    });
    await listen(old);
    const client = new HopClient({
      url: `http://127.0.0.1:${(old.address() as AddressInfo).port}`,
      token: TOKEN,
    });
    const a = await client.pullDownlink('ship-7', undefined, undefined, { waitS: 3600 });
    const b = await client.pullDownlink('ship-7', '4', undefined, { waitS: 3600 });
    expect(a.ok && a.value.held).toBe(true);
    expect(b).toMatchObject({ ok: true, value: { cursor: '4', held: true } });
    expect(urls.map((u) => new URL(u, 'http://x').searchParams.get('wait'))).toEqual(['55', '55']);
    expect(conditions).toEqual([undefined, undefined]);
  });

  it('keeps a pull that found nothing a full answer for a client that sends no condition', async () => {
    const { port } = await hopServer(900);
    const res = await fetch(`http://127.0.0.1:${port}/v1/bundles?for=ship-7&after=0&wait=0`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('driftline-cursor')).toBe('0');
    expect(res.headers.get('driftline-held')).toBe('0;keep=2;max=900');
    const conditional = await fetch(`http://127.0.0.1:${port}/v1/bundles?for=ship-7&after=0&wait=0`, {
      headers: { authorization: `Bearer ${TOKEN}`, 'if-none-match': '"0"' },
    });
    expect(conditional.status).toBe(304);
    // A condition on another cursor is a full answer.
    const other = await fetch(`http://127.0.0.1:${port}/v1/bundles?for=ship-7&after=0&wait=0`, {
      headers: { authorization: `Bearer ${TOKEN}`, 'if-none-match': '"7"' },
    });
    expect(other.status).toBe(200);
    expect(other.headers.get('etag')).toBe('"0"');
  });

  it('keeps a second held pull of the agent waiting while the first answers, holds one that would repeat that answer, and lets the one ending first go for a third', async () => {
    const { backend, port } = await hopServer(900);
    const { url, seen } = await tap(port);
    const client = new HopClient({ url, token: TOKEN });
    const first = await client.pullDownlink('ship-7', undefined, undefined, { waitS: 0 });
    expect(first).toMatchObject({ ok: true, value: { held: true, heldS: 0, keep: 2, holdMaxS: 900 } });
    const cursor = first.ok ? first.value.cursor : '';
    const hold = { waitS: 900, holder: 'agent-a' };
    const a = client.pullDownlink('ship-7', cursor, undefined, hold);
    await until(() => backend.held.size === 1, 'one pull held');
    const b = client.pullDownlink('ship-7', cursor, undefined, hold);
    await until(() => backend.held.size === 2, 'two pulls held');
    expect(backend.held.size).toBe(2);
    const ack = await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never);
    backend.enqueueDownlink('ship-7', ack.bytes);
    const woke = await a;
    expect(woke.ok && woke.value.bundles).toHaveLength(1);
    // b still waits at the relay while a's answer travels
    expect(backend.held.size).toBe(1);
    // A pull the agent sent before a's answer reached it (the old cursor) finds only what a carried: held.
    const c = client.pullDownlink('ship-7', cursor, undefined, hold);
    await until(() => backend.held.size === 2, 'two pulls held');
    expect(backend.held.size).toBe(2);
    // A third lets go the one ending first (b): a bare 304, its cursor unmoved.
    const after = woke.ok ? woke.value.cursor : '';
    const d = client.pullDownlink('ship-7', after, undefined, hold);
    const gone = await b;
    expect(gone).toMatchObject({ ok: true, value: { bundles: [], cursor, held: true } });
    expect(seen.at(-1)?.status).toBe(304);
    expect(seen.at(-1)?.headers['driftline-holder']).toBe('agent-a');
    // c, woken with nothing new, repeats nothing either; a pull naming no holder is answered in full.
    backend.held.releaseAll();
    expect(await c).toMatchObject({ ok: true, value: { bundles: [] } });
    expect(await d).toMatchObject({ ok: true, value: { bundles: [] } });
    const plain = await client.pullDownlink('ship-7', cursor, undefined, { waitS: 900 });
    expect(plain.ok && plain.value.bundles).toHaveLength(1);
  });

  it('answers in full, not held, an agent that keeps pulling with the cursor before an answer it never got', async () => {
    const { backend, port } = await hopServer(900);
    const { url } = await tap(port);
    const client = new HopClient({ url, token: TOKEN });
    const first = await client.pullDownlink('ship-7', undefined, undefined, { waitS: 0 });
    const cursor = first.ok ? first.value.cursor : '';
    const hold = { waitS: 900, holder: 'agent-a' };
    const a = client.pullDownlink('ship-7', cursor, undefined, hold);
    await until(() => backend.held.size === 1, 'one pull held');
    const ack = await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never);
    backend.enqueueDownlink('ship-7', ack.bytes);
    // The answer leaves the relay; say a hop on the way swallowed it: the agent still has the old cursor.
    expect((await a).ok).toBe(true);
    // Pulls with the old cursor are first taken for ones sent before that answer arrived: held (two at a
    // time, a third letting go of the oldest, empty) ...
    const held: Array<ReturnType<HopClient['pullDownlink']>> = [];
    for (let i = 0; i < MAX_REPEATS_HELD; i++) {
      held.push(client.pullDownlink('ship-7', cursor, undefined, hold));
      // each counted at the relay before the next is sent: past two held, the count stays 2 and a
      // pull's arrival shows as the one two before it let go, empty
      if (i < 2) await until(() => backend.held.size === i + 1, `${i + 1} pulls held`);
      else expect(await held[i - 2]).toMatchObject({ ok: true, value: { bundles: [] } });
    }
    expect(backend.held.size).toBe(2);
    // ... and past that many the agent plainly did not get it: the next is answered at once, in full.
    const again = await client.pullDownlink('ship-7', cursor, undefined, hold);
    expect(again.ok && again.value.bundles).toHaveLength(1);
    backend.held.releaseAll();
    for (const p of held) expect(await p).toMatchObject({ ok: true, value: { bundles: [] } });
  });
});
