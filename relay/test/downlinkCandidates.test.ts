import { CURSOR_HEADER, decodeBatch } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { makeBundle, startRelay, startTerminal, until, upstreamOf } from './helpers.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe('downlink through a relay with two upstreams, one of which alters copies (issue 29)', () => {
  it('pulls from both, holds and serves both copies under the genuine id, counts the conflict once, and serves the same bytes once', async () => {
    const liar = await startTerminal();
    const honest = await startTerminal();
    closers.push(
      () => liar.hop.close(),
      () => honest.hop.close(),
    );
    const genuine = await makeBundle({
      kind: 'ack',
      source: 'hub',
      destination: { site: 'ship-7' as never },
      priority: 'control',
    });
    const altered = Uint8Array.from(genuine.bytes);
    altered[altered.length - 1] = (altered.at(-1) ?? 0) ^ 0xff; // a byte of the hub's signature
    liar.backend.enqueueDownlink('ship-7', altered);
    honest.backend.enqueueDownlink('ship-7', genuine.bytes);
    const { relay, url } = await startRelay({ sites: ['ship-7'] }, [
      upstreamOf('liar', liar.url, liar.token),
      upstreamOf('honest', honest.url, honest.token),
    ]);
    closers.push(() => relay.stop());
    const token = relay.tokens.add('ship-7', ['ship-7']);
    const pull = async (after = '') => {
      const r = await fetch(`${url}/v1/bundles?for=ship-7${after ? `&after=${after}` : ''}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const batch = decodeBatch(new Uint8Array(await r.arrayBuffer()));
      return { bundles: batch.ok ? batch.value : [], cursor: r.headers.get(CURSOR_HEADER) ?? '' };
    };
    let got: Awaited<ReturnType<typeof pull>> = { bundles: [], cursor: '' };
    await until(
      async () => {
        got = await pull();
        return got.bundles.length === 2;
      },
      10_000,
      'both copies at the relay',
    );
    expect(got.bundles.map((b) => Buffer.from(b).toString('hex')).sort()).toEqual(
      [altered, genuine.bytes].map((b) => Buffer.from(b).toString('hex')).sort(),
    );
    const metrics = await (
      await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    ).text();
    expect(metrics).toMatch(
      /driftline_relay_downlink_conflicts_total\{upstream="(liar|honest)",site="ship-7"\} 1/,
    );
    // Released; then both upstreams serve the same bytes again (a replay, a failed-over hub): nothing
    // is served twice, only what is new.
    await pull(got.cursor);
    honest.backend.enqueueDownlink('ship-7', genuine.bytes);
    liar.backend.enqueueDownlink('ship-7', altered);
    const marker = await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' as never } });
    honest.backend.enqueueDownlink('ship-7', marker.bytes);
    let next: Awaited<ReturnType<typeof pull>> = { bundles: [], cursor: '' };
    await until(
      async () => {
        next = await pull(got.cursor);
        return next.bundles.length > 0;
      },
      10_000,
      'the next downlink',
    );
    expect(next.bundles.map((b) => Buffer.from(b).equals(Buffer.from(marker.bytes)))).toEqual([true]);
  });
});
