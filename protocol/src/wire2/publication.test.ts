import { describe, expect, it } from 'vitest';
import { sha256Hex } from '../bytes.js';
import { generateSigningKeyPair } from '../keys.js';
import { encodeUlid, ulidFromBytes, ulidToBytes } from '../ulid.js';
import { decodeMessage, encodeMessage, verifyMessage } from './message.js';
import { manifestOfPublication, type PublicationManifest, publicationBody } from './publication.js';

const hub = await generateSigningKeyPair();
/** What the caller's synchronous sha256 answers (Node's, at the agent and relays): the test's file's. */
let bundleSha = '';
const digest = (b: Uint8Array) =>
  b.length === bundle.length && b.every((x, i) => x === bundle[i]) ? bundleSha : 'not the file';
const id = encodeUlid(1_764_460_800_000, new Uint8Array(10).fill(7));
const older = encodeUlid(1_764_400_000_000, new Uint8Array(10).fill(3));
const bundle = new Uint8Array(598).map((_, i) => (i * 31) % 251);
bundleSha = await sha256Hex(bundle);

describe('ULIDs as 16 bytes', () => {
  it('round-trips a canonical ULID and refuses other text', () => {
    const b = ulidToBytes(id);
    expect(b).toHaveLength(16);
    expect(ulidFromBytes(b as Uint8Array)).toBe(id);
    expect(ulidToBytes('01ARZ3NDEKTSV4RRFFQ69G5FAV')).not.toBeNull();
    expect(ulidToBytes(id.toLowerCase())).toBeNull();
    expect(ulidToBytes('pub-1')).toBeNull();
    expect(ulidToBytes('81ARZ3NDEKTSV4RRFFQ69G5FAV')).toBeNull(); // over 128 bits
  });
});

describe('the compact publication manifest (decision 505)', () => {
  const inlined: PublicationManifest = {
    publicationId: id,
    name: 'infra',
    fileKind: 'git',
    sha256: '',
    size: bundle.length,
    expiresAt: 1_767_052_800_123,
    inline: bundle,
  };

  it('carries an inline file in 114 bytes of framing and signature, and reads back as the v1 manifest', async () => {
    const body = publicationBody({ ...inlined, sha256: await sha256Hex(bundle) });
    expect(body?.sha256).toBeUndefined();
    const bytes = await encodeMessage(
      { kind: 'publication', from: 0, to: 0xdeadbeef, seq: 1, body: body as NonNullable<typeof body> },
      hub.privateKey,
    );
    // 11 header (the site's 4-byte id), 18 id, 7 name, 2 kind, 6 expiry, 4 the file's heads, 66 signature
    expect(bytes.length - bundle.length).toBe(114);
    const d = decodeMessage(bytes);
    if (!d.ok) throw new Error(d.error.message);
    expect(d.value.kind).toBe('publication');
    expect(await verifyMessage(d.value, hub.publicKey)).toBe(true);
    const m = manifestOfPublication(d.value.body as NonNullable<typeof body>, digest);
    expect(m).toEqual({
      sha256: await sha256Hex(bundle),
      size: 598,
      name: 'infra',
      fileKind: 'git',
      expiresAt: 1_767_052_801_000, // rounded up to the second: never before the hub said
      bundleId: id,
      inline: bundle,
    });
  });

  it('names a fetched file by sha256 and size, and what it supersedes', async () => {
    const sha256 = await sha256Hex('a large file');
    const body = publicationBody({
      ...inlined,
      inline: undefined,
      sha256,
      size: 12_000_000,
      supersedes: [older],
    } as PublicationManifest);
    const m = manifestOfPublication(body as NonNullable<typeof body>, digest);
    expect(m).toMatchObject({ sha256, size: 12_000_000, bundleId: id, supersedes: [older] });
    expect(m.inline).toBeUndefined();
  });

  it('has no compact form for an id that is not a ULID (v1 carries it)', () => {
    expect(publicationBody({ ...inlined, publicationId: 'pub-1' })).toBeNull();
    expect(publicationBody({ ...inlined, supersedes: ['old-1'] })).toBeNull();
  });

  it('refuses a body with both the file and a sha256, or neither, or a torn supersedes list', async () => {
    const body = publicationBody({ ...inlined, sha256: await sha256Hex(bundle) });
    const base = { kind: 'publication' as const, from: 0, to: 1, seq: 1 };
    const refused = async (b: object) =>
      expect(() => encodeMessage({ ...base, body: b } as never, hub.privateKey)).rejects.toThrow(
        /publication/,
      );
    await refused({ ...body, sha256: new Uint8Array(32), size: 598 });
    await refused({ ...body, inline: undefined });
    await refused({ ...body, supersedes: new Uint8Array(17) });
    await refused({ ...body, name: 'x'.repeat(256) });
  });
});
