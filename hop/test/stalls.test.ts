import { randomBytes } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CURSOR_HEADER, encodeBatch, wire2 } from '@driftline/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { HopClient } from '../src/client.js';

/**
 * A downlink answer that makes no progress is cut (docs/decisions/410-independent-downlinks.md): one
 * that never begins (a pull held without a word), one that pauses, one that drips a byte at a time.
 * Real HTTP on 127.0.0.1; the client's own stall time is short, every wait is the client's.
 */

let server: Server | undefined;
/** Runs as the upstream answers a health probe (before its headers go). */
let onHealth: () => void = () => {};
const open = new Set<ServerResponse>();
afterEach(async () => {
  for (const r of open) r.destroy();
  open.clear();
  onHealth = () => {};
  await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
  server = undefined;
});

async function upstream(onPull: (res: ServerResponse) => void): Promise<string> {
  server = createServer((req, res) => {
    if (req.url === '/v1/health') {
      onHealth();
      return res.end('{"ok":true}');
    }
    open.add(res);
    onPull(res);
  });
  await new Promise<void>((r) => server?.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const page = Buffer.from(encodeBatch([new Uint8Array(600).fill(7)]));
const pull = (url: string) =>
  new HopClient({ url, token: 't', stallMs: 400, floorBytesPerS: 128 }).pullDownlink(
    'ship-1',
    '5',
    undefined,
    {
      waitS: 1,
    },
  );

describe('HopClient cuts a stalled downlink answer', () => {
  it('cuts a pull held past its hold, the round trip and the stall time without a word', async () => {
    const url = await upstream(() => {});
    const r = await pull(url);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect([r.code, r.message]).toEqual([
        'stalled',
        expect.stringMatching(/no answer within the 1 s hold/),
      ]);
  });

  it('cuts an answer whose body pauses longer than the stall time', async () => {
    const url = await upstream((res) => {
      res.writeHead(200, { [CURSOR_HEADER]: '6', 'content-length': String(page.length) });
      res.write(page.subarray(0, 10));
    });
    const r = await pull(url);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect([r.code, r.message]).toEqual([
        'stalled',
        expect.stringMatching(/no progress for 0 s after 10 byte/),
      ]);
  });

  it('cuts an answer that drips a byte at a time, under the floor rate', async () => {
    const url = await upstream((res) => {
      res.writeHead(200, { [CURSOR_HEADER]: '6', 'content-length': String(page.length) });
      let i = 0;
      const drip = setInterval(() => {
        if (res.destroyed || i >= page.length) return clearInterval(drip);
        res.write(page.subarray(i, ++i));
      }, 20);
    });
    const r = await pull(url);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect([r.code, r.message]).toEqual(['stalled', expect.stringMatching(/under the floor of 128 B\/s/)]);
  });

  it('takes an answer that comes whole within the hold', async () => {
    const url = await upstream((res) => {
      setTimeout(() => {
        res.writeHead(200, { [CURSOR_HEADER]: '6', 'content-length': String(page.length) });
        res.end(page);
      }, 100);
    });
    const r = await pull(url);
    expect(r.ok && r.value.bundles.map((b) => b.length)).toEqual([600]);
  });

  it('measures round trips and deadlines on the monotonic clock, whatever the wall clock does', async () => {
    // The agent's wall clock set back two hours while a request was out (a skew test, or an operator
    // fixing it): a round trip read off the wall clock came out at -7,200 s and armed every later pull's
    // deadline in the past, so each was cut at once.
    const wall = { offset: 0 };
    const url = await upstream((res) => {
      setTimeout(() => {
        res.writeHead(200, { [CURSOR_HEADER]: '6', 'content-length': String(page.length) });
        res.end(page);
      }, 300);
    });
    onHealth = () => {
      wall.offset = -7_200_000;
    };
    const client = new HopClient({
      url,
      token: 't',
      stallMs: 400,
      floorBytesPerS: 128,
      now: () => Date.now() + wall.offset,
    });
    expect((await client.probe()).ok).toBe(true);
    expect(wall.offset).toBe(-7_200_000);
    expect(client.roundTripMs()).toBeGreaterThanOrEqual(0);
    const r = await client.pullDownlink('ship-1', '5', undefined, { waitS: 1 });
    expect(r.ok && r.value.bundles.map((b) => b.length)).toEqual([600]);
  });
});

describe('HopClient cuts a stalled hop v2 pull answer as v1’s (decision 495)', () => {
  const answer = Buffer.from(wire2.encodePullAnswer({ cursor: 6, items: [new Uint8Array(600).fill(7)] }));
  // what the upstream reads of it does not matter here: it answers every request the same
  const pullV2 = (url: string) =>
    new HopClient({ url, token: 't', stallMs: 400, floorBytesPerS: 128 }).exchangeWire2(
      new Uint8Array(80),
      undefined,
      1,
      true,
    );

  it('cuts a v2 pull held past its hold, the round trip and the stall time without a word', async () => {
    const url = await upstream(() => {});
    const r = await pullV2(url);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect([r.code, r.message]).toEqual([
        'stalled',
        expect.stringMatching(/no answer within the 1 s hold/),
      ]);
  });

  it('cuts a v2 answer that drips a byte at a time, under the floor rate', async () => {
    const url = await upstream((res) => {
      res.writeHead(200, { 'content-length': String(answer.length) });
      let i = 0;
      const drip = setInterval(() => {
        if (res.destroyed || i >= answer.length) return clearInterval(drip);
        res.write(answer.subarray(i, ++i));
      }, 20);
    });
    const r = await pullV2(url);
    expect(r.ok).toBe(false);
    if (!r.ok)
      expect([r.code, r.message]).toEqual(['stalled', expect.stringMatching(/under the floor of 128 B\/s/)]);
  });

  it('takes a v2 answer that comes whole within the hold', async () => {
    const url = await upstream((res) => {
      setTimeout(() => {
        res.writeHead(200, { 'content-length': String(answer.length) });
        res.end(answer);
      }, 100);
    });
    const r = await pullV2(url);
    expect(r.ok && Buffer.from(r.value.body).equals(answer)).toBe(true);
  });
});

/**
 * An answer due at once (a push, a probe: no hold) is cut once it does not begin within the measured round
 * trip, the stall time and the body's time at the floor rate (docs/decisions/515-answers-due-at-once.md):
 * a hung upstream no longer holds the agent's pushes for the request timeout.
 */
describe('HopClient cuts an answer due at once that never begins', () => {
  const client = (url: string) => new HopClient({ url, token: 't', stallMs: 400, floorBytesPerS: 128 });
  const batch = encodeBatch([new Uint8Array(600).fill(7)]);

  it('cuts a v1 batch and a v2 push to an upstream that answered once and then hangs', async () => {
    const url = await upstream(() => {});
    const c = client(url);
    expect((await c.probe()).ok).toBe(true); // the round trip is measured
    const v1 = await c.postBatch(batch);
    const v2 = await c.exchangeWire2(new Uint8Array(200));
    for (const r of [v1, v2]) {
      expect(r.ok).toBe(false);
      if (!r.ok) {
        expect([r.code, r.retryable]).toEqual(['stalled', true]);
        expect(r.message).toMatch(/no answer within the 0 s round trip, 0 s and \d+ s to send \d+ B/);
      }
    }
  });

  it('gives the body its time at the floor rate: a slow answer to a large push is not cut', async () => {
    // 600 B at 128 B/s: ~4.7 s before a cut; the upstream answers after 1 s, well past the stall time
    const url = await upstream((res) => {
      setTimeout(() => res.end(JSON.stringify({ receipts: [] })), 1000);
    });
    const c = client(url);
    expect((await c.probe()).ok).toBe(true);
    // random bytes: the batch goes brotli-compressed, and 600 equal bytes would be a few dozen
    const r = await c.postBatch(encodeBatch([new Uint8Array(randomBytes(600))]));
    expect(r.ok || r.code).not.toBe('stalled');
  });

  it('leaves an upstream whose round trip is not measured yet to the request timeout', async () => {
    let arrived: () => void = () => {};
    const inAtUpstream = new Promise<void>((r) => {
      arrived = r;
    });
    const url = await upstream(() => arrived());
    const c = client(url);
    const stop = new AbortController();
    // the client's deadlines are timers: on virtual time, any it armed for this exchange fires below
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const pending = c.exchangeWire2(new Uint8Array(200), stop.signal);
      await inAtUpstream;
      // three times the stall time and more: not cut (a link minutes long one way may not have answered yet)
      await vi.advanceTimersByTimeAsync(1500);
      stop.abort();
      const r = await pending;
      expect(r.ok ? 'answered' : r.code).toBe('aborted');
    } finally {
      vi.useRealTimers();
    }
  });
});
