import { createHash } from 'node:crypto';
import { BATCH_CONTENT_TYPE, CURSOR_HEADER, decodeBatch, encodeBatch } from '@driftline/protocol';
import { Upload } from 'tus-js-client';
import { afterEach, describe, expect, it } from 'vitest';
import { makeBundle, startRelay, startTerminal, until, upstreamOf } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

async function chain() {
  const term = await startTerminal();
  closers.push(() => term.hop.close());
  const b = await startRelay({ name: 'relay-b', sites: ['ship-7'] }, [
    upstreamOf('hub', term.url, term.token),
  ]);
  closers.push(() => b.relay.stop());
  const bToken = b.relay.tokens.add('relay-a', ['ship-7']);
  const a = await startRelay({ name: 'relay-a', sites: ['ship-7'] }, [upstreamOf('relay-b', b.url, bToken)]);
  closers.push(() => a.relay.stop());
  const agentToken = a.relay.tokens.add('ship-7', ['ship-7']);
  return { term, a, b, agentToken };
}

const post = (url: string, token: string, bundles: Uint8Array[]) =>
  fetch(`${url}/v1/bundles`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': BATCH_CONTENT_TYPE },
    body: encodeBatch(bundles) as BodyInit,
  });

describe('relay chain: relay-a → relay-b → terminal', () => {
  it('carries every receipted bundle to the terminal exactly once', async () => {
    const { term, a, agentToken } = await chain();
    const bundles = await Promise.all(Array.from({ length: 30 }, () => makeBundle()));
    const r = await post(
      a.url,
      agentToken,
      bundles.map((b) => b.bytes),
    );
    const receipts = (await r.json()).receipts;
    expect(
      receipts.every((x: { status: string; by: string }) => x.status === 'stored' && x.by === 'relay-a'),
    ).toBe(true);
    // a re-send after custody is a duplicate, not a second copy
    const again = await (await post(a.url, agentToken, [bundles[0]!.bytes])).json();
    expect(again.receipts[0].status).toBe('duplicate');
    await until(() => term.backend.stored.size === 30, 10_000, 'all bundles at the terminal');
    expect([...term.backend.arrivals.values()].every((n) => n === 1)).toBe(true);
  });

  it('brings the downlink of a served site down the chain and releases it on the next cursor', async () => {
    const { term, a, agentToken } = await chain();
    const ack = await makeBundle({
      kind: 'ack',
      source: 'hub',
      destination: { site: 'ship-7' as never },
      priority: 'control',
    });
    term.backend.enqueueDownlink('ship-7', ack.bytes);
    let cursor = '';
    let got: Uint8Array[] = [];
    await until(
      async () => {
        const r = await fetch(`${a.url}/v1/bundles?for=ship-7`, {
          headers: { authorization: `Bearer ${agentToken}` },
        });
        const batch = decodeBatch(new Uint8Array(await r.arrayBuffer()));
        cursor = r.headers.get(CURSOR_HEADER) ?? '';
        got = batch.ok ? batch.value : [];
        return got.length === 1;
      },
      10_000,
      'downlink at relay-a',
    );
    expect(Buffer.from(got[0]!).equals(Buffer.from(ack.bytes))).toBe(true);
    const next = await fetch(`${a.url}/v1/bundles?for=ship-7&after=${cursor}`, {
      headers: { authorization: `Bearer ${agentToken}` },
    });
    const b2 = decodeBatch(new Uint8Array(await next.arrayBuffer()));
    expect(b2.ok && b2.value.length).toBe(0);
    // released: the relay holds no downlink for the site any more
    expect(a.relay.custody.queueStats(Date.now()).filter((s) => s.dest === 'ship-7')).toEqual([]);
  });

  it('forwards a blob uploaded by tus up the chain, verified at each hop', async () => {
    const { term, a, b, agentToken } = await chain();
    term.backend.failWith = new Error('hub down'); // the blob waits at relay-b
    const data = Buffer.alloc(300_000, 7);
    const sha = createHash('sha256').update(data).digest('hex');
    await new Promise<void>((resolve, reject) => {
      const u = new Upload(data, {
        endpoint: `${a.url}/v1/uploads/`,
        headers: { authorization: `Bearer ${agentToken}` },
        metadata: { sha256: sha, contentType: 'application/json' },
        retryDelays: [],
        onSuccess: () => resolve(),
        onError: reject,
      });
      u.start();
    });
    await until(() => b.relay.custody.blobs.pending('hub', 10).length === 1, 10_000, 'blob at relay-b');
    // relay-b serves it with Range to the peer that uploaded it (relay-a) while it holds it
    const bToken = b.relay.tokens.add('relay-a', ['ship-7']);
    const part = await fetch(`${b.url}/v1/blobs/${sha}`, {
      headers: { authorization: `Bearer ${bToken}`, range: 'bytes=0-9' },
    });
    expect(part.status).toBe(206);
    // relay-a passed it on: custody holds nothing it has handed over
    await until(() => a.relay.custody.blobs.pending('relay-b', 10).length === 0, 10_000, 'relay-a done');
    const gone = await fetch(`${a.url}/v1/blobs/${sha}`, {
      headers: { authorization: `Bearer ${agentToken}` },
    });
    expect(gone.status).toBe(404);
    term.backend.failWith = null;
    await until(() => term.backend.blobData.has(sha), 10_000, 'blob at the terminal');
    expect(term.backend.blobData.get(sha)?.bytes.equals(data)).toBe(true);
  });

  it('fails over to the second upstream when the first is down', async () => {
    const term = await startTerminal();
    closers.push(() => term.hop.close());
    const a = await startRelay({ name: 'relay-a' }, [
      upstreamOf('dead', 'http://127.0.0.1:9', 'x'),
      upstreamOf('hub', term.url, term.token),
    ]);
    closers.push(() => a.relay.stop());
    const t = a.relay.tokens.add('ship-7', ['ship-7']);
    const b = await makeBundle();
    await post(a.url, t, [b.bytes]);
    await until(() => term.backend.stored.has(b.id), 10_000, 'bundle via the second upstream');
  });
});
