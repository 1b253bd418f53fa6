import { BATCH_CONTENT_TYPE, encodeBatch } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { makeBundle, startRelay, startTerminal, until, upstreamOf } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('disk full over HTTP', () => {
  it('answers 507 with nothing half-written, keeps every receipted bundle, and recovers once forwarding frees space', async () => {
    const term = await startTerminal();
    closers.push(() => term.hop.close());
    term.backend.failWith = new Error('upstream down'); // hold everything at the relay first
    const { relay, url } = await startRelay({ storage: { maxBytes: 200 * 1024 } }, [
      upstreamOf('hub', term.url, term.token),
    ]);
    closers.push(() => relay.stop());
    const token = relay.tokens.add('ship-7', ['ship-7']);
    const send = async () => {
      const batch = await Promise.all(Array.from({ length: 10 }, () => makeBundle()));
      const r = await fetch(`${url}/v1/bundles`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': BATCH_CONTENT_TYPE },
        body: encodeBatch(batch.map((b) => b.bytes)) as BodyInit,
      });
      return { r, ids: batch.map((b) => b.id) };
    };
    const receipted: string[] = [];
    let status = 200;
    for (let i = 0; i < 300 && status === 200; i++) {
      const { r, ids } = await send();
      status = r.status;
      const body = await r.json();
      if (r.status === 200) receipted.push(...ids);
      else expect(body.error.code).toBe('insufficient-storage');
    }
    expect(status).toBe(507);
    const held = relay.custody.queueStats(Date.now()).reduce((n, q) => n + q.count, 0);
    expect(held).toBe(receipted.length);
    term.backend.failWith = null;
    relay.poke();
    await until(() => receipted.every((id) => term.backend.stored.has(id)), 20_000, 'drain to the terminal');
    const { r } = await send();
    expect(r.status).toBe(200);
  });
});
