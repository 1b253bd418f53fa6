import { describe, expect, it } from 'vitest';
import { hmacFingerprint, MaskSet, maskValues } from '../redact/maskValues.js';
import { maskAddress } from './maskAddress.js';

const set = (variables: Record<string, unknown>, open: string[] = []) =>
  new MaskSet(
    maskValues(
      Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, { value: v as never }])),
      open,
      hmacFingerprint(new Uint8Array(32)),
    ),
  );

describe('maskAddress', () => {
  const s = set({ pw: 'Hunter-Secret-9' });

  it('reads keys as Terraform quotes them, Go escapes included', () => {
    for (const key of [
      'Hunter-Secret-9',
      'Hunter\\x2dSecret-9',
      'Hunter\\u002DSecret-9',
      'Hunter\\U0000002dSecret-9',
    ])
      expect(maskAddress(`a.b["${key}"]`, s)).toMatch(/^a\.b\["\u27E8pw:[0-9a-f]{6}\u27E9"\]$/);
  });

  it('leaves names outside brackets, a key with a bracket inside it and unmasked keys alone', () => {
    expect(maskAddress('module.Hunter-Secret-9.a.b', s)).toBe('module.Hunter-Secret-9.a.b');
    expect(maskAddress('a.b["x]y"].c["Hunter-Secret-9"]', s)).toMatch(
      /^a\.b\["x\]y"\]\.c\["\u27E8pw:[0-9a-f]{6}\u27E9"\]$/,
    );
    expect(maskAddress('a.b["plain\\"key"]', s)).toBe('a.b["plain\\"key"]');
  });

  it('survives an unclosed key without losing text', () => {
    expect(maskAddress('a.b["Hunter-Secret-9', s)).toMatch(/\u27E8pw:/);
    expect(maskAddress('a.b[', s)).toBe('a.b[');
  });

  it('gives a value inside a longer value the longer one’s tag, once', () => {
    const t = set({ inner: 'Secret-Inner-1', outer: 'x-Secret-Inner-1-y' });
    expect(maskAddress('a.b["x-Secret-Inner-1-y"]', t)).toMatch(/^a\.b\["\u27E8outer:[0-9a-f]{6}\u27E9"\]$/);
  });
});
