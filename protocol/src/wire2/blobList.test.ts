import { describe, expect, it } from 'vitest';
import { PLAN_DETAIL_CONTENT_TYPE } from '../agentDoc.js';
import { BlobAnnouncementSchema } from '../bundle.js';
import { generateSigningKeyPair } from '../keys.js';
import { encodeUlid } from '../ulid.js';
import { type BlobListEntry, decodeBlobList, encodeBlobList } from './blobList.js';
import { cborEncodeValue } from './cbor.js';
import { decodeMessage, encodeMessage } from './message.js';

const runId = encodeUlid(1_764_460_800_000, new Uint8Array(10).fill(9));
const detail: BlobListEntry = {
  sha256: '9f'.repeat(32),
  size: 18_734,
  contentType: PLAN_DETAIL_CONTENT_TYPE,
  runId,
};

describe('blob announcements in binary (decision 510)', () => {
  it('reads back what it wrote: the plan detail as type 0, any other type as text, a run id or none', () => {
    const other = { sha256: '01'.repeat(32), size: 0, contentType: 'application/json' };
    const bytes = encodeBlobList([detail, other]);
    if (!bytes) throw new Error('no binary form');
    const back = decodeBlobList(bytes);
    expect(back).toEqual({ ok: true, value: [detail, other] });
    // what the hub reads them by: v1's announcement schema
    for (const e of back.ok ? back.value : []) expect(BlobAnnouncementSchema.safeParse(e).success).toBe(true);
  });

  it('is under a third of the JSON it replaces for a plan detail', () => {
    const bytes = encodeBlobList([detail]) as Uint8Array;
    const json = new TextEncoder().encode(JSON.stringify([detail]));
    expect(bytes.length).toBe(1 + 1 + 34 + 3 + 1 + 17);
    expect(json.length).toBeGreaterThan(3 * bytes.length);
  });

  it('has no binary form for a digest or run id it cannot write exactly, so the push sends the JSON', () => {
    expect(encodeBlobList([{ ...detail, sha256: '9F'.repeat(32) }])).toBeNull();
    expect(encodeBlobList([{ ...detail, runId: runId.toLowerCase() }])).toBeNull();
    expect(encodeBlobList([{ ...detail, size: -1 }])).toBeNull();
    // a type the schema takes but the list does not (empty): JSON, not a push the hub refuses
    expect(encodeBlobList([{ ...detail, contentType: '' }])).toBeNull();
  });

  it('refuses a list that is torn, mistyped or followed by bytes, naming what is wrong', () => {
    const whole = encodeBlobList([detail]) as Uint8Array;
    const cases: [Uint8Array, RegExp][] = [
      [whole.subarray(0, whole.length - 3), /not CBOR/],
      [Uint8Array.of(...whole, 0), /1 bytes after it/],
      [cborEncodeValue(7), /not an array/],
      [cborEncodeValue([[new Uint8Array(31), 1, 0]]), /entry 0 has no 32-byte sha256/],
      [cborEncodeValue([[new Uint8Array(32), 1]]), /entry 0 is not/],
      [cborEncodeValue([[new Uint8Array(32), 1, 3]]), /names no content type/],
      [cborEncodeValue([[new Uint8Array(32), 1, 'x'.repeat(101)]]), /names no content type/],
      [cborEncodeValue([[new Uint8Array(32), 1, 0, new Uint8Array(15)]]), /run id that is not 16 bytes/],
      [cborEncodeValue([[[[1]]]]), /not CBOR/], // nested deeper than an entry
    ];
    for (const [bytes, why] of cases) {
      const r = decodeBlobList(bytes);
      expect(r.ok ? 'read' : r.reason).toMatch(why);
    }
  });

  it('rides a push as field 9, never beside field 7', async () => {
    const keys = await generateSigningKeyPair();
    const blobList = encodeBlobList([detail]) as Uint8Array;
    const header = { kind: 'push' as const, from: 7, to: 0, seq: 1 };
    const good = decodeMessage(
      await encodeMessage(
        { ...header, body: { epoch: 1, changes: Uint8Array.of(1), blobList } },
        keys.privateKey,
      ),
    );
    expect(good.ok && (good.value.body as { blobList?: Uint8Array }).blobList).toEqual(blobList);
    // neither written nor read: one message, one form of its announcements
    await expect(
      encodeMessage(
        {
          ...header,
          body: { epoch: 1, changes: Uint8Array.of(1), blobs: Uint8Array.of(0x5b, 0x5d), blobList },
        },
        keys.privateKey,
      ),
    ).rejects.toThrow(/blobs twice/);
  });

  it("names dz1 for changes only: a heartbeat's gaps stay brotli or raw", async () => {
    const keys = await generateSigningKeyPair();
    const header = { kind: 'push' as const, from: 7, to: 0, seq: 1 };
    const dz = decodeMessage(
      await encodeMessage(
        { ...header, body: { epoch: 1, changes: Uint8Array.of(1), changesEncoding: 'dz1' } },
        keys.privateKey,
      ),
    );
    expect(dz.ok && (dz.value.body as { changesEncoding?: string }).changesEncoding).toBe('dz1');
    const heartbeat = { list: new Uint8Array(4), start: 1, runs: Uint8Array.of(1), gaps: new Uint8Array(0) };
    await expect(
      encodeMessage(
        { ...header, body: { epoch: 1, heartbeat: { ...heartbeat, gapsEncoding: 'dz1' as never } } },
        keys.privateKey,
      ),
    ).rejects.toThrow(/field 9 \(gapsEncoding\) names no known encoding \(2\)/);
  });
});
