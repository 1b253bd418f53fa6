import { describe, expect, it } from 'vitest';
import { MAX_CLOCK_MS, TRUSTED_CLOCK } from '../clock.js';
import { generateSigningKeyPair } from '../keys.js';
import { cborEncodeValue, cborHead, type Value } from './cbor.js';
import { bodyFromValue, bodyToValue, type PushBody } from './kinds.js';
import { decodeMessage, encodeMessage } from './message.js';
import { pushClockOf } from './pushClock.js';

const agent = await generateSigningKeyPair();
const base: PushBody = { epoch: 1, changes: Uint8Array.of(1, 2, 3), t0: 1_767_225_600_000 };
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** A push body whose field 10 is `v`, as CBOR, read back by the push's fields. */
const withField10 = (v: Value) => bodyFromValue('push', new Map([...bodyToValue('push', base), [10, v]]));

describe("a push's clock term, field 10 (decision 495)", () => {
  it('round-trips an offset either way, zero and trusted through a signed push', async () => {
    for (const clock of [
      { offsetMs: 420_000, uncertaintyMs: 2040 },
      { offsetMs: -310, uncertaintyMs: 40 },
      { offsetMs: 0, uncertaintyMs: 0 },
      { offsetMs: -MAX_CLOCK_MS, uncertaintyMs: MAX_CLOCK_MS },
      { offsetMs: MAX_CLOCK_MS, uncertaintyMs: 1 },
      TRUSTED_CLOCK,
    ]) {
      const bytes = await encodeMessage(
        { kind: 'push', from: 7, to: 0, seq: 1, body: { ...base, clock } },
        agent.privateKey,
      );
      const d = decodeMessage(bytes);
      if (!d.ok) throw d.error;
      expect((d.value.body as PushBody).clock).toEqual(clock);
    }
  });

  it('costs 7 to 10 bytes an estimate (key, array head, zigzag offset, uncertainty), 2 when trusted', () => {
    const field = (clock: PushBody['clock']) => {
      const m = bodyToValue('push', { ...base, clock });
      return hex(cborEncodeValue(new Map([[10, m.get(10) as Value]]))).slice(2);
    };
    // −310 ms ± 40 ms: zigzag 619 (0x026b)
    expect(field({ offsetMs: -310, uncertaintyMs: 40 })).toBe('0a82' + '19026b' + '1828');
    // 7 min fast ± 2.04 s (the Mars test's agent): zigzag 840,000
    expect(field({ offsetMs: 420_000, uncertaintyMs: 2040 })).toBe('0a82' + '1a000cd140' + '1907f8');
    expect(field(TRUSTED_CLOCK)).toBe('0af5');
    expect(field({ offsetMs: -1, uncertaintyMs: 3 })).toBe('0a820103');
  });

  it('refuses a torn, mistyped or out-of-bounds term, naming field 10', () => {
    const refused = (v: Value) => {
      const r = withField10(v);
      expect(r.ok, `accepted ${JSON.stringify(v)}`).toBe(false);
      return r.ok ? '' : r.reason;
    };
    expect(refused(5)).toMatch(/field 10 \(clock\) is neither true \(trusted\) nor/);
    expect(refused(false)).toMatch(/field 10 \(clock\)/);
    expect(refused(Uint8Array.of(1, 2))).toMatch(/field 10 \(clock\)/);
    expect(refused('trusted')).toMatch(/field 10 \(clock\)/);
    expect(refused([1])).toMatch(/field 10 \(clock\) is neither/);
    expect(refused([1, 2, 3])).toMatch(/field 10 \(clock\) is neither/);
    expect(refused([1, 'u'])).toMatch(/is not two uints/);
    expect(refused([[1], 2])).toMatch(/is not two uints/);
    expect(refused([true, 2])).toMatch(/is not two uints/);
    expect(refused(new Map([[1, 1]]))).toMatch(/field 10 \(clock\)/);
    expect(refused([2 * MAX_CLOCK_MS + 1, 0])).toMatch(/offset over/);
    expect(refused([0, MAX_CLOCK_MS + 1])).toMatch(/uncertainty of/);
    // the bounds themselves are read
    expect(withField10([2 * MAX_CLOCK_MS, MAX_CLOCK_MS])).toMatchObject({
      ok: true,
      body: { clock: { offsetMs: MAX_CLOCK_MS, uncertaintyMs: MAX_CLOCK_MS } },
    });
  });

  it('refuses a message whose term is cut short or written in a longer form', async () => {
    const bytes = await encodeMessage(
      {
        kind: 'push',
        from: 7,
        to: 0,
        seq: 1,
        body: { ...base, clock: { offsetMs: -310, uncertaintyMs: 40 } },
      },
      agent.privateKey,
    );
    const at = hex(bytes).indexOf('0a8219026b1828') / 2;
    expect(at).toBeGreaterThan(0);
    // the array says 3 items where 2 follow: the signature's head is read as its third, and the rest is torn
    const torn = bytes.slice();
    torn[at + 1] = 0x83;
    expect(decodeMessage(torn).ok).toBe(false);
    // 40 written in two bytes (0x19 0x0028): the same number, another encoding
    const longer = Uint8Array.from([
      ...bytes.subarray(0, at + 5),
      0x19,
      0x00,
      0x28,
      ...bytes.subarray(at + 7),
    ]);
    const d = decodeMessage(longer);
    expect(d.ok || d.error.message).toMatch(/not in its shortest form/);
    // a negative integer (major type 1) is outside the subset: the offset goes zigzag
    const negative = Uint8Array.from([
      ...bytes.subarray(0, at + 2),
      0x39,
      0x01,
      0x35,
      ...bytes.subarray(at + 5),
    ]);
    const n = decodeMessage(negative);
    expect(n.ok || n.error.message).toMatch(/negative int is not allowed/);
    // every truncation of the message is refused
    for (let k = at; k < at + 7; k++) expect(decodeMessage(bytes.subarray(0, k)).ok).toBe(false);
    expect(cborHead(0, 10)).toEqual(Uint8Array.of(0x0a));
  });

  it('is left out rather than sent when there is none or it states more than a year', () => {
    expect(pushClockOf(null)).toBeUndefined();
    expect(pushClockOf(undefined)).toBeUndefined();
    expect(pushClockOf({ offsetMs: MAX_CLOCK_MS + 1, uncertaintyMs: 1 })).toBeUndefined();
    expect(pushClockOf({ offsetMs: 1, uncertaintyMs: MAX_CLOCK_MS + 1 })).toBeUndefined();
    expect(pushClockOf({ offsetMs: Number.NaN, uncertaintyMs: 1 })).toBeUndefined();
    expect(pushClockOf({ offsetMs: -12.6, uncertaintyMs: 3.2 })).toEqual({ offsetMs: -13, uncertaintyMs: 4 });
    expect(pushClockOf({ offsetMs: 5, uncertaintyMs: 5, trusted: true })).toEqual(TRUSTED_CLOCK);
  });
});
