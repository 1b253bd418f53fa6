import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createHopServer, MemoryHopBackend } from '@driftline/hop';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUpstream } from '../src/adapters/http/HttpUpstream.js';
import { SqliteCustody } from '../src/adapters/sqlite/SqliteCustody.js';
import { describeBundle } from '../src/core/describeBundle.js';
import { type ForwardEvent, forwardStep, type UpstreamSlot } from '../src/core/Forwarder.js';
import { makeBundle, tmp } from './helpers.js';

/**
 * A relay whose first upstream takes its requests and stops answering (a hung hub, a proxy that lost its
 * own upstream) after it answered before: the batch is cut once the answer has not begun within that
 * upstream's round trip, `forward.stallS` and its bytes at 128 B/s, and goes to the second upstream in
 * the same step (docs/decisions/535-relay-cuts-a-stalled-upstream.md). The request timeout here is ten
 * minutes: before, the whole uplink waited for it.
 */

const RELAY = 'relay-token';
const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

/** A hop node `name` over HTTP on port 0, and a pass-through in front of it that can go silent. */
async function node(name: string) {
  const terminal = new MemoryHopBackend({ name, role: 'hub' });
  terminal.addToken(RELAY, { name: 'relay-1', sites: ['*'] });
  const hop = createHopServer(terminal, { uploads: { directory: tmp('relay-stall-') } });
  const { url } = await hop.listen(0, '127.0.0.1');
  closers.push(() => hop.close());
  const target = new URL(url);
  const front = { silent: false, held: 0 };
  const server: Server = createServer((req, res) => {
    if (front.silent) {
      front.held++;
      req.resume(); // takes the request, never answers
      return;
    }
    const up = request(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  closers.push(() => {
    server.closeAllConnections();
    return new Promise<void>((r) => server.close(() => r()));
  });
  return { terminal, front, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, direct: url };
}

describe('a relay with a hung first upstream', () => {
  it('cuts the batch once its answer is late by forward.stallS and hands it to the second upstream', async () => {
    const custody = new SqliteCustody(join(tmp(), 'r.sqlite'), {});
    closers.push(() => custody.close());
    const take = async (at: number) => {
      const b = await makeBundle({ created: at });
      const d = describeBundle(b.bytes);
      if (!d.ok) throw new Error(d.message);
      custody.accept('ship-7', [d.value], at);
      return b;
    };
    const first = await node('hub-a');
    const second = await node('hub-b');
    const TEN_MINUTES = 600_000;
    const upstream = (name: string, url: string) =>
      new HttpUpstream(name, url, RELAY, TEN_MINUTES, undefined, Date.now, undefined, 1000);
    const slots: UpstreamSlot[] = [
      { upstream: upstream('up-a', first.url), plan: { windows: [] }, failures: 0, retryAt: 0 },
      { upstream: upstream('up-b', second.direct), plan: { windows: [] }, failures: 0, retryAt: 0 },
    ];
    const events: ForwardEvent[] = [];
    const opts = {
      batchBytes: 1 << 20,
      batchCount: 10,
      backoffBaseMs: 1000,
      backoffMaxMs: 60_000,
      idleMs: 5000,
    };
    const step = () =>
      forwardStep(
        custody,
        slots,
        opts,
        Date.now,
        () => 0.5,
        (e) => events.push(e),
      );

    // answered once: the first upstream's round trip is measured
    const a = await take(Date.now());
    expect((await step()).sent).toBe(1);
    expect([...first.terminal.stored.keys()]).toEqual([a.id]);

    first.front.silent = true;
    const b = await take(Date.now());
    const r = await step();
    expect(r.sent).toBe(1);
    expect(first.front.held).toBe(1);
    const failed = events.filter((e) => e.type === 'failed');
    expect(failed.map((e) => [e.upstream, e.code, e.retryable])).toEqual([['up-a', 'stalled', true]]);
    expect([...second.terminal.stored.keys()]).toEqual([b.id]);
    // the first backs off: the next batch goes straight to the second, without waiting on the first again
    const c = await take(Date.now());
    expect((await step()).sent).toBe(1);
    expect(first.front.held).toBe(1);
    expect([...second.terminal.stored.keys()]).toEqual([b.id, c.id]);
  }, 60_000);
});
