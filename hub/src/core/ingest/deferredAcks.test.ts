import { generateSigningKeyPair, wire2 } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { stepFixture } from '../../../test/ingestSteps.js';
import { ulidGen } from '../../ports/IdGen.js';
import { Rejections } from '../rejections.js';
import { AckSigner } from './acks.js';
import { DeferredAcks } from './deferredAcks.js';
import { answerOnDownlink } from './downlink.js';

const H1 = '1'.repeat(64);
const TIP = new Uint8Array(8);

/**
 * A batch at `t` whose v2 push (sequence `seq`) of `doc` touched ship-7/a1, asking `ackLaterS`; what it
 * decided of held acks applied as `Ingest` does once the batch commits (`commits` false: it failed).
 */
async function step(
  f: Awaited<ReturnType<typeof stepFixture>>,
  deferred: DeferredAcks,
  signer: AckSigner,
  rejections: Rejections,
  push: { doc: string; seq: number; ackLaterS?: number },
  commits = true,
) {
  const b = f.batch(0);
  b.touchedDocs.set(push.doc, {
    site: 'ship-7',
    agent: 'a1',
    heads: [H1],
    wire2: {
      from: 7,
      seq: push.seq,
      tip: TIP,
      ...(push.ackLaterS === undefined ? {} : { ackLaterS: push.ackLaterS }),
    },
  });
  await answerOnDownlink(b, rejections, signer, deferred);
  if (commits) deferred.applyAll(b.heldAcks.values());
  return b.w.downlink
    .filter((r) => r.kind === 'ack')
    .map((r) => {
      const m = wire2.decodeMessage(r.bytes);
      if (!m.ok) throw new Error(m.error.message);
      const body = m.value.body as wire2.AckBody;
      return { doc: r.docId, upTo: body.upTo, committedAt: body.committedAt };
    });
}

async function setUp() {
  const f = await stepFixture();
  const keys = await generateSigningKeyPair();
  const ids = ulidGen(f.clock);
  const signer = new AckSigner({ ids, hubPrivateKey: keys.privateKey });
  const rejections = new Rejections({ ids, hubPrivateKey: keys.privateKey, onDropped: () => {} });
  const deferred = new DeferredAcks();
  return {
    f,
    deferred,
    signer,
    push: (p: { doc: string; seq: number; ackLaterS?: number }, commits = true) =>
      step(f, deferred, signer, rejections, p, commits),
  };
}

describe('acks held for the round (decision 525)', () => {
  it("holds a push's ack, and acks the next push of the same document alone: its heads cover both", async () => {
    const { push, deferred } = await setUp();
    expect(await push({ doc: 'ship-7/a1/epoch-1', seq: 1, ackLaterS: 600 })).toEqual([]);
    expect(deferred.size).toBe(1);
    expect(await push({ doc: 'ship-7/a1/epoch-1', seq: 2, ackLaterS: 600 })).toEqual([]);
    const acked = await push({ doc: 'ship-7/a1/epoch-1', seq: 3 });
    expect(acked.map((a) => a.upTo)).toEqual([3]);
    expect(deferred.size).toBe(0);
  });

  it('holds nothing for a batch that did not commit, and keeps what it held before', async () => {
    const { push, deferred } = await setUp();
    await push({ doc: 'ship-7/a1/epoch-1', seq: 1, ackLaterS: 600 });
    // an ack held for a push the hub did not store would acknowledge what it does not hold (D4)
    await push({ doc: 'ship-7/a1/epoch-1', seq: 2, ackLaterS: 600 }, false);
    await push({ doc: 'ship-7/a1/epoch-1', seq: 3 }, false);
    expect(deferred.due(Number.POSITIVE_INFINITY).map((h) => h.who.wire2.seq)).toEqual([1]);
  });

  it('sends a held ack with the push of another document (the next epoch), beside that one', async () => {
    const { push } = await setUp();
    await push({ doc: 'ship-7/a1/epoch-1', seq: 1, ackLaterS: 600 });
    const acked = await push({ doc: 'ship-7/a1/epoch-2', seq: 2 });
    expect(acked.map((a) => [a.doc, a.upTo])).toEqual([
      ['ship-7/a1/epoch-1', 1],
      ['ship-7/a1/epoch-2', 2],
    ]);
  });

  it('sends the first document’s ack at once when one batch carries two documents of the agent', async () => {
    const { f, deferred, signer } = await setUp();
    const keys = await generateSigningKeyPair();
    const ids = ulidGen(f.clock);
    const rejections = new Rejections({ ids, hubPrivateKey: keys.privateKey, onDropped: () => {} });
    const b = f.batch(0);
    for (const [doc, seq] of [
      ['ship-7/a1/epoch-1', 1],
      ['ship-7/a1/epoch-2', 2],
    ] as const)
      b.touchedDocs.set(doc, {
        site: 'ship-7',
        agent: 'a1',
        heads: [H1],
        wire2: { from: 7, seq, tip: TIP, ackLaterS: 600 },
      });
    await answerOnDownlink(b, rejections, signer, deferred);
    deferred.applyAll(b.heldAcks.values());
    // epoch 1's ack goes now (epoch 2's cannot cover it); epoch 2's is held
    expect(b.w.downlink.filter((r) => r.kind === 'ack').map((r) => r.docId)).toEqual(['ship-7/a1/epoch-1']);
    expect(deferred.due(Number.POSITIVE_INFINITY).map((h) => h.docId)).toEqual(['ship-7/a1/epoch-2']);
  });

  it("sends a held ack once its seconds pass, a chain of them by the first one's time, dated when its push was committed", async () => {
    const { push, deferred, f, signer } = await setUp();
    const t0 = f.clock.now();
    await push({ doc: 'ship-7/a1/epoch-1', seq: 1, ackLaterS: 60 });
    f.clock.advance(50_000);
    // the second push asks for 60 s more: its ack still goes 60 s after the first push's
    await push({ doc: 'ship-7/a1/epoch-1', seq: 2, ackLaterS: 60 });
    expect(deferred.due(t0 + 59_999)).toEqual([]);
    const due = deferred.due(t0 + 60_000);
    expect(due.map((h) => h.who.wire2.seq)).toEqual([2]);
    expect(due[0]?.committedAt).toBe(t0 + 50_000);
    expect(deferred.size).toBe(0);
    // its row names the push, dated when that push was committed (a later rejection stays in force)
    const { row, signed } = signer.rowWire2(
      due[0]!.who,
      due[0]!.docId,
      [],
      due[0]!.committedAt,
      due[0]!.states,
    );
    await signed;
    const m = wire2.decodeMessage(row.bytes);
    expect(m.ok && (m.value.body as wire2.AckBody)).toMatchObject({ upTo: 2, committedAt: t0 + 50_000 });
  });

  it('acks at once a push that asks for no wait, or whose wait has passed already', async () => {
    const { push, f } = await setUp();
    expect((await push({ doc: 'ship-7/a1/epoch-1', seq: 1 })).map((a) => a.upTo)).toEqual([1]);
    await push({ doc: 'ship-7/a1/epoch-1', seq: 2, ackLaterS: 1 });
    f.clock.advance(5_000);
    // the held one is due: the next push asking to wait is acked now, for both
    expect((await push({ doc: 'ship-7/a1/epoch-1', seq: 3, ackLaterS: 600 })).map((a) => a.upTo)).toEqual([
      3,
    ]);
  });
});
