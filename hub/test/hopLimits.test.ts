import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { makeBundle } from '@driftline/hop/testing';
import { BATCH_CONTENT_TYPE, CURSOR_HEADER, encodeBatch } from '@driftline/protocol';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/adapters/http/credentials.js';
import { storePath } from '../src/app.js';
import { enrol } from '../src/core/enrolment.js';
import { AgentSim } from './agentSim.js';
import { startHub, type TestHub } from './hubFixture.js';
import { addTestUser } from './users.js';

const hubs: TestHub[] = [];
afterEach(async () => {
  for (const h of hubs.splice(0)) await h.close();
});
const start = async (extra: object = {}) => {
  const h = await startHub(extra);
  hubs.push(h);
  return h;
};

async function publish(h: TestHub, site: string, text: string) {
  const r = await h.hub.publisher.publish(Readable.from([Buffer.from(text)]), {
    sites: [site],
    name: `${site}.txt`,
    fileKind: 'config',
  });
  if (!r.ok) throw new Error(r.message);
  return createHash('sha256').update(text).digest('hex');
}

describe('the hub serves blobs to a peer only for its own sites', () => {
  it("answers 404 to a relay asking for a file published to another relay's site, and 200 to its own", async () => {
    const h = await start();
    await h.hub.store.commit({
      peers: [
        { tokenSha256: sha256Hex('relay-7'), name: 'ground-7', sites: ['ship-7'] },
        { tokenSha256: sha256Hex('relay-8'), name: 'ground-8', sites: ['ship-8'] },
      ],
    });
    const sha = await publish(h, 'ship-7', 'config for ship-7 only');
    const get = (token: string) =>
      fetch(`${h.hopUrl}/v1/blobs/${sha}`, { headers: { authorization: `Bearer ${token}` } });
    const own = await get('relay-7');
    expect(own.status).toBe(200);
    expect(await own.text()).toBe('config for ship-7 only');
    const other = await get('relay-8');
    expect(other.status).toBe(404);
    expect((await other.json()).error.code).toBe('not-found');
    // a peer for every site (`*`) reads it too
    expect((await get('relay-token')).status).toBe(200);
  });
});

describe("the hub's disk cap (storage.maxBytes)", () => {
  it('refuses a tus upload that would pass the cap with 507 and a code, and stores nothing', async () => {
    const h = await start({ storage: { maxBytes: 4 * 1024 * 1024 } });
    const r = await fetch(`${h.hopUrl}/v1/uploads`, {
      method: 'POST',
      headers: {
        ...h.relay,
        'tus-resumable': '1.0.0',
        'upload-length': String(8 * 1024 * 1024),
        'upload-metadata': `sha256 ${Buffer.from('a'.repeat(64)).toString('base64')}`,
      },
    });
    expect(r.status).toBe(507);
    expect((await r.json()).error.code).toBe('insufficient-storage');
  });

  it('refuses a bundle batch with 507 once the data directory is over the cap', async () => {
    const h = await start({ storage: { maxBytes: 16 * 1024 * 1024 } });
    writeFileSync(join(h.dir, 'filler'), Buffer.alloc(17 * 1024 * 1024));
    h.clock.advance(10_000); // past the walk's cache
    const before = await h.hub.store.listRuns({
      site: 'ship-7',
      environment: 'prod',
      component: 'net',
      limit: 10,
    });
    const r = await fetch(`${h.hopUrl}/v1/bundles`, {
      method: 'POST',
      headers: { ...h.relay, 'content-type': BATCH_CONTENT_TYPE },
      body: encodeBatch([new Uint8Array(64)]) as BodyInit,
    });
    expect(r.status).toBe(507);
    expect((await r.json()).error.code).toBe('insufficient-storage');
    const after = await h.hub.store.listRuns({
      site: 'ship-7',
      environment: 'prod',
      component: 'net',
      limit: 10,
    });
    expect(after).toEqual(before);
  });
});

describe('bundles refused because their site is not the peer’s are counted', () => {
  it('shows them in hub_bundles_refused_total{reason="foreign-site"}', async () => {
    const h = await start();
    await h.hub.store.commit({
      peers: [{ tokenSha256: sha256Hex('relay-8'), name: 'ground-8', sites: ['ship-8'] }],
    });
    const b = await makeBundle();
    const r = await fetch(`${h.hopUrl}/v1/bundles`, {
      method: 'POST',
      headers: { authorization: 'Bearer relay-8', 'content-type': BATCH_CONTENT_TYPE },
      body: encodeBatch([b.bytes]) as BodyInit,
    });
    expect(r.status).toBe(200);
    expect((await r.json()).receipts[0].code).toBe('forbidden');
    const viewer = await addTestUser(h.hub.store, 'prometheus', ['viewer']);
    const metrics = await (
      await fetch(`${h.url}/metrics`, { headers: { authorization: viewer.authorization } })
    ).text();
    expect(metrics).toMatch(/hub_bundles_refused_total\{reason="foreign-site"\} 1/);
  });
});

describe('every refusal carries a code', () => {
  it('answers a method the hop API does not serve with 405 and a code, also beside the people side', async () => {
    const h = await start();
    for (const method of ['DELETE', 'PUT', 'PATCH']) {
      const r = await fetch(`${h.hopUrl}/v1/bundles?for=ship-7`, { method });
      expect(r.status, method).toBe(405);
      expect((await r.json()).error.code, method).toBe('method-not-allowed');
    }
  });
});

describe('the hop side when the store is busy or the request only asks for headers', () => {
  it('answers 503 with Retry-After, not 500, while another process holds the store’s write lock', async () => {
    const h = await start();
    const agent = await AgentSim.create('ship-7', 'a2', h.clock);
    const e = await enrol(
      h.hub.store,
      { site: 'ship-7', agent: 'a2', key: await agent.publicKeyText() },
      h.clock.now(),
    );
    if (!e.ok) throw new Error(e.error);
    agent.plan('prod', 'dns', 'clean');
    const other = new Database(storePath(h.dir));
    other.exec('BEGIN IMMEDIATE');
    try {
      const r = await fetch(`${h.hopUrl}/v1/bundles`, {
        method: 'POST',
        headers: { ...h.relay, 'content-type': BATCH_CONTENT_TYPE },
        body: encodeBatch([await agent.delta()]) as BodyInit,
      });
      expect(r.status).toBe(503);
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect((await r.json()).error.code).toBe('unavailable');
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }
  }, 60_000);

  it('answers HEAD of a blob with 200 and its length, and HEAD of the downlink without handing anything out', async () => {
    const h = await start();
    const sha = await publish(h, 'ship-7', 'twelve bytes');
    const head = await fetch(`${h.hopUrl}/v1/blobs/${sha}`, { method: 'HEAD', headers: h.relay });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('12');
    expect(head.headers.get('etag')).toBe(`"${sha}"`);
    const op = await addTestUser(h.hub.store, 'otto', ['operator']);
    const created = await fetch(`${h.url}/api/plan-requests`, {
      method: 'POST',
      headers: { authorization: op.authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ site: 'ship-7', environment: 'prod', component: 'net' }),
    });
    expect(created.status).toBe(201);
    const { requestId } = (await created.json()) as { requestId: string };
    const state = async () =>
      (
        (await (await fetch(`${h.url}/api/plan-requests/${requestId}`, { headers: op })).json()) as {
          state: string;
        }
      ).state;
    const dl = await fetch(`${h.hopUrl}/v1/bundles?for=ship-7`, { method: 'HEAD', headers: h.relay });
    expect(dl.status).toBe(200);
    expect(await state()).toBe('pending');
    const get = await fetch(`${h.hopUrl}/v1/bundles?for=ship-7`, { headers: h.relay });
    expect(get.status).toBe(200);
    expect(get.headers.get(CURSOR_HEADER)).toBeTruthy();
    expect(await state()).toBe('delivered');
  });
});
