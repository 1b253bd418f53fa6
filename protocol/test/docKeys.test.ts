import * as A from '@automerge/automerge';
import { describe, expect, it } from 'vitest';
import { docEntryKeyMismatch, docKeyProblem, entryNameProblem, plainDocValue } from '../src/index.js';

describe('document keys (decision 570)', () => {
  it('keys a run by a ULID and a cell by environment/component[@ref] with good names', () => {
    expect(docKeyProblem('runs', '01JB00000000000000000000ZZ')).toBeNull();
    expect(docKeyProblem('cells', 'prod/net')).toBeNull();
    expect(docKeyProblem('cells', 'prod/net@release/2.1')).toBeNull();
    for (const k of ['__proto__', 'constructor', 'toString', '01jb00000000000000000000zz'])
      expect(docKeyProblem('runs', k)).toBe('a run is keyed by its run id (a ULID)');
    expect(docKeyProblem('cells', '__proto__')).toBe('a cell is keyed environment/component[@ref]');
    expect(docKeyProblem('cells', 'prod/__proto__')).toMatch(/^component must be 1-63 characters/);
    expect(docKeyProblem('cells', 'constructor/net')).toMatch(/^environment "constructor" is reserved/);
    expect(docKeyProblem('cells', 'prod/hasOwnProperty')).toMatch(/^component "hasOwnProperty" is reserved/);
    expect(docKeyProblem('cells', 'prod/net@a..b')).toBe('a ref may not contain ".."');
  });

  it('names a reserved name and says what to do', () => {
    expect(entryNameProblem('prototype')).toBe(
      '"prototype" is reserved (every JavaScript object answers to it): choose another name',
    );
    expect(entryNameProblem('Constructor')).toBeNull();
  });

  it('finds an entry under another entry’s key', () => {
    const e = { runId: '01JB00000000000000000000AA', environment: 'prod', component: 'net' };
    expect(docEntryKeyMismatch('runs', '01JB00000000000000000000AA', e, null)).toBeNull();
    expect(docEntryKeyMismatch('runs', '01JB00000000000000000000ZZ', e, null)).toBe(
      'keyed "01JB00000000000000000000ZZ" but its runId is "01JB00000000000000000000AA"',
    );
    expect(
      docEntryKeyMismatch('runs', '01JB00000000000000000000AA', { ...e, component: 'valueOf' }, null),
    ).toMatch(/^component "valueOf" is reserved/);
    expect(docEntryKeyMismatch('cells', 'prod/net@v2', e, 'v2')).toBeNull();
    expect(docEntryKeyMismatch('cells', 'prod/dns', e, null)).toBe(
      'keyed "prod/dns" but it is the cell "prod/net"',
    );
  });
});

describe('plainDocValue over untrusted content', () => {
  it('keeps a __proto__ key as data, never as the prototype', () => {
    const v = plainDocValue(JSON.parse('{"a":{"__proto__":{"polluted":"yes"},"b":1}}')) as {
      a: Record<string, unknown>;
    };
    expect(Object.getPrototypeOf(v.a)).toBe(Object.prototype);
    expect(v.a.polluted).toBeUndefined();
    expect(Object.keys(v.a)).toEqual(['__proto__', 'b']);
  });

  it('drops what Automerge made a prototype from a hostile key', () => {
    const doc = A.from({ m: { ok: 1 } });
    const h = A.getBackend(A.clone(doc));
    h.putObject((h.getWithType('_root', 'm') as [string, string])[1], '__proto__', { polluted: 'yes' });
    const m = h.materialize((h.getWithType('_root', 'm') as [string, string])[1]);
    expect((m as { polluted?: unknown }).polluted).toBeDefined();
    const v = plainDocValue(m) as Record<string, unknown>;
    expect(v).toEqual({ ok: 1 });
    expect(v.polluted).toBeUndefined();
  });

  it('walks nesting deeper than the call stack reaches', () => {
    let deep: unknown = 'leaf';
    for (let i = 0; i < 200_000; i++) deep = i % 2 ? [deep] : { d: deep };
    expect(() => plainDocValue(deep)).not.toThrow();
  });
});
