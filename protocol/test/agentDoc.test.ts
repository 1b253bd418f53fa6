import { describe, expect, it } from 'vitest';
import {
  AgentDocSchema,
  cborEncode,
  type DocCell,
  docId,
  packDocEntry,
  parseDocId,
  plainAgentDoc,
  plainDocValue,
  unpackDocEntry,
} from '../src/index.js';

describe('agent document helpers', () => {
  it('names epochs and parses the names back', () => {
    expect(docId('ship-7', 'a1', 3)).toBe('ship-7/a1/epoch-3');
    expect(parseDocId('ship-7/a1/epoch-3')).toEqual({ site: 'ship-7', agent: 'a1', epoch: 3 });
    expect(parseDocId('ship-7/a1/epoch-0')).toBeNull();
    expect(parseDocId('../etc/passwd')).toBeNull();
  });

  it('turns scalar-string objects into plain strings, deeply', () => {
    const scalar = (val: string) => ({ val, toJSON: () => val });
    expect(plainDocValue({ a: scalar('x'), b: [scalar('y'), 2], c: { d: null } })).toEqual({
      a: 'x',
      b: ['y', 2],
      c: { d: null },
    });
  });

  const cell: DocCell = {
    environment: 'prod',
    component: 'vpc',
    runId: '01JX0000000000000000000000' as DocCell['runId'],
    status: 'drift',
    counts: { add: 0, change: 1, destroy: 0, replace: 0, import: 0, drift: 1 },
    plannedAt: 1_763_800_000_123,
    confirmations: 2,
  };

  it('reads packed and map-shaped entries alike', () => {
    const base = { site: 'ship-7', agent: 'a1', epoch: 1, runs: {} };
    // As Automerge.toJS gives them: an ImmutableString, or a map whose strings are ImmutableStrings.
    const scalar = (val: string) => ({ val, toJSON: () => val });
    const packed = { ...base, cells: { 'prod/vpc': scalar(packDocEntry(cell)) } };
    const cbor = { ...base, cells: { 'prod/vpc': cborEncode(cell) } }; // the first packed form
    const legacy = {
      ...base,
      cells: { 'prod/vpc': { ...cell, environment: scalar('prod'), component: 'vpc' } },
    };
    for (const d of [packed, legacy, cbor]) {
      expect(AgentDocSchema.parse(plainAgentDoc(d)).cells['prod/vpc']).toEqual(cell);
    }
    // Canonical: the same value gives the same text, whatever the key order.
    const { status, ...rest } = cell;
    expect(packDocEntry({ status, ...rest })).toEqual(packDocEntry(cell));
    expect(JSON.parse(packDocEntry({ ...cell, reason: undefined }))).toEqual(cell);
  });

  it('leaves bytes that are not CBOR as bytes, so the schema names the entry', () => {
    const junk = new Uint8Array([0xff, 0xff]);
    expect(unpackDocEntry(junk)).toBe(junk);
    const r = AgentDocSchema.safeParse(
      plainAgentDoc({ site: 's', agent: 'a', epoch: 1, runs: {}, cells: { 'prod/vpc': junk } }),
    );
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues[0]?.path)).toContain('prod/vpc');
  });
});
