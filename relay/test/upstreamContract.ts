import { MemoryHopBackend } from '@driftline/hop';
import { TRUSTED_CLOCK, WireError } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { Upstream } from '../src/ports/Upstream.js';
import { makeBundle } from './helpers.js';

/** A link to `terminal`: `connect` answers an upstream using `token`; `cut` takes the link down. */
export interface UpstreamLink {
  connect(token: string): Upstream;
  cut(): Promise<void>;
  done(): Promise<void>;
}

/** Builds a link to a terminal hop node (the contract's `MemoryHopBackend`, named `hub`). */
export type UpstreamSetup = (terminal: MemoryHopBackend) => Promise<UpstreamLink>;

const RELAY = 'relay-token';
const SHIP = 'ship-7-token';

/**
 * What every `Upstream` adapter promises (ports/Upstream.ts), against a terminal node: `HttpUpstream`
 * through a real hop server on port 0, and `MemoryUpstream` straight to the backend, both run it.
 * Byte counts differ by design (compressed on the wire, raw in memory) and are only checked positive.
 */
export function runUpstreamContract(name: string, setup: UpstreamSetup): void {
  describe(`Upstream contract: ${name}`, () => {
    const links: UpstreamLink[] = [];
    afterEach(async () => {
      for (const l of links.splice(0)) await l.done();
    });
    const open = async () => {
      const terminal = new MemoryHopBackend({ name: 'hub', role: 'hub' });
      terminal.addToken(RELAY, { name: 'relay-a', sites: ['*'] });
      terminal.addToken(SHIP, { name: 'ship-7-lan', sites: ['ship-7'] });
      const link = await setup(terminal);
      links.push(link);
      return { terminal, link, up: link.connect(RELAY) };
    };

    it('posts a batch and answers one receipt per bundle, in order: stored, then duplicate', async () => {
      const { terminal, up } = await open();
      const [a, b] = [await makeBundle(), await makeBundle()];
      const r = await up.postBatch([a.bytes, b.bytes, a.bytes]);
      if (!r.ok) throw new Error(r.message);
      expect(r.receipts).toEqual([
        { bundleId: a.id, index: 0, status: 'stored', by: 'hub' },
        { bundleId: b.id, index: 1, status: 'stored', by: 'hub' },
        { bundleId: a.id, index: 2, status: 'duplicate', by: 'hub' },
      ]);
      expect(r.bytes).toBeGreaterThan(0);
      expect([...terminal.stored.keys()]).toEqual([a.id, b.id]);
    });

    it('carries a bundle the terminal cannot decode to its rejected receipt, the rest stored', async () => {
      const { up } = await open();
      const good = await makeBundle();
      const r = await up.postBatch([new Uint8Array([1, 2, 3]), good.bytes]);
      if (!r.ok) throw new Error(r.message);
      expect(r.receipts.map((x) => [x.index, x.status])).toEqual([
        [0, 'rejected'],
        [1, 'stored'],
      ]);
      expect(r.receipts[0]).toMatchObject({ bundleId: null, code: expect.any(String) });
    });

    it('sends source clocks: a trusted one stays trusted, a measured one arrives composed, others none', async () => {
      const { terminal, up } = await open();
      await up.pullDownlink('ship-7', undefined, 10); // one exchange, so the link's own clock is known
      const clocks = new Map([
        ['ship-7/a1', { offsetMs: 5_000, uncertaintyMs: 40 }],
        ['ship-7/a2', TRUSTED_CLOCK],
      ]);
      const r = await up.postBatch([(await makeBundle()).bytes], clocks);
      expect(r.ok).toBe(true);
      const seen = terminal.lastClocks;
      expect(seen?.('ship-7/a2')).toEqual(TRUSTED_CLOCK);
      expect(seen?.('ship-8/a1')).toBeNull();
      const a1 = seen?.('ship-7/a1');
      expect(Math.abs((a1?.offsetMs ?? 0) - 5_000)).toBeLessThan(1_000); // one host: the hop adds ~0
      expect(a1?.uncertaintyMs).toBeGreaterThanOrEqual(40);
    });

    it('pulls a site’s downlink in pages, the cursor going back as `after`', async () => {
      const { terminal, up } = await open();
      const down = [await makeBundle(), await makeBundle(), await makeBundle()];
      for (const b of down) terminal.enqueueDownlink('ship-7', b.bytes);
      const first = await up.pullDownlink('ship-7', undefined, 2);
      if (!first.ok) throw new Error(first.message);
      expect(first.bundles).toEqual(down.slice(0, 2).map((b) => b.bytes));
      expect(first.bytes).toBeGreaterThan(0);
      const rest = await up.pullDownlink('ship-7', first.cursor, 10);
      if (!rest.ok) throw new Error(rest.message);
      expect(rest.bundles).toEqual([down[2]?.bytes]);
      expect(await up.pullDownlink('ship-7', rest.cursor, 10)).toMatchObject({
        ok: true,
        bundles: [],
        cursor: rest.cursor,
      });
      expect(await up.pullDownlink('ship-8', undefined, 10)).toMatchObject({ ok: true, bundles: [] });
    });

    it('fails, not retryable, for an unknown token, a site its peer does not act for, or a bad query', async () => {
      const { link } = await open();
      const stranger = link.connect('no-such-token');
      const notRetryable = (code: string) => ({
        ok: false,
        code,
        retryable: false,
        message: expect.any(String),
      });
      expect(await stranger.postBatch([(await makeBundle()).bytes])).toMatchObject(
        notRetryable('unauthorized'),
      );
      expect(await stranger.pullDownlink('ship-7', undefined, 10)).toMatchObject(
        notRetryable('unauthorized'),
      );
      const ship = link.connect(SHIP);
      expect(await ship.pullDownlink('ship-7', undefined, 10)).toMatchObject({ ok: true });
      expect(await ship.pullDownlink('ship-8', undefined, 10)).toMatchObject(notRetryable('forbidden'));
      expect(await ship.pullDownlink('ship-7', 'not-a-cursor', 10)).toMatchObject(notRetryable('bad-query'));
    });

    it('fails retryable when the terminal cannot take custody, by its code, and when the link is down', async () => {
      const { terminal, link, up } = await open();
      const b = await makeBundle();
      terminal.failWith = new WireError('insufficient-storage', 'disk full');
      expect(await up.postBatch([b.bytes])).toMatchObject({
        ok: false,
        code: 'insufficient-storage',
        retryable: true,
      });
      terminal.failWith = new Error('a bug');
      expect(await up.postBatch([b.bytes])).toMatchObject({ ok: false, code: 'internal', retryable: true });
      terminal.failWith = null;
      await link.cut();
      expect(await up.postBatch([b.bytes])).toMatchObject({
        ok: false,
        code: 'unreachable',
        retryable: true,
      });
      expect(await up.pullDownlink('ship-7', undefined, 1)).toMatchObject({
        ok: false,
        code: 'unreachable',
        retryable: true,
      });
      expect(terminal.stored.size).toBe(0);
    });
  });
}
