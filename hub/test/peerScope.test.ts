import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHopServer, type HopServer } from '@driftline/hop';
import { BATCH_CONTENT_TYPE, encodeBatch, type Receipt } from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { FileBlobs } from '../src/adapters/fs/FileBlobs.js';
import { HubHopBackend, sha256Hex } from '../src/adapters/hop/HubHopBackend.js';
import { AgentSim } from './agentSim.js';
import { type Harness, makeHarness } from './harness.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

async function hub(): Promise<{ h: Harness; hop: HopServer; url: string; foreign: string[] }> {
  const h = await makeHarness('sqlite');
  cleanup.push(() => h.close());
  const foreign: string[] = [];
  const backend = new HubHopBackend({
    store: h.store,
    ingest: h.ingest,
    replicas: h.replicas,
    blobs: new FileBlobs(mkdtempSync(join(tmpdir(), 'hub-blobs-'))),
    clock: h.clock,
    version: 'test',
    onForeignSite: (peer, n) => foreign.push(`${peer}:${n}`),
  });
  await h.store.commit({
    peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['ship-7'] }],
  });
  const hop = createHopServer(backend, { uploads: { directory: mkdtempSync(join(tmpdir(), 'hub-up-')) } });
  cleanup.push(() => hop.close());
  const { url } = await hop.listen();
  return { h, hop, url, foreign };
}

describe('the hub takes bundles from a relay peer only for the sites its token names', () => {
  it("refuses an enrolled agent's bundle that arrives through a relay whose token does not cover its site", async () => {
    const { h, url, foreign } = await hub();
    const seven = await AgentSim.create('ship-7', 'a1', h.clock);
    const eight = await AgentSim.create('ship-8', 'a1', h.clock);
    await h.enrol(seven);
    await h.enrol(eight);
    seven.plan('prod', 'net');
    eight.plan('prod', 'net');
    const r = await fetch(`${url}/v1/bundles`, {
      method: 'POST',
      headers: { authorization: 'Bearer relay-token', 'content-type': BATCH_CONTENT_TYPE },
      body: encodeBatch([await eight.delta(), await seven.delta()]) as BodyInit,
    });
    expect(r.status).toBe(200);
    const receipts = (await r.json()).receipts as Receipt[];
    expect(receipts.map((x) => [x.index, x.status, x.code])).toEqual([
      [0, 'rejected', 'forbidden'],
      [1, 'stored', undefined],
    ]);
    expect(foreign).toEqual(['relay-1:1']);
    expect(await h.store.getSite('ship-8')).toBeNull();
    expect((await h.store.getSite('ship-7'))?.upstream).toBe('relay-1');
  });
});
