import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type Custody,
  createHopServer,
  type HopServer,
  MemoryHopBackend,
  type Peer,
  type SourceClocks,
} from '@driftline/hop';
import { makeBundle } from '@driftline/hop/testing';
import {
  bundleRef,
  encodeBatch,
  generateSigningKeyPair,
  publicKeyToText,
  signBytes,
  verifyChain,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpUplink } from '../src/adapters/http/HttpUplink.js';

/** A relay-like hop server that keeps the custody of each batch. */
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

const noStorage = {
  findAllUploads: async () => [],
  findUploadsByFingerprint: async () => [],
  removeUpload: async () => {},
  addUpload: async () => '',
};

let hop: HopServer | undefined;
afterEach(() => hop?.close());

describe("the agent's custody record (decision 290)", () => {
  it('signs its exchange with a stamping upstream and the bundles it posts; the chain verifies', async () => {
    const relay = await generateSigningKeyPair();
    const relayKey = await publicKeyToText(relay.publicKey);
    const agent = await generateSigningKeyPair();
    const backend = new Recording({ name: 'relay-1', role: 'relay' });
    backend.addToken('t', { name: 'ship-7', sites: ['ship-7'] });
    hop = createHopServer(backend, {
      uploads: { directory: mkdtempSync(join(tmpdir(), 'agent-custody-')) },
      stamp: { publicKey: relayKey, sign: (d) => signBytes(relay.privateKey, d) },
    });
    const { url } = await hop.listen();
    const uplink = new HttpUplink({
      url,
      token: 't',
      urlStorage: noStorage,
      source: 'ship-7/a1',
      signKey: agent.privateKey,
    });
    const b = await makeBundle();
    // the first push has no stamped exchange yet: a record that claims no term (the hub bounds as before)
    expect((await uplink.postBundles(encodeBatch([b.bytes]))).ok).toBe(true);
    expect(backend.custody?.records).toHaveLength(1);
    const first = await verifyChain({
      records: backend.custody?.records ?? [],
      source: 'ship-7/a1',
      refs: [await bundleRef(b.bytes)],
      agentKey: agent.publicKey,
      relayKey: async () => relay.publicKey,
      postedBy: relayKey,
    });
    expect(first).toEqual({ kind: 'absent' });
    const c = await makeBundle();
    expect((await uplink.postBundles(encodeBatch([c.bytes]))).ok).toBe(true);
    expect(backend.custody?.records).toHaveLength(1);
    const chain = await verifyChain({
      records: backend.custody?.records ?? [],
      source: 'ship-7/a1',
      refs: [await bundleRef(c.bytes)],
      agentKey: agent.publicKey,
      relayKey: async (k) => (k === relayKey ? relay.publicKey : null),
      postedBy: relayKey,
    });
    expect(chain.kind).toBe('signed');
    // one machine, one clock: the signed estimate holds 0 within its uncertainty
    if (chain.kind === 'signed')
      expect(Math.abs(chain.estimate.offsetMs)).toBeLessThanOrEqual(chain.estimate.uncertaintyMs);
  });

  it('sends no record to an upstream that times exchanges without stamps (an older relay)', async () => {
    const agent = await generateSigningKeyPair();
    const backend = new Recording({ name: 'old-relay', role: 'relay' });
    backend.addToken('t', { name: 'ship-7', sites: ['ship-7'] });
    hop = createHopServer(backend, { uploads: { directory: mkdtempSync(join(tmpdir(), 'agent-custody-')) } });
    const { url } = await hop.listen();
    const uplink = new HttpUplink({
      url,
      token: 't',
      urlStorage: noStorage,
      source: 'ship-7/a1',
      signKey: agent.privateKey,
    });
    expect((await uplink.postBundles(encodeBatch([(await makeBundle()).bytes]))).ok).toBe(true);
    expect(backend.custody?.records).toHaveLength(1); // the first push, before any exchange
    expect((await uplink.postBundles(encodeBatch([(await makeBundle()).bytes]))).ok).toBe(true);
    expect(backend.custody?.records).toEqual([]);
  });
});
