import { join } from 'node:path';
import { cryptoRandomBytes, encodeUlid, generateSigningKeyPair } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import type { Uplink, UplinkResult } from '../src/ports/Uplink.js';
import { runId, summary, tempDir } from './helpers/storeFixtures.js';

/** An upstream whose push answers go as `post` says; it answers every pull at once with nothing. */
function upstream(url: string, post: () => UplinkResult<[]>) {
  let posts = 0;
  const up: Uplink = {
    url,
    probe: async () => ({ ok: true, value: undefined }),
    postBundles: async () => {
      posts++;
      return post();
    },
    uploadBlob: async () => ({ ok: true, value: undefined }),
    pullDownlink: async (_site, after) => ({ ok: true, value: { bundles: [], cursor: after ?? '0' } }),
  };
  return { up, posts: () => posts };
}

describe('a push whose answer did not begin in time (decision 515)', () => {
  it('counts as its upstream’s stall, as a stalled downlink answer does, and the push goes on to the next', async () => {
    const keys = await generateSigningKeyPair();
    const now = Date.parse('2026-11-30T06:00:00Z');
    const { ledger: store } = openSqliteLedger({
      path: join(tempDir(), 'agent.sqlite'),
      site: 'ship-7',
      agent: 'a1',
      now: () => now,
    });
    store.recordMany([{ runId: runId(), summary: summary({}) }]);
    const hung = upstream('http://relay-hung', () => ({
      ok: false,
      error: 'no answer began within 4.9 s (round trip 0.2 s, stallS 4 s, 600 B at 128 B/s): cut as stalled',
      retryable: true,
      stalled: true,
    }));
    const refusing = upstream('http://relay-down', () => ({
      ok: false,
      error: 'ECONNREFUSED',
      retryable: true,
    }));
    const honest = upstream('http://hub', () => ({ ok: true, value: [] }));
    const engine = new SyncEngine({
      site: 'ship-7',
      agent: 'a1',
      store,
      uplinks: [hung.up, refusing.up, honest.up],
      privateKey: keys.privateKey,
      hubPublicKey: keys.publicKey,
      allowsCell: () => true,
      onPlanRequest: () => {},
      newBundleId: () => encodeUlid(now, cryptoRandomBytes(10)),
      now: () => now,
      log: { info: () => {}, warn: () => {} },
    });
    const out = await engine.pushOnce();
    expect(out).toMatchObject({ kind: 'pushed', upstream: 'http://hub' });
    const s = store.status();
    const of = (url: string) => s.upstreams.find((u) => u.url === url);
    expect(of('http://relay-hung')).toMatchObject({ stalls: 1, lastStallAt: now, consecutiveFailures: 1 });
    // a refused connection is a failure, not a stall
    expect(of('http://relay-down')).toMatchObject({ stalls: 0, lastStallAt: null, consecutiveFailures: 1 });
    expect(s.upstreamStalls).toBe(1);
    store.close();
  });
});
