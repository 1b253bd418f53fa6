import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HopClient } from '../src/client.js';
import { createHopServer, MemoryHopBackend } from '../src/index.js';
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

describe('revocation during a held pull', () => {
  it('answers the held pull 401 at once, and the control queued after the revoke never reaches it', async () => {
    const backend = new MemoryHopBackend({ name: 'relay-1', role: 'relay', maxHoldS: 3600 });
    backend.addToken(TOKEN, { name: 'ship-7', sites: ['ship-7'] });
    const hop = createHopServer(backend, {
      uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-revoke-')) },
      revocationCheckMs: 50,
    });
    const { url } = await hop.listen();
    closers.push(() => hop.close());
    const client = new HopClient({ url, token: TOKEN });
    closers.push(async () => client.abort());
    // a first pull learns the longest hold; the second is held
    await client.pullDownlink('ship-7', undefined, undefined, { waitS: 0 });
    const held = client.pullDownlink('ship-7', undefined, undefined, { waitS: 3600 });
    await new Promise((r) => setTimeout(r, 200));
    expect((await hop.metrics.heldOpen.get()).values[0]?.value).toBe(1);
    backend.removeToken(TOKEN);
    const r = await held;
    backend.enqueueDownlink(
      'ship-7',
      (await makeBundle({ kind: 'ack', source: 'hub', destination: { site: 'ship-7' } } as never)).bytes,
    );
    expect(r.ok).toBe(false);
    if (!r.ok) expect([r.status, r.code]).toEqual([401, 'unauthorized']);
    // closed by the check (not the hour's hold), and counted
    expect((await hop.metrics.revokedClosed.get()).values[0]?.value).toBe(1);
    const again = await client.pullDownlink('ship-7', undefined);
    expect(again.ok).toBe(false);
  });
});
