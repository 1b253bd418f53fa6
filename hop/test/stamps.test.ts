import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  encodeBatch,
  generateSigningKeyPair,
  publicKeyToText,
  signBytes,
  stampBytes,
  verifyBytes,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { HopClient } from '../src/client/HopClient.js';
import {
  type Custody,
  createHopServer,
  type HopServer,
  MemoryHopBackend,
  type Peer,
  type SourceClocks,
} from '../src/index.js';
import { makeBundle } from '../src/testing.js';

let hop: HopServer | undefined;

/** Keeps the custody each batch came with. */
class Recording extends MemoryHopBackend {
  custody: Custody | undefined;
  override async accept(
    peer: Peer,
    bundles: readonly Uint8Array[],
    clocks?: SourceClocks,
    custody?: Custody,
  ) {
    this.custody = custody;
    return super.accept(peer, bundles, clocks);
  }
}
afterEach(() => hop?.close());

describe('stamped exchanges (decision 290)', () => {
  it('a server with a key signs every exchange it times; its client keeps the stamped times and sends custody', async () => {
    const kp = await generateSigningKeyPair();
    const publicKey = await publicKeyToText(kp.publicKey);
    const backend = new Recording({ name: 'relay-1' });
    backend.addToken('t', { name: 'ship-7', sites: ['ship-7'] });
    hop = createHopServer(backend, {
      uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-stamp-')) },
      stamp: { publicKey, sign: (d) => signBytes(kp.privateKey, d) },
    });
    const { url } = await hop.listen();
    const client = new HopClient({ url, token: 't' });
    expect(client.stampedExchange()).toBeNull();
    expect((await client.probe()).ok).toBe(true);
    const x = client.stampedExchange();
    expect(x?.by).toBe(publicKey);
    const [t0, t1, t2, t3] = x?.t ?? [0, 0, 0, 0];
    expect(t0 <= t3 && t1 <= t2).toBe(true);
    const sig = Buffer.from(x?.sig ?? '', 'base64url');
    expect(await verifyBytes(kp.publicKey, sig, stampBytes(t0, t1, t2))).toBe(true);
    // a time moved by a hop between no longer verifies
    expect(await verifyBytes(kp.publicKey, sig, stampBytes(t0, t1 + 1000, t2 + 1000))).toBe(false);

    const b = await makeBundle();
    const r = await client.postBatch(encodeBatch([b.bytes]), { custody: 'aaaa.bbbb,cccc.dddd' });
    expect(r.ok).toBe(true);
    expect(backend.custody?.records).toEqual(['aaaa.bbbb', 'cccc.dddd']);
    expect(backend.custody?.peerClock).not.toBeNull();
  });

  it('a server without a key times exchanges unsigned, as before', async () => {
    const backend = new MemoryHopBackend({ name: 'old' });
    backend.addToken('t', { name: 'ship-7', sites: ['ship-7'] });
    hop = createHopServer(backend, { uploads: { directory: mkdtempSync(join(tmpdir(), 'hop-stamp-')) } });
    const { url } = await hop.listen();
    const client = new HopClient({ url, token: 't' });
    expect((await client.probe()).ok).toBe(true);
    expect(client.clock()).not.toBeNull();
    expect(client.stampedExchange()).toBeNull();
  });
});
