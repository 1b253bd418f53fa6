import { decodeBundle, decodePayload, generateSigningKeyPair, verifyBundle } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';

const H1 = '1'.repeat(64);
const H2 = '2'.repeat(64);

import { stepFixture } from '../../../test/ingestSteps.js';
import { ulidGen } from '../../ports/IdGen.js';
import { Rejections } from '../rejections.js';
import { AckSigner, DEFAULT_ACK_LIFETIME_S } from './acks.js';
import { answerOnDownlink } from './downlink.js';

describe('ingest steps: acks and the downlink', () => {
  it('builds one signed ack row whose lifetime is the bundle lifetime, ids in call order', async () => {
    const keys = await generateSigningKeyPair();
    let t = 1_000;
    const signer = new AckSigner({ ids: ulidGen({ now: () => t++ }), hubPrivateKey: keys.privateKey });
    const who = { site: 'ship-7', agent: 'a1' };
    const first = signer.row(who, 'ship-7/a1/epoch-1', [H1], ['b'.repeat(64)], 5_000);
    const second = signer.row(who, 'ship-7/a1/epoch-2', [H2], [], 5_000);
    await Promise.all([first.signed, second.signed]);
    expect(first.row).toMatchObject({
      kind: 'ack',
      docId: 'ship-7/a1/epoch-1',
      expiresAt: 5_000 + DEFAULT_ACK_LIFETIME_S * 1000,
    });
    const a = decodeBundle(first.row.bytes);
    const b = decodeBundle(second.row.bytes);
    if (!a.ok || !b.ok) throw new Error('ack does not decode');
    expect(await verifyBundle(a.value, keys.publicKey)).toBe(true);
    expect(a.value.header).toMatchObject({
      kind: 'ack',
      lifetimeS: DEFAULT_ACK_LIFETIME_S,
      priority: 'control',
    });
    expect(a.value.header.id < b.value.header.id).toBe(true);
    const p = decodePayload('ack', a.value.payload);
    expect(p.ok && p.value).toMatchObject({
      doc: 'ship-7/a1/epoch-1',
      heads: [H1],
      blobs: ['b'.repeat(64)],
    });
  });

  it('acks touched documents, not poisoned ones, and answers refusals', async () => {
    const f = await stepFixture();
    const keys = await generateSigningKeyPair();
    const ids = ulidGen(f.clock);
    const signer = new AckSigner({ ids, hubPrivateKey: keys.privateKey, ackLifetimeS: 60 });
    const rejections = new Rejections({ ids, hubPrivateKey: keys.privateKey, onDropped: () => {} });
    const b = f.batch(0);
    b.touchedDocs.set('ship-7/a1/epoch-1', { site: 'ship-7', agent: 'a1', heads: [H1] });
    b.touchedDocs.set('ship-7/a2/epoch-1', { site: 'ship-7', agent: 'a2', heads: [H1] });
    b.poisoned.add('ship-7/a2/epoch-1');
    b.refusals.push({
      site: 'ship-7',
      agent: 'a3',
      code: 'bad-bundle',
      bundleId: '01JB0000000000000000000000',
    });
    await answerOnDownlink(b, rejections, signer);
    const acks = b.w.downlink.filter((r) => r.kind === 'ack');
    expect(acks.map((r) => r.docId)).toEqual(['ship-7/a1/epoch-1']);
    expect(acks[0]?.expiresAt).toBe(b.now + 60_000);
    expect(acks[0]?.bytes.length).toBeGreaterThan(0);
    expect(b.w.downlink.filter((r) => r.kind !== 'ack').map((r) => r.agent)).toEqual(['a3']);
  });
});
