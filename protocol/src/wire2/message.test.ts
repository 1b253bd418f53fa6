import { describe, expect, it } from 'vitest';
import { generateSigningKeyPair } from '../keys.js';
import { cborEncodeValue, cborHead } from './cbor.js';
import { cellListDigest, encodeHeartbeat } from './heartbeat.js';
import { decodeMessage, encodeMessage, type Message, messageTip, verifyMessage } from './message.js';

const agent = await generateSigningKeyPair();
const other = await generateSigningKeyPair();
const list = await cellListDigest(['prod/a', 'prod/b', 'prod/c']);

const samples: Message[] = [
  {
    kind: 'push',
    from: 7,
    to: 0,
    seq: 12,
    body: {
      epoch: 1,
      heartbeat: encodeHeartbeat(list, [
        { index: 0, at: 1_700_000_000_000 },
        { index: 2, at: 1_700_000_000_050 },
      ]),
    },
  },
  {
    kind: 'push',
    from: 7,
    to: 0,
    seq: 13,
    body: { epoch: 2, changes: Uint8Array.of(1, 2, 3), changesEncoding: 'br', sealed: true },
  },
  { kind: 'pull', from: 7, to: 3, seq: 40, body: { have: 5, holdS: 21_600, t0: 1_700_000_000_123 } },
  { kind: 'custody', from: 3, to: 7, seq: 9, body: { upTo: 12, above: Uint8Array.of(1), stamp: [1, 2, 3] } },
  {
    kind: 'ack',
    from: 0,
    to: 7,
    seq: 5,
    body: { upTo: 12, tip: new Uint8Array(8).fill(9), committedAt: 1_700_000_001_000, readsConfirmed: true },
  },
  // a push of a round under way: its ack may come with the next push, or after 600 s (decision 525)
  { kind: 'push', from: 7, to: 0, seq: 14, body: { epoch: 2, changes: Uint8Array.of(4), ackLater: 600 } },
];

describe('hop v2 messages', () => {
  it('round-trips every kind and verifies with the sender key', async () => {
    for (const m of samples) {
      const bytes = await encodeMessage(m, agent.privateKey);
      const d = decodeMessage(bytes);
      if (!d.ok) throw d.error;
      const { version, signature, signed, bytes: _b, ...rest } = d.value;
      expect(version).toBe(2);
      expect(signature.length).toBe(64);
      expect(rest).toEqual(m);
      expect(await verifyMessage(d.value, agent.publicKey)).toBe(true);
    }
  });

  it('refuses every message with any one byte flipped', async () => {
    for (const m of samples) {
      const bytes = await encodeMessage(m, agent.privateKey);
      for (let i = 0; i < bytes.length; i++) {
        const t = bytes.slice();
        t[i] = (t[i] as number) ^ 0x01;
        const d = decodeMessage(t);
        const accepted = d.ok && (await verifyMessage(d.value, agent.publicKey));
        expect(accepted, `${m.kind}: byte ${i} flipped was accepted`).toBe(false);
      }
    }
  });

  it('does not verify with another key', async () => {
    const d = decodeMessage(await encodeMessage(samples[2]!, agent.privateKey));
    if (!d.ok) throw d.error;
    expect(await verifyMessage(d.value, other.publicKey)).toBe(false);
  });

  it('refuses a message over the size limit before reading it', async () => {
    const big: Message = {
      kind: 'push',
      from: 1,
      to: 0,
      seq: 1,
      body: { epoch: 1, changes: new Uint8Array(5000) },
    };
    const d = decodeMessage(await encodeMessage(big, agent.privateKey), { maxBytes: 4096 });
    expect(d.ok || d.error.code).toBe('bad-bundle');
    expect(d.ok || d.error.message).toMatch(/over the limit of 4096/);
  });

  it('refuses every truncation as a bad message', async () => {
    const bytes = await encodeMessage(samples[0]!, agent.privateKey);
    for (let n = 0; n < bytes.length; n++) {
      const d = decodeMessage(bytes.subarray(0, n));
      expect(d.ok, `${n} bytes accepted`).toBe(false);
      if (!d.ok) expect(d.error.code).toBe('bad-bundle');
    }
  });

  it('names an unknown version and an unknown kind', async () => {
    const bytes = await encodeMessage(samples[2]!, agent.privateKey);
    const v3 = bytes.slice();
    v3[1] = 3;
    const dv = decodeMessage(v3);
    expect(dv.ok || [dv.error.code, dv.error.message]).toEqual([
      'unsupported-version',
      'hop message version 3 is not supported (this node reads 2)',
    ]);
    const k9 = bytes.slice();
    k9[2] = 9;
    const dk = decodeMessage(k9);
    expect(dk.ok || dk.error.code).toBe('unknown-kind');
    expect(dk.ok || dk.error.message).toMatch(
      /kind 9 is not known \(known: 1 push, 2 pull, 3 custody, 4 ack, 5 publication\)/,
    );
  });

  it('refuses encodings that are not the one deterministic form', async () => {
    const bytes = await encodeMessage(samples[2]!, agent.privateKey);
    // seq 40 (0x18 0x28) written in two bytes (0x19 0x00 0x28): same number, another encoding
    const i = bytes.indexOf(0x28);
    const long = new Uint8Array([...bytes.subarray(0, i - 1), 0x19, 0x00, 0x28, ...bytes.subarray(i + 1)]);
    const d = decodeMessage(long);
    expect(d.ok || d.error.message).toMatch(/not in its shortest form/);
  });

  it('refuses unknown body fields, deep nesting and stray bytes', async () => {
    const sig = [...cborHead(2, 64), ...new Uint8Array(64)];
    const frame = (body: Uint8Array) =>
      Uint8Array.from([0x87, 0x02, 0x02, 0x01, 0x00, 0x01, ...body, ...sig]);
    const unknown = decodeMessage(
      frame(
        cborEncodeValue(
          new Map([
            [1, 0],
            [2, 0],
            [9, 0],
          ]),
        ),
      ),
    );
    expect(unknown.ok || unknown.error.message).toMatch(/pull body has unknown field 9/);
    let deep: Parameters<typeof cborEncodeValue>[0] = 0;
    for (let i = 0; i < 10; i++) deep = [deep];
    const nested = decodeMessage(frame(cborEncodeValue(new Map([[1, deep]]))));
    expect(nested.ok || nested.error.message).toMatch(/nested deeper than 6 levels/);
    const ok = await encodeMessage(samples[2]!, agent.privateKey);
    const stray = decodeMessage(Uint8Array.from([...ok, 0]));
    expect(stray.ok || stray.error.message).toMatch(/1 stray bytes after the signature/);
  });

  it('refuses to encode a body its kind does not allow', async () => {
    const empty = { kind: 'push', from: 1, to: 0, seq: 1, body: { epoch: 1 } } as Message;
    await expect(encodeMessage(empty, agent.privateKey)).rejects.toThrow(/neither changes nor heartbeat/);
    // an ack asked to wait no time, or longer than an hour (push field 11, decision 525)
    for (const [ackLater, says] of [
      [0, /field 11 \(ackLater\) is 0, under 1/],
      [3601, /field 11 \(ackLater\) is 3601, over 3600/],
    ] as const) {
      const m = {
        kind: 'push',
        from: 1,
        to: 0,
        seq: 1,
        body: { epoch: 1, changes: Uint8Array.of(1), ackLater },
      };
      await expect(encodeMessage(m as Message, agent.privateKey)).rejects.toThrow(says);
    }
    const seq0 = { ...samples[2]!, seq: 0 } as Message;
    await expect(encodeMessage(seq0, agent.privateKey)).rejects.toThrow(/seq 0 is not a positive integer/);
  });

  it('names an acked push by the first 8 bytes of its signature hash', async () => {
    const d = decodeMessage(await encodeMessage(samples[0]!, agent.privateKey));
    if (!d.ok) throw d.error;
    const tip = await messageTip(d.value.signature);
    expect(tip.length).toBe(8);
    expect(await messageTip(d.value.signature)).toEqual(tip);
  });
});
