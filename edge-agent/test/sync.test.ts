import { createHash } from 'node:crypto';
import { join } from 'node:path';
import {
  asSiteId,
  cryptoRandomBytes,
  generateSigningKeyPair,
  monotonicUlid,
  type SigningKeyPair,
} from '@driftline/protocol';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';
import { openSqliteLedger } from '../src/adapters/sqlite/openSqliteLedger.js';
import { SqliteUrlStorage } from '../src/adapters/tus/SqliteUrlStorage.js';
import { SyncEngine } from '../src/core/sync/SyncEngine.js';
import { runId, summary, tempDir } from './helpers/storeFixtures.js';
import { TestHub } from './helpers/testHub.js';

let agentKeys: SigningKeyPair;
beforeAll(async () => {
  agentKeys = await generateSigningKeyPair();
});

const cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const newId = monotonicUlid(Date.now, cryptoRandomBytes);

async function setup(opts: { upstreams?: string[]; dir?: string; hub?: TestHub } = {}) {
  const hub = opts.hub ?? (await TestHub.start(agentKeys.publicKey));
  if (!opts.hub) cleanup.push(() => hub.close());
  const dir = opts.dir ?? tempDir();
  const { ledger: store, db } = openSqliteLedger({
    path: join(dir, 'agent.sqlite'),
    site: 'ship-7',
    agent: 'a1',
  });
  cleanup.push(() => store.close());
  const requests: string[] = [];
  const warnings: string[] = [];
  const uplinks = (opts.upstreams ?? [hub.url]).map(
    (url) =>
      new HttpUplink({
        url,
        token: 'agent-token',
        urlStorage: new SqliteUrlStorage(db),
        chunkSize: 64 * 1024,
      }),
  );
  const engine = new SyncEngine({
    site: 'ship-7',
    agent: 'a1',
    store,
    uplinks,
    privateKey: agentKeys.privateKey,
    hubPublicKey: hub.keys.publicKey,
    allowsCell: (env, comp) => env === 'prod' && comp === 'network',
    onPlanRequest: (r) => requests.push(r.requestId),
    newBundleId: newId,
    now: Date.now,
    log: { info: () => {}, warn: (_o, m) => warnings.push(m) },
  });
  return { hub, dir, store, engine, requests, warnings, uplinks };
}

function blobOf(text: string) {
  const bytes = new TextEncoder().encode(text);
  return {
    sha256: createHash('sha256').update(bytes).digest('hex'),
    bytes,
    contentType: 'application/octet-stream',
  };
}

describe('agent sync over the hop API', () => {
  it('pushes signed deltas, keeps them until the hub ack, then counts them acknowledged', async () => {
    const { hub, store, engine } = await setup();
    store.record({ runId: runId(), summary: summary({ component: 'network' }) });
    store.record({
      runId: runId(),
      summary: summary({ component: 'dns', status: 'failed', planHash: undefined }),
    });
    const pushed = await engine.pushOnce();
    expect(pushed.kind).toBe('pushed');
    if (pushed.kind === 'pushed') expect(pushed.receipts.map((r) => r.status)).toEqual(['stored']);
    expect(store.status().unackedRuns).toBe(2); // a receipt prunes nothing
    expect(await hub.processArrivals()).toBe(1);
    const pulled = await engine.pullOnce();
    expect(pulled.acks).toBe(1);
    expect(store.status().unackedRuns).toBe(0);
    expect(await engine.pushOnce()).toEqual({ kind: 'idle' });
    expect(hub.rejected).toEqual([]);
  });

  it('refuses acks not signed by the pinned hub key, so nothing is pruned on a forgery', async () => {
    const { hub, store, engine, warnings } = await setup();
    store.record({ runId: runId(), summary: summary() });
    const heads = store.pending()[0]!.heads;
    await engine.pushOnce();
    const forger = await generateSigningKeyPair();
    await hub.queueAck('ship-7/a1/epoch-1', heads, [], forger.privateKey); // the right heads, the wrong key
    const r = await engine.pullOnce();
    expect(r.refused).toBe(1);
    expect(r.acks).toBe(0);
    expect(warnings.join('\n')).toContain('not signed by the pinned hub key');
    expect(store.status().unackedRuns).toBe(1);
    await hub.queueAck('ship-7/a1/epoch-1', heads); // the genuine ack
    expect((await engine.pullOnce()).acks).toBe(1);
    expect(store.status().unackedRuns).toBe(0);
  });

  it('refuses an altered copy of a bundle it already took under the same id, and runs nothing twice', async () => {
    const { hub, engine, requests, warnings } = await setup();
    await hub.queuePlanRequest('prod', 'network', 'req-1');
    const peer = { name: 'ship-7', sites: [asSiteId('ship-7')] };
    const [genuine] = (await hub.backend.downlink(peer, { for: asSiteId('ship-7'), limit: 10 })).bundles;
    expect((await engine.pullOnce()).refused).toBe(0);
    expect(requests).toEqual(['req-1']);
    // The same bytes again (a second answer, decision 340): skipped without a word.
    hub.backend.enqueueDownlink('ship-7', (genuine as Uint8Array).slice());
    expect((await engine.pullOnce()).refused).toBe(0);
    // An altered copy under the genuine id, after the genuine one was taken (through another upstream,
    // say): refused and logged as altered, not skipped as a duplicate.
    const altered = (genuine as Uint8Array).slice();
    altered[altered.length - 80] = (altered[altered.length - 80] as number) ^ 0xff;
    hub.backend.enqueueDownlink('ship-7', altered);
    expect((await engine.pullOnce()).refused).toBe(1);
    expect(warnings.join('\n')).toContain('not signed by the pinned hub key');
    expect(requests).toEqual(['req-1']);
  });

  it('runs a plan request only for a cell the local config lists, once, and refuses the rest', async () => {
    const { hub, engine, requests, warnings } = await setup();
    await hub.queuePlanRequest('prod', 'network', 'req-1');
    await hub.queuePlanRequest('prod', 'database', 'req-2');
    const forger = await generateSigningKeyPair();
    await hub.queuePlanRequest('prod', 'network', 'req-3', forger.privateKey);
    const r = await engine.pullOnce();
    expect(requests).toEqual(['req-1']);
    expect(r.refused).toBe(2);
    expect(warnings.join('\n')).toMatch(/does not list this component/);
    // At-least-once downlink: the same request delivered again does not run twice.
    await hub.queuePlanRequest('prod', 'network', 'req-1');
    await engine.pullOnce();
    expect(requests).toEqual(['req-1']);
  });

  it('fails over to the next upstream and records why the first one failed', async () => {
    const { hub, store, engine } = await setup({ upstreams: ['http://127.0.0.1:9'] });
    void hub;
    store.record({ runId: runId(), summary: summary() });
    const r = await engine.pushOnce();
    expect(r.kind).toBe('unreachable');
    const st = store.status();
    expect(st.lastPush?.ok).toBe(false);
    expect(st.upstreams[0]?.consecutiveFailures).toBe(1);
    const two = await setup({ upstreams: ['http://127.0.0.1:9', hub.url], hub });
    two.store.record({ runId: runId(), summary: summary() });
    const ok = await two.engine.pushOnce();
    expect(ok.kind === 'pushed' && ok.upstream).toBe(hub.url);
  });

  it('a downlink pull tells status which upstream is down and which answers, with no push at all', async () => {
    const hub = await TestHub.start(agentKeys.publicKey);
    cleanup.push(() => hub.close());
    const two = await setup({ upstreams: ['http://127.0.0.1:9', hub.url], hub });
    const r = await two.engine.pullOnce();
    expect(r.upstream).toBe(hub.url);
    const [dead, live] = ['http://127.0.0.1:9', hub.url].map((u) =>
      two.store.status().upstreams.find((x) => x.url === u),
    );
    expect(dead?.consecutiveFailures).toBe(1);
    expect(dead?.lastError).toContain('unreachable');
    expect(live?.consecutiveFailures).toBe(0);
    expect(live?.lastOkAt).not.toBeNull();
  });

  it('pulls the downlink from every upstream that answers: one that eats it cannot shadow an honest one', async () => {
    // The first upstream answers every pull, with nothing (a hop that eats the site's downlink).
    const eater = await TestHub.start(agentKeys.publicKey);
    cleanup.push(() => eater.close());
    const hub = await TestHub.start(agentKeys.publicKey);
    cleanup.push(() => hub.close());
    const two = await setup({ upstreams: [eater.url, hub.url], hub });
    await hub.queuePlanRequest('prod', 'network', 'req-1');
    const r = await two.engine.pullOnce();
    expect(two.requests).toEqual(['req-1']);
    expect(r).toMatchObject({ upstream: eater.url, planRequests: 1, errors: [] });
    // The same request from both upstreams is acted on once; each upstream keeps its own cursor.
    await eater.queuePlanRequest('prod', 'network', 'req-2', hub.keys.privateKey);
    await hub.queuePlanRequest('prod', 'network', 'req-2');
    expect((await two.engine.pullOnce()).planRequests).toBe(1);
    expect(two.requests).toEqual(['req-1', 'req-2']);
    expect((await two.engine.pullOnce()).planRequests).toBe(0);
  });

  it('keeps pulling the answering upstream while another is down, and says which failed', async () => {
    const hub = await TestHub.start(agentKeys.publicKey);
    cleanup.push(() => hub.close());
    const two = await setup({ upstreams: [hub.url, 'http://127.0.0.1:9'], hub });
    await hub.queuePlanRequest('prod', 'network', 'req-1');
    const r = await two.engine.pullOnce();
    expect(r.upstream).toBe(hub.url);
    expect(r.planRequests).toBe(1);
    expect(r.errors.join('\n')).toContain('http://127.0.0.1:9');
  });

  it('probes before building a batch while idle since start: the document stays closed until an upstream answers', async () => {
    const { hub, store, engine } = await setup({ upstreams: ['http://127.0.0.1:9'] });
    store.updateFacts({ version: '0.1.0', cadenceS: { 'prod/network': 900 } });
    expect(store.documentOpen()).toBe(false);
    expect((await engine.pushOnce()).kind).toBe('unreachable');
    // Building the batch would have opened the document (compiling Automerge) for nothing.
    expect(store.documentOpen()).toBe(false);
    expect(store.status().upstreams[0]?.consecutiveFailures).toBe(1);
    const two = await setup({ upstreams: ['http://127.0.0.1:9', hub.url], hub });
    two.store.updateFacts({ version: '0.1.0', cadenceS: { 'prod/network': 900 } });
    const ok = await two.engine.pushOnce();
    expect(ok.kind === 'pushed' && ok.upstream).toBe(hub.url);
    expect(two.store.documentOpen()).toBe(true);
    expect(await hub.processArrivals()).toBe(1); // the facts, written just before the batch was built
    expect(await two.engine.pushOnce()).toEqual({ kind: 'idle' });
  });

  it('probes before building a batch while every upstream failed: results held stay held until one answers', async () => {
    const { store, engine } = await setup({ upstreams: ['http://127.0.0.1:9'] });
    const finishedAt = (s: number) => new Date(1_800_000_000_000 + s * 1000).toISOString();
    store.recordMany([{ runId: runId(), summary: summary({ finishedAt: finishedAt(0) }) }], {
      moreComing: true,
    });
    expect(store.storage.heldRuns()).toHaveLength(1);
    expect((await engine.pushOnce()).kind).toBe('unreachable'); // not known down yet: the batch was built
    expect(store.storage.heldRuns()).toHaveLength(0);
    const next = {
      runId: runId(),
      summary: summary({ finishedAt: finishedAt(1), planHash: 'b'.repeat(64) as never }),
    };
    store.recordMany([next], { moreComing: true });
    expect((await engine.pushOnce()).kind).toBe('unreachable');
    expect(store.storage.heldRuns().map((r) => r.runId)).toEqual([next.runId]);
    expect(store.status().upstreams[0]?.consecutiveFailures).toBe(2);
  });

  it('uploads detail blobs by tus; the hop server verifies their sha256', async () => {
    const { hub, store, engine } = await setup();
    const blob = blobOf('{"resources":[]}'.repeat(1000));
    store.record({ runId: runId(), summary: summary(), detail: blob });
    expect(await engine.uploadBlobsOnce()).toBe(1);
    expect(hub.backend.blobData.get(blob.sha256)?.bytes.equals(Buffer.from(blob.bytes))).toBe(true);
    expect(store.blobsToUpload()).toEqual([]);
  });

  it('resumes a half-done upload after an agent restart without re-sending acknowledged bytes', async () => {
    const hub = await TestHub.start(agentKeys.publicKey);
    cleanup.push(() => hub.close());
    const dir = tempDir();
    const blob = blobOf('x'.repeat(1024 * 1024) + Math.random());
    const first = await setup({ dir, hub });
    first.store.record({ runId: runId(), summary: summary(), detail: blob });
    const abort = new AbortController();
    let sentBeforeAbort = 0;
    const r1 = await first.engine.uploadBlobsOnce((_sha, sent) => {
      sentBeforeAbort = sent;
      if (sent >= 300 * 1024) abort.abort();
    }, abort.signal);
    expect(r1).toBe(0);
    first.store.close(); // the agent process goes away

    const second = await setup({ dir, hub }); // a new process opens the same store
    let firstReported = -1;
    const r2 = await second.engine.uploadBlobsOnce((_sha, sent) => {
      if (firstReported < 0) firstReported = sent;
    });
    expect(r2).toBe(1);
    expect(hub.backend.blobData.get(blob.sha256)?.bytes.length).toBe(blob.bytes.length);
    // The resumed upload started from the server's offset, not from zero.
    expect(sentBeforeAbort).toBeGreaterThanOrEqual(300 * 1024);
    expect(firstReported).toBeGreaterThanOrEqual(256 * 1024);
  });
});
