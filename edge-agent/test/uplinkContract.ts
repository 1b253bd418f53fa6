import { createHash, randomBytes } from 'node:crypto';
import { MemoryHopBackend } from '@driftline/hop';
import { makeBundle } from '@driftline/hop/testing';
import { encodeBatch, TRUSTED_CLOCK, WireError } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { Uplink } from '../src/ports/Uplink.js';

/** How an uplink is made: its token, and the source it names for its bundles' clock. */
export interface UplinkOptions {
  token: string;
  source?: string;
  trustedClock?: boolean;
}

/** A link to `terminal`: `connect` answers an uplink; `cut` takes the link down. */
export interface UplinkLink {
  connect(opts: UplinkOptions): Uplink;
  cut(): Promise<void>;
  done(): Promise<void>;
}

/** Builds a link to a terminal hop node (the contract's `MemoryHopBackend`, named `hub`). */
export type UplinkSetup = (terminal: MemoryHopBackend) => Promise<UplinkLink>;

const AGENT = 'ship-7-token';

function blobOf(size: number) {
  const data = randomBytes(size);
  const sha256 = createHash('sha256').update(data).digest('hex');
  return { sha256, size, contentType: 'application/json', runId: '01HZZZZZZZZZZZZZZZZZZZZZZZ', data };
}

const notRetryable = (status: number) => ({ ok: false, retryable: false, status, error: expect.any(String) });

/**
 * What every `Uplink` adapter promises (ports/Uplink.ts), against a terminal node standing in for a
 * relay or the hub: `HttpUplink` through a real hop server on port 0, and `MemoryUplink` straight to
 * the backend, both run it. Resuming a cut upload is HTTP's own (httpUplink.test.ts).
 */
export function runUplinkContract(name: string, setup: UplinkSetup): void {
  describe(`Uplink contract: ${name}`, () => {
    const links: UplinkLink[] = [];
    afterEach(async () => {
      for (const l of links.splice(0)) await l.done();
    });
    const open = async (opts: Partial<UplinkOptions> = {}) => {
      const terminal = new MemoryHopBackend({ name: 'hub', role: 'hub' });
      terminal.addToken(AGENT, { name: 'ship-7', sites: ['ship-7'] });
      const link = await setup(terminal);
      links.push(link);
      return { terminal, link, up: link.connect({ token: AGENT, ...opts }) };
    };

    it('names its upstream by a url, and probes it: ok while up and ready, retryable while not ready', async () => {
      const { terminal, up } = await open();
      expect(up.url).toMatch(/\S/);
      expect(await up.probe()).toEqual({ ok: true, value: undefined });
      terminal.ready = false;
      expect(await up.probe()).toMatchObject({ ok: false, retryable: true, status: 503 });
    });

    it('posts a framed batch and answers one receipt per bundle, in order: stored, then duplicate', async () => {
      const { terminal, up } = await open();
      const [a, b] = [await makeBundle(), await makeBundle()];
      const r = await up.postBundles(encodeBatch([a.bytes, b.bytes, a.bytes]));
      expect(r).toEqual({
        ok: true,
        value: [
          { bundleId: a.id, index: 0, status: 'stored', by: 'hub' },
          { bundleId: b.id, index: 1, status: 'stored', by: 'hub' },
          { bundleId: a.id, index: 2, status: 'duplicate', by: 'hub' },
        ],
      });
      expect([...terminal.stored.keys()]).toEqual([a.id, b.id]);
    });

    it('carries a bundle the terminal cannot decode to its rejected receipt; refuses what is not a batch', async () => {
      const { terminal, up } = await open();
      const good = await makeBundle();
      const r = await up.postBundles(encodeBatch([new Uint8Array([1, 2, 3]), good.bytes]));
      if (!r.ok) throw new Error(r.error);
      expect(r.value.map((x) => [x.index, x.status])).toEqual([
        [0, 'rejected'],
        [1, 'stored'],
      ]);
      expect(await up.postBundles(new Uint8Array([1, 2, 3]))).toMatchObject(notRetryable(400));
      expect(terminal.stored.size).toBe(1);
    });

    it('names this agent as its bundles’ source: its clock arrives near zero, or trusted', async () => {
      const measured = await open({ source: 'ship-7/a1' });
      await measured.up.probe(); // one exchange, so the link's own clock is known
      expect((await measured.up.postBundles(encodeBatch([(await makeBundle()).bytes]))).ok).toBe(true);
      const own = measured.terminal.lastClocks?.('ship-7/a1');
      expect(Math.abs(own?.offsetMs ?? Number.NaN)).toBeLessThanOrEqual(1_000); // one host: ~0
      expect(measured.terminal.lastClocks?.('ship-7/a2')).toBeNull();
      const trusted = await open({ source: 'ship-7/a1', trustedClock: true });
      expect((await trusted.up.postBundles(encodeBatch([(await makeBundle()).bytes]))).ok).toBe(true);
      expect(trusted.terminal.lastClocks?.('ship-7/a1')).toEqual(TRUSTED_CLOCK);
    });

    it('pulls its site’s downlink, the cursor going back as `after`', async () => {
      const { terminal, up } = await open();
      const down = [await makeBundle(), await makeBundle()];
      for (const b of down) terminal.enqueueDownlink('ship-7', b.bytes);
      terminal.enqueueDownlink('ship-8', (await makeBundle()).bytes);
      const first = await up.pullDownlink('ship-7', undefined);
      if (!first.ok) throw new Error(first.error);
      expect(first.value.bundles).toEqual(down.map((b) => b.bytes));
      const later = await makeBundle();
      terminal.enqueueDownlink('ship-7', later.bytes);
      const rest = await up.pullDownlink('ship-7', first.value.cursor);
      if (!rest.ok) throw new Error(rest.error);
      expect(rest.value.bundles).toEqual([later.bytes]);
      expect(await up.pullDownlink('ship-7', rest.value.cursor)).toEqual({
        ok: true,
        value: { bundles: [], cursor: rest.value.cursor },
      });
    });

    it('uploads a blob whole with its content type and run id, reporting progress to the end', async () => {
      const { terminal, up } = await open();
      const blob = blobOf(256 * 1024);
      const seen: [number, number][] = [];
      expect(await up.uploadBlob(blob, (sent, total) => seen.push([sent, total]))).toEqual({
        ok: true,
        value: undefined,
      });
      const got = terminal.blobData.get(blob.sha256);
      expect(got?.bytes.equals(blob.data)).toBe(true);
      expect(got?.metadata).toMatchObject({ contentType: 'application/json', runId: blob.runId });
      expect(seen.at(-1)).toEqual([blob.size, blob.size]);
      expect(await up.uploadBlob(blob)).toEqual({ ok: true, value: undefined });
    });

    it('refuses, not retryable, a blob whose bytes do not hash to its name; keeps nothing of it', async () => {
      const { terminal, up } = await open();
      const blob = { ...blobOf(1024), sha256: 'a'.repeat(64) };
      expect(await up.uploadBlob(blob)).toMatchObject(notRetryable(460));
      expect(terminal.blobData.size).toBe(0);
    });

    it('stops an upload its caller aborts, as a retryable failure', async () => {
      const { terminal, up } = await open();
      const stop = new AbortController();
      stop.abort();
      expect(await up.uploadBlob(blobOf(1024), undefined, stop.signal)).toMatchObject({
        ok: false,
        retryable: true,
      });
      expect(terminal.blobData.size).toBe(0);
    });

    it('fails, not retryable, for an unknown token or a site its token does not cover', async () => {
      const { link, up } = await open();
      const stranger = link.connect({ token: 'no-such-token' });
      expect(await stranger.postBundles(encodeBatch([(await makeBundle()).bytes]))).toMatchObject(
        notRetryable(401),
      );
      expect(await stranger.pullDownlink('ship-7', undefined)).toMatchObject(notRetryable(401));
      expect(await stranger.uploadBlob(blobOf(1024))).toMatchObject(notRetryable(401));
      expect(await up.pullDownlink('ship-8', undefined)).toMatchObject(notRetryable(403));
    });

    it('fails retryable when the terminal cannot take custody, and when the link is down', async () => {
      const { terminal, link, up } = await open();
      const batch = encodeBatch([(await makeBundle()).bytes]);
      terminal.failWith = new WireError('insufficient-storage', 'disk full');
      expect(await up.postBundles(batch)).toMatchObject({ ok: false, retryable: true, status: 507 });
      expect(await up.uploadBlob(blobOf(1024))).toMatchObject({ ok: false, retryable: true, status: 507 });
      terminal.failWith = new Error('a bug');
      expect(await up.postBundles(batch)).toMatchObject({ ok: false, retryable: true, status: 500 });
      terminal.failWith = null;
      await link.cut();
      const down = { ok: false, retryable: true, error: expect.stringMatching(/unreachable/) };
      expect(await up.probe()).toMatchObject(down);
      expect(await up.postBundles(batch)).toMatchObject(down);
      expect(await up.pullDownlink('ship-7', undefined)).toMatchObject(down);
      expect(await up.uploadBlob(blobOf(1024))).toMatchObject({ ok: false, retryable: true });
      expect(terminal.stored.size).toBe(0);
      expect(terminal.blobData.size).toBe(0);
    });
  });
}
