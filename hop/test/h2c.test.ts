import { mkdtempSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect as h2connect } from 'node:http2';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import { generateSigningKeyPair, wire2 } from '@driftline/protocol';
import { until } from '@driftline/protocol/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { HopClient } from '../src/client.js';
import { createHopServer } from '../src/index.js';
import { MemoryWire2Node, makeBundle, startFirstBytesTap, wire2Registration } from '../src/testing.js';

/**
 * h2c beside HTTP/1.1 on one hop port (issue 46): a first-bytes switch hands the HTTP/2 preface to
 * `node:http2` and everything else to the HTTP/1.1 server; the same Koa app answers both. Held v2 pulls
 * over h2c are cut by revocation and by the server's close, as on HTTP/1.1; the body cap holds.
 */
const TOKEN = 'secret-token';
const closers: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function node(opts: { h2c?: boolean; recheckMs?: number } = {}) {
  const backend = new MemoryWire2Node({ name: 'relay-1', role: 'relay', maxHoldS: 3600 });
  backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  const hop = createHopServer(backend, {
    uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-h2c-')) },
    revocationCheckMs: opts.recheckMs ?? 50,
    ...(opts.h2c === undefined ? {} : { h2c: opts.h2c }),
  });
  const { url, port } = await hop.listen();
  closers.push(() => hop.close());
  return { backend, hop, url, port };
}

/** An agent's hop client through a tap, registered; `pull` sends a held v2 pull. */
async function agent(url: string, stallMs?: number) {
  const tap = await startFirstBytesTap(Number(new URL(url).port));
  closers.push(() => tap.close());
  const client = new HopClient({
    url: tap.url,
    token: TOKEN,
    timeoutMs: 10_000,
    ...(stallMs === undefined ? {} : { stallMs }),
  });
  closers.push(() => client.abort());
  const keys = await generateSigningKeyPair();
  const reg = await client.registerWire2(await wire2Registration(keys));
  if (!reg.ok) throw new Error(reg.message);
  let seq = 1;
  const pull = (holdS: number) =>
    wire2
      .encodeMessage(
        { kind: 'pull', from: reg.value.from, to: reg.value.node, seq: seq++, body: { have: 0, holdS } },
        keys.privateKey,
      )
      .then((m) => client.exchangeWire2(m, undefined, holdS));
  return { client, info: reg.value, pull, tap, keys };
}

/** The held pulls (and tus PATCHes) `hop` has open now. */
const heldOpen = async (hop: Awaited<ReturnType<typeof node>>['hop']) =>
  (await hop.metrics.heldOpen.get()).values[0]?.value;

/** Waits until `hop` holds the pull, bounded by count; fails loudly if it never does. */
async function heldOne(hop: Awaited<ReturnType<typeof node>>['hop']) {
  await until(async () => (await heldOpen(hop)) === 1, 'one pull held open at the server');
}

const h2get = (url: string, path: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const s = h2connect(url);
    s.on('error', reject);
    const st = s.request({ ':method': 'GET', ':path': path });
    let body = '';
    st.on('response', (h) => {
      st.on('data', (c: Buffer) => {
        body += c;
      });
      st.on('end', () => {
        s.close();
        resolve({ status: Number(h[':status']), body });
      });
    });
    st.on('error', reject);
  });

const h1get = (port: number, path: string) =>
  new Promise<number>((resolve, reject) => {
    httpRequest({ host: '127.0.0.1', port, path }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end();
  });

describe('h2c beside HTTP/1.1 on one port', () => {
  it('answers HTTP/1.1 and HTTP/2 with prior knowledge on the same port, from the same routes', async () => {
    const { url, port } = await node();
    expect(await h1get(port, '/v1/health')).toBe(200);
    const h2 = await h2get(url, '/v1/health');
    expect(h2.status).toBe(200);
    expect(JSON.parse(h2.body)).toMatchObject({ ok: true, role: 'relay', name: 'relay-1' });
    // an unknown route is the error table's, on h2c too
    const missing = await h2get(url, '/nope');
    expect([missing.status, JSON.parse(missing.body).error.code]).toEqual([404, 'not-found']);
    // tus stays HTTP/1.1: refused with a code, not broken
    const tus = await h2get(url, '/v1/uploads/');
    expect([tus.status, JSON.parse(tus.body).error.code]).toEqual([400, 'bad-request']);
  });

  it('states h2c in the v2 registration only to an agent that says it reads it, and only when it serves h2c', async () => {
    const on = await node();
    const off = await node({ h2c: false });
    const keys = await generateSigningKeyPair();
    const reg = JSON.stringify(await wire2Registration(keys));
    const ask = (port: number, headers: Record<string, string>) =>
      new Promise<unknown>((resolve, reject) => {
        const req = httpRequest(
          { host: '127.0.0.1', port, method: 'POST', path: wire2.WIRE2_REGISTER_PATH },
          (res) => {
            let b = '';
            res.on('data', (c: Buffer) => {
              b += c;
            });
            res.on('end', () => resolve(JSON.parse(b)));
          },
        );
        req.setHeader('authorization', `Bearer ${TOKEN}`);
        req.setHeader('content-type', 'application/json');
        for (const [k, v] of Object.entries(headers)) req.setHeader(k, v);
        req.on('error', reject);
        req.end(reg);
      });
    expect(await ask(on.port, { [wire2.WIRE2_H2C_HEADER]: '1' })).toMatchObject({ h2c: true });
    // an agent built before h2c reads the answer strictly: no field it does not know
    const older = (await ask(on.port, {})) as Record<string, unknown>;
    expect(older.h2c).toBeUndefined();
    expect(wire2.Wire2InfoSchema.strict().safeParse(older).success).toBe(true);
    expect((await ask(off.port, { [wire2.WIRE2_H2C_HEADER]: '1' })) as object).not.toHaveProperty('h2c');
    // what the node carries down (decision 505) goes to an agent that reads leniently (`0`: no h2c), not
    // to an older one
    // and so do the compact push forms every node to the hub reads (decision 510)
    Object.assign(on.backend.wire2, {
      carries: () => [wire2.CARRIES_PUBLICATIONS],
      pushForms: () => wire2.PUSH_FORMS,
    });
    expect(await ask(on.port, { [wire2.WIRE2_H2C_HEADER]: '0' })).toMatchObject({
      carries: [wire2.CARRIES_PUBLICATIONS],
      pushForms: wire2.PUSH_FORMS,
    });
    const strict = (await ask(on.port, {})) as Record<string, unknown>;
    expect(strict.carries).toBeUndefined();
    expect(strict.pushForms).toBeUndefined();
    expect(wire2.Wire2InfoSchema.strict().safeParse(strict).success).toBe(true);
  });

  it('answers a v2 exchange on h2c with its status and body alone: no length, no date', async () => {
    const { backend, url } = await node();
    const a = await agent(url);
    backend.enqueueDownlink(
      'ship-7',
      (await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never)).bytes,
    );
    const pull = await wire2.encodeMessage(
      { kind: 'pull', from: a.info.from, to: a.info.node, seq: 1, body: { have: 0, holdS: 0 } },
      a.keys.privateKey,
    );
    const session = h2connect(url);
    closers.push(() => session.close());
    const { headers, body } = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>(
      (resolve, reject) => {
        const s = session.request({ ':method': 'POST', ':path': wire2.WIRE2_PATH });
        const chunks: Buffer[] = [];
        let h: Record<string, unknown> = {};
        s.on('response', (got) => {
          h = got;
        });
        s.on('data', (c: Buffer) => chunks.push(c));
        s.on('end', () => resolve({ headers: h, body: Buffer.concat(chunks) }));
        s.on('error', reject);
        s.end(pull);
      },
    );
    expect(headers[':status']).toBe(200);
    expect(Object.keys(headers).filter((k) => k !== ':status' && k !== 'content-encoding')).toEqual([]);
    const raw = headers['content-encoding'] === 'br' ? brotliDecompressSync(body) : body;
    expect(wire2.decodePullAnswer(new Uint8Array(raw)).ok).toBe(true);
  });

  it('carries an agent’s v2 exchanges on one h2c connection across exchanges', async () => {
    const { backend, url } = await node();
    const a = await agent(url);
    expect(a.info.h2c).toBe(true);
    expect(a.client.wire2Carrier().carrier).toBe('h2c');
    expect((await a.pull(0)).ok).toBe(true);
    backend.enqueueDownlink(
      'ship-7',
      (await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never)).bytes,
    );
    const r = await a.pull(0);
    expect(r.ok && r.value.status).toBe(200);
    // the registration on HTTP/1.1 (bearer token), both pulls on one h2c connection
    expect(a.tap.kinds).toEqual(['http/1.1', 'h2c']);
  });

  it('leaves an h2c connection on which an exchange stalled: the next goes on a new connection', async () => {
    const { url } = await node();
    // 2 s to stall: the push is cut then, and the next exchange (a new connection) has as long to be answered
    const a = await agent(url, 2000);
    expect((await a.pull(0)).ok).toBe(true); // the round trip is measured, on connection 1
    a.tap.freeze(); // the path drops connection 1's bytes from now on, and tells neither end
    const push = await a.client.exchangeWire2(new Uint8Array(64));
    expect(push.ok ? 'answered' : push.code).toBe('stalled');
    // before: the next exchange went on the silent connection too, and every one after, until TCP gave up
    const next = await a.pull(0);
    expect(next.ok).toBe(true);
    expect(a.tap.kinds).toEqual(['http/1.1', 'h2c', 'h2c']);
  });

  it('cuts a held v2 pull over h2c when its sender’s token is revoked, and the connection carries the next', async () => {
    const { backend, hop, url } = await node();
    const a = await agent(url);
    const held = a.pull(3600);
    await heldOne(hop);
    backend.senders.delete(a.info.from);
    const r = await held;
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.status, r.code]).toEqual([401, 'unauthorized']);
    expect((await hop.metrics.revokedClosed.get()).values[0]?.value).toBe(1);
    const again = await a.pull(0);
    expect(again.ok ? 0 : again.status).toBe(401);
    expect(a.tap.kinds).toEqual(['http/1.1', 'h2c']);
  });

  it('cuts a held v2 pull over h2c when the server closes, and lets the agent abort one', async () => {
    const n = await node();
    const a = await agent(n.url);
    let ended = false;
    const held = a.pull(3600).finally(() => {
      ended = true;
    });
    await heldOne(n.hop);
    // the pull is still held when the close begins: what ends it is the close, not its hour's hold (a hold
    // that runs out is answered, ok and empty; a close that waited the hour out would be the test's timeout)
    expect(ended).toBe(false);
    await n.hop.close();
    const r = await held;
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.retryable).toBe(true);

    const m = await node();
    const b = await agent(m.url);
    const pending = b.pull(3600);
    await heldOne(m.hop);
    b.client.abort();
    const cut = await pending;
    expect(cut.ok ? 'answered' : cut.code).toBe('aborted');
    // the server let go of the stream: its held pull is gone
    await until(async () => (await heldOpen(m.hop)) === 0, 'the aborted pull let go at the server');
  });

  it('refuses a v2 body over the cap on h2c, declared or streamed, and keeps the connection', async () => {
    const { url } = await node();
    const s = h2connect(url);
    closers.push(() => s.destroy());
    const post = (headers: Record<string, string | number>, bytes: number) =>
      new Promise<{ status: number; code: string }>((resolve, reject) => {
        const st = s.request({ ':method': 'POST', ':path': wire2.WIRE2_PATH, ...headers });
        let b = '';
        st.on('response', (h) => {
          st.on('data', (c: Buffer) => {
            b += c;
          });
          st.on('end', () => resolve({ status: Number(h[':status']), code: JSON.parse(b).error.code }));
        });
        st.on('error', reject);
        // written as the flow window allows; a refused stream is reset, the rest never goes
        st.write(Buffer.alloc(Math.min(bytes, 65_536)));
        if (bytes > 65_536) st.write(Buffer.alloc(bytes - 65_536), () => {});
      });
    const over = wire2.MAX_MESSAGE_BYTES + 1;
    expect(await post({ 'content-length': over }, 1000)).toEqual({
      status: 413,
      code: 'payload-too-large',
    });
    expect(await post({}, over + 1)).toEqual({ status: 413, code: 'payload-too-large' });
    // the session carries on: a garbage message is the codec's refusal, not a dead connection
    const bad = await new Promise<number>((resolve, reject) => {
      const st = s.request({ ':method': 'POST', ':path': wire2.WIRE2_PATH, 'content-length': 3 });
      st.on('response', (h) => {
        st.resume();
        resolve(Number(h[':status']));
      });
      st.on('error', reject);
      st.end(Buffer.from([1, 2, 3]));
    });
    expect(bad).toBe(400);
  });
});
