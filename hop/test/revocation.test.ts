import { createHash } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { until } from '@driftline/protocol/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { HopClient } from '../src/client.js';
import { createHopServer, type HopServer, MemoryHopBackend } from '../src/index.js';
import { makeBundle } from '../src/testing.js';

/**
 * A token revoked while its held pull is open (docs/decisions/411-revocation-cuts-at-once.md): the pull
 * is answered 401 at the next check, and what is queued for the site afterwards never goes to it.
 */
const TOKEN = 'secret-token';
const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** The held pulls and tus PATCHes `hop` has open now. */
const heldOpen = async (hop: HopServer) => (await hop.metrics.heldOpen.get()).values[0]?.value;

/** A relay holding ship-7's pull for up to an hour, its tokens checked every `recheckMs`. */
async function heldPull(recheckMs: number) {
  const backend = new MemoryHopBackend({ name: 'relay-1', role: 'relay', maxHoldS: 3600 });
  backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
  const hop = createHopServer(backend, {
    uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-revoke-')) },
    revocationCheckMs: recheckMs,
  });
  const { url } = await hop.listen();
  closers.push(() => hop.close());
  const client = new HopClient({ url, token: TOKEN });
  closers.push(async () => client.abort());
  // a first pull learns the longest hold; the second is held
  await client.pullDownlink('ship-7', undefined, undefined, { waitS: 0 });
  const held = client.pullDownlink('ship-7', undefined, undefined, { waitS: 3600 });
  await until(async () => (await heldOpen(hop)) === 1, 'the second pull held open at the server');
  const control = async () =>
    backend.enqueueDownlink(
      'ship-7',
      (await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never)).bytes,
    );
  return { backend, hop, client, held, control };
}

describe('revocation during a held pull', () => {
  it('answers the held pull 401 at once, and the control queued after the revoke never reaches it', async () => {
    const { backend, hop, client, held, control } = await heldPull(50);
    backend.removeToken(TOKEN);
    const r = await held;
    await control();
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.status, r.code]).toEqual([401, 'unauthorized']);
    // closed by the check (not the hour's hold), and counted
    expect((await hop.metrics.revokedClosed.get()).values[0]?.value).toBe(1);
    const again = await client.pullDownlink('ship-7', undefined);
    expect(again.ok).toBe(false);
  });

  it('counts a held pull woken between two checks and answered 401 by its last look as closed by the revoke', async () => {
    // the check never comes in this test: what wakes the pull is the control queued after the revoke
    const { backend, hop, held, control } = await heldPull(3_600_000);
    backend.removeToken(TOKEN);
    await control();
    const r = await held;
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.status, r.code]).toEqual([401, 'unauthorized']);
    expect((await hop.metrics.revokedClosed.get()).values[0]?.value).toBe(1);
  });
});

describe('revocation during a tus upload', () => {
  it('cuts a PATCH in progress at once; the bytes that came before stay', async () => {
    const backend = new MemoryHopBackend({ name: 'relay-1', role: 'relay' });
    backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
    const hop = createHopServer(backend, {
      uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-revoke-tus-')) },
      revocationCheckMs: 50,
    });
    const { url } = await hop.listen();
    closers.push(() => hop.close());
    const data = Buffer.alloc(1024 * 1024, 1);
    const auth = { authorization: `Bearer ${TOKEN}`, 'tus-resumable': '1.0.0' };
    const sha = createHash('sha256').update(data).digest('hex');
    const created = await fetch(`${url}/v1/uploads/`, {
      method: 'POST',
      headers: {
        ...auth,
        'upload-length': String(data.length),
        'upload-metadata': `sha256 ${Buffer.from(sha).toString('base64')}`,
      },
    });
    expect(created.status).toBe(201);
    const at = new URL(created.headers.get('location') ?? '', url);
    // a PATCH that sends a quarter of the blob and then waits, as over a slow link
    const closed = new Promise<string>((resolve) => {
      const req = request(at, {
        method: 'PATCH',
        headers: {
          ...auth,
          'upload-offset': '0',
          'content-type': 'application/offset+octet-stream',
          'content-length': String(data.length),
        },
      });
      req.on('response', (res) => resolve(`answered ${res.statusCode}`));
      req.on('error', (e) => resolve(`closed: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      req.write(data.subarray(0, data.length / 4));
    });
    await until(async () => (await heldOpen(hop)) === 1, 'the PATCH open at the server');
    backend.removeToken(TOKEN);
    expect(await closed).toMatch(/^closed: /);
    expect((await hop.metrics.revokedClosed.get()).values[0]?.value).toBe(1);
  });
});
