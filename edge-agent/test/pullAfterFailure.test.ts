import { join } from 'node:path';
import { cryptoRandomBytes, encodeUlid, generateSigningKeyPair } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import type { DownlinkPage, Uplink, UplinkResult } from '../src/ports/Uplink.js';
import { tempDir } from './helpers/storeFixtures.js';

/** An upstream that refuses its next pull, then answers every pull at once; it notes each pull's hold. */
function upstream(url: string) {
  const waits: number[] = [];
  let refuse = true;
  const up: Uplink = {
    url,
    probe: async () => ({ ok: true, value: undefined }),
    postBundles: async () => ({ ok: true, value: [] }),
    uploadBlob: async () => ({ ok: true, value: undefined }),
    async pullDownlink(_site, after, hold): Promise<UplinkResult<DownlinkPage>> {
      waits.push(hold?.waitS ?? -1);
      if (refuse) {
        refuse = false;
        return {
          ok: false,
          error: 'HTTP 401 unauthorized: the token was revoked',
          retryable: true,
          status: 401,
        };
      }
      return { ok: true, value: { bundles: [], cursor: after ?? '0', held: true, heldS: 30 } };
    },
  };
  return { up, waits };
}

describe('a held pull after its upstream failed', () => {
  it('goes unheld once, so status says the upstream is back at once rather than when a held pull ends', async () => {
    const keys = await generateSigningKeyPair();
    let now = Date.parse('2026-11-30T06:00:00Z');
    const { ledger: store } = openSqliteLedger({
      path: join(tempDir(), 'agent.sqlite'),
      site: 'ship-7',
      agent: 'a1',
      now: () => now,
    });
    const a = upstream('http://relay-a');
    const b = upstream('http://relay-b');
    const engine = new SyncEngine({
      site: 'ship-7',
      agent: 'a1',
      store,
      uplinks: [a.up, b.up],
      privateKey: keys.privateKey,
      hubPublicKey: keys.publicKey,
      allowsCell: () => true,
      onPlanRequest: () => {},
      newBundleId: () => encodeUlid(now, cryptoRandomBytes(10)),
      now: () => now,
      log: { info: () => {}, warn: () => {} },
    });
    const down = () =>
      store
        .status()
        .upstreams.filter((u) => u.consecutiveFailures > 0)
        .map((u) => u.url);

    // the rotation: both upstreams refuse a held pull (a revoked token), each named as a refusal
    const refused = await engine.pullOnce({ waitS: 30 });
    expect(refused.errors).toEqual([]);
    expect(refused.refusals).toEqual([
      { upstream: 'http://relay-a', reason: 'unauthorized: the token was revoked' },
      { upstream: 'http://relay-b', reason: 'unauthorized: the token was revoked' },
    ]);
    expect(down()).toEqual(['http://relay-a', 'http://relay-b']);
    // the next pull to each is answered at once: the new token works, and status says so now
    now += 1_000;
    await engine.pullOnce({ waitS: 30 });
    expect([a.waits[1], b.waits[1]]).toEqual([0, 0]);
    expect(down()).toEqual([]);
    // and from then on held again
    now += 1_000;
    await engine.pullOnce({ waitS: 30 });
    expect([a.waits[2], b.waits[2]]).toEqual([30, 30]);
    // a pull without a hold stays one
    await engine.pullOnce();
    expect(a.waits[3]).toBe(-1);
  });
});
