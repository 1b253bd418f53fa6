import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHopServer } from '@driftline/hop';
import { HopClient } from '@driftline/hop/client';
import { afterEach, describe, expect, it } from 'vitest';
import { FileBlobs } from '../src/adapters/fs/FileBlobs.js';
import { HubHopBackend, sha256Hex } from '../src/adapters/hop/HubHopBackend.js';
import { DownlinkBell, ringOnDownlink } from '../src/core/downlinkBell.js';
import { makeHarness } from './harness.js';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0).reverse()) await c();
});

/** A bell that says when a watch is held (the test waits on that event, not on time). */
class WatchedBell extends DownlinkBell {
  private heldNow: (() => void) | null = null;
  held(): Promise<void> {
    return new Promise((resolve) => {
      this.heldNow = resolve;
    });
  }
  override listen(...args: Parameters<DownlinkBell['listen']>) {
    const ticket = super.listen(...args);
    return {
      ...ticket,
      wait: (...w: Parameters<typeof ticket.wait>) => {
        const p = ticket.wait(...w);
        this.heldNow?.();
        return p;
      },
    };
  }
}

async function hub(withBell = true) {
  const h = await makeHarness('sqlite');
  cleanup.push(() => h.close());
  const bell = new WatchedBell();
  if (withBell) ringOnDownlink(h.store, bell);
  const backend = new HubHopBackend({
    store: h.store,
    ingest: h.ingest,
    replicas: h.replicas,
    blobs: new FileBlobs(mkdtempSync(join(tmpdir(), 'hub-blobs-'))),
    clock: h.clock,
    version: 'test',
    ...(withBell ? { bell } : {}),
  });
  await h.store.commit({
    peers: [{ tokenSha256: sha256Hex('relay-token'), name: 'relay-1', sites: ['ship-7', 'ship-9'] }],
  });
  const hop = createHopServer(backend, { uploads: { directory: mkdtempSync(join(tmpdir(), 'hub-up-')) } });
  cleanup.push(() => hop.close());
  const { url } = await hop.listen();
  const client = new HopClient({ url, token: 'relay-token', timeoutMs: 30_000 });
  const control = (site: string, n: number) => ({
    site,
    agent: null,
    kind: 'control' as const,
    docId: null,
    requestId: null,
    bytes: new Uint8Array([n]),
    expiresAt: h.clock.now() + 3_600_000,
  });
  return { h, url, client, bell, control };
}

const watch = (url: string, body: unknown, token = 'relay-token', type = 'application/json') =>
  fetch(`${url}/v1/downlink/watch`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': type },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

describe("a relay's one watch over all its sites' downlink (decision 620)", () => {
  it('states how long it holds one, and answers at once with the sites that have downlink past the cursor named, never a foreign one', async () => {
    const { h, client, control } = await hub();
    expect((await client.peerInfo()).ok && (await client.peerInfo())).toMatchObject({
      value: { name: 'relay-1', watchS: 3600 },
    });
    await h.store.commit({ downlink: [control('ship-7', 1), control('ship-9', 2), control('ship-8', 3)] });
    const heads = await h.store.downlinkHeads(['ship-7', 'ship-9', 'ship-8', 'ship-404']);
    const cursor7 = String(heads.get('ship-7'));
    const r = await client.watchDownlink(
      new Map([
        ['ship-7', cursor7],
        ['ship-9', '0'],
        ['ship-8', '0'],
      ]),
      600,
    );
    expect(r).toEqual({ ok: true, value: { sites: ['ship-9'], refused: ['ship-8'] } });
  });

  it('holds while no site has news and answers the site whose downlink is committed, as soon as it is', async () => {
    const { h, client, bell, control } = await hub();
    const held = bell.held();
    const answer = client.watchDownlink(
      new Map([
        ['ship-7', '0'],
        ['ship-9', '0'],
      ]),
      600,
    );
    await held;
    await h.store.commit({ downlink: [control('ship-9', 1)] });
    expect(await answer).toEqual({ ok: true, value: { sites: ['ship-9'], refused: [] } });
  });

  it('is refused without a peer token, and a body that is not a watch is refused naming what is wrong', async () => {
    const { url } = await hub();
    expect((await watch(url, { wait: 0, sites: {} }, 'nope')).status).toBe(401);
    expect((await watch(url, 'wait=1', 'relay-token', 'text/plain')).status).toBe(415);
    const notJson = await watch(url, '{"wait":');
    expect(notJson.status).toBe(400);
    expect(await notJson.text()).toContain('the watch is not JSON');
    const bad = await watch(url, { wait: -1, sites: { 'ship-7': 'x' } });
    expect(bad.status).toBe(400);
    expect(await bad.text()).toContain('the watch does not match DownlinkWatch');
    const huge = await watch(url, { wait: 0, sites: {}, pad: 'x'.repeat(3 * 1024 * 1024) });
    expect(huge.status).toBe(413);
  });

  it('is a 404 at a hub wired without a bell, which states no watchS: relays pull site by site there', async () => {
    const { client } = await hub(false);
    const info = await client.peerInfo();
    expect(info.ok && info.value.watchS).toBeUndefined();
    const r = await client.watchDownlink(new Map([['ship-7', '0']]), 10);
    expect(r.ok === false && r.status).toBe(404);
  });
});
