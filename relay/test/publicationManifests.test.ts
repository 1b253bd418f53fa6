import { randomBytes } from 'node:crypto';
import {
  type BlobManifest,
  type BundleHeader,
  encodeBundle,
  encodeUlid,
  generateSigningKeyPair,
} from '@driftline/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { announcedBlobs } from '../src/core/publications/publicationFetch.js';
import { startRelay, startTerminal, until, upstreamOf } from './helpers.js';
import { cleanup, MB, runCleanup, sha256 } from './publicationFixtures.js';

afterEach(runCleanup);

describe('publications: manifests on the downlink, and end to end in process', () => {
  async function manifest(data: Buffer, source: 'hub' | { site: string }, key: CryptoKey) {
    const header = {
      id: encodeUlid(Date.now(), randomBytes(10)),
      kind: 'blob',
      source,
      destination: { site: 'ship-7' },
      created: Date.now(),
      lifetimeS: 3600,
      priority: 'bulk',
    } as unknown as BundleHeader & { kind: 'blob' };
    const m: BlobManifest = {
      sha256: sha256(data) as BlobManifest['sha256'],
      size: data.length,
      contentType: 'application/octet-stream',
      name: 'mirror.zip',
      fileKind: 'provider-mirror',
      bundleId: 'b1',
      expiresAt: Date.now() + 3_600_000,
    };
    return encodeBundle(header, m, key);
  }

  it("carries the publication id (the manifest's bundleId) and what it supersedes from a hub manifest", async () => {
    const { privateKey } = await generateSigningKeyPair();
    const header = {
      id: encodeUlid(1, randomBytes(10)),
      kind: 'blob',
      source: 'hub',
      destination: { site: 'ship-7' },
      created: 1,
      lifetimeS: 3600,
      priority: 'bulk',
    } as unknown as BundleHeader & { kind: 'blob' };
    const m: BlobManifest = {
      sha256: 'e'.repeat(64) as BlobManifest['sha256'],
      size: 1,
      contentType: 'application/octet-stream',
      name: 'cfg',
      fileKind: 'config',
      bundleId: 'b2',
      supersedes: ['b1'],
      expiresAt: 9,
    };
    const bytes = await encodeBundle(header, m, privateKey);
    expect(announcedBlobs('ship-7', [{ kind: 'blob', bytes, expiresAt: 1 } as never])).toEqual([
      {
        sha256: m.sha256,
        size: 1,
        name: 'cfg',
        site: 'ship-7',
        expiresAt: 9,
        publicationId: 'b2',
        supersedes: ['b1'],
      },
    ]);
  });

  it('notes only hub-sourced blob manifests from the downlink', async () => {
    const { privateKey } = await generateSigningKeyPair();
    const data = randomBytes(10);
    const fromHub = await manifest(data, 'hub', privateKey);
    const fromSite = await manifest(data, { site: 'ship-9' }, privateKey);
    const got = announcedBlobs('ship-7', [
      { kind: 'blob', bytes: fromHub, expiresAt: 1 } as never,
      { kind: 'blob', bytes: fromSite, expiresAt: 1 } as never,
    ]);
    expect(got).toEqual([
      expect.objectContaining({ sha256: sha256(data), size: 10, name: 'mirror.zip', site: 'ship-7' }),
    ]);
  });

  it('fetches an announced blob from its upstream once and serves it to its site with Range', async () => {
    const term = await startTerminal();
    cleanup.push(() => term.hop.close());
    const data = randomBytes(2 * MB + 7);
    const sha = sha256(data);
    term.backend.blobData.set(sha, { bytes: data, metadata: {}, mtimeMs: 0 });
    const { privateKey } = await generateSigningKeyPair();
    term.backend.enqueueDownlink('ship-7', await manifest(data, 'hub', privateKey));
    const r = await startRelay(
      { sites: ['ship-7'], publications: { intervalMs: 50, chunkBytes: 512 * 1024 } },
      [upstreamOf('hub', term.url, term.token)],
    );
    cleanup.push(() => r.relay.stop());
    const token = r.relay.tokens.add('ship-7', ['ship-7']);
    await until(() => r.relay.publicationCache.list()[0]?.state === 'held', 10_000, 'the blob to be held');
    const res = await fetch(`${r.url}/v1/blobs/${sha}`, {
      headers: { authorization: `Bearer ${token}`, range: `bytes=${MB}-` },
    });
    expect(res.status).toBe(206);
    expect(Buffer.from(await res.arrayBuffer()).equals(data.subarray(MB))).toBe(true);
  });
});
