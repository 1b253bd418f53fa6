import { describe, expect, it } from 'vitest';
import { nestedQuantifier } from '../redact/rules.js';
import { LOCK_FIELD_LINE, lockBlockReader, lockLineText } from './lockInfo.js';

const read = (lines: string[]) => {
  const r = lockBlockReader();
  return lines.map((l) => r(l.trim()));
};

describe('lockBlockReader', () => {
  it('reads the seven fields right under Lock Info:, an empty Info included', () => {
    expect(read(['Lock Info:', 'ID:        5ba2-1', 'Who:       root@vm', 'Info:'])).toEqual([
      undefined,
      { field: 'ID', value: '5ba2-1' },
      { field: 'Who', value: 'root@vm' },
      { field: 'Info', value: '' },
    ]);
  });

  it('ends the block at any other line, a repeated field or a value past 200 characters', () => {
    expect(read(['Lock Info:', 'ID:        a', '', 'Who:       b'])[3]).toBeUndefined();
    expect(read(['Lock Info:', 'ID:        a', 'ID:        b', 'Who:       c']).slice(2)).toEqual([
      undefined,
      undefined,
    ]);
    expect(read(['Lock Info:', `Path:      ${'x'.repeat(201)}`])[1]).toBeUndefined();
    expect(read(['Lock Info:', `Path:      ${'x'.repeat(200)}`])[1]).toMatchObject({ field: 'Path' });
  });

  it('reads nothing without the heading, and no name but the seven', () => {
    expect(read(['ID:        a'])).toEqual([undefined]);
    expect(read(['Lock Info:', 'Token:     a', 'ID:        b']).slice(1)).toEqual([undefined, undefined]);
  });

  it('refuses control and non-ASCII characters in a value', () => {
    expect(read(['Lock Info:', 'Who:       r\u00f6ot@vm'])[1]).toBeUndefined();
    expect(read(['Lock Info:', 'Who:       root\u0007@vm'])[1]).toBeUndefined();
  });

  it('matches with a pattern without nested quantifiers', () => {
    expect(nestedQuantifier(LOCK_FIELD_LINE.source)).toBe(false);
  });
});

describe('lockLineText', () => {
  it('pads the name as Terraform does', () => {
    expect(lockLineText({ field: 'Operation', value: 'OperationTypePlan' })).toBe(
      'Operation: OperationTypePlan',
    );
    expect(lockLineText({ field: 'Info', value: '' })).toBe('Info:');
  });
});
