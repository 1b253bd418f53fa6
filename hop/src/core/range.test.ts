import { describe, expect, it } from 'vitest';
import { decideRange } from './range.js';

const E = '"abc"';
describe('decideRange', () => {
  it('serves the whole blob without Range', () => {
    expect(decideRange(10, E, undefined, undefined)).toEqual({ kind: 'full' });
  });
  it('serves a closed, an open and a suffix range', () => {
    expect(decideRange(10, E, 'bytes=2-4', undefined)).toEqual({ kind: 'partial', start: 2, end: 4 });
    expect(decideRange(10, E, 'bytes=7-', undefined)).toEqual({ kind: 'partial', start: 7, end: 9 });
    expect(decideRange(10, E, 'bytes=-3', undefined)).toEqual({ kind: 'partial', start: 7, end: 9 });
    expect(decideRange(10, E, 'bytes=5-100', undefined)).toEqual({ kind: 'partial', start: 5, end: 9 });
  });
  it('says unsatisfiable for a start past the end', () => {
    expect(decideRange(10, E, 'bytes=10-', undefined)).toEqual({ kind: 'unsatisfiable' });
    expect(decideRange(0, E, 'bytes=-1', undefined)).toEqual({ kind: 'unsatisfiable' });
  });
  it('ignores the range when If-Range does not match the strong etag', () => {
    expect(decideRange(10, E, 'bytes=2-4', '"other"')).toEqual({ kind: 'full' });
    expect(decideRange(10, E, 'bytes=2-4', 'W/"abc"')).toEqual({ kind: 'full' });
    expect(decideRange(10, E, 'bytes=2-4', E)).toEqual({ kind: 'partial', start: 2, end: 4 });
  });
  it('ignores multi-range, other units and inverted ranges', () => {
    expect(decideRange(10, E, 'bytes=0-1,3-4', undefined)).toEqual({ kind: 'full' });
    expect(decideRange(10, E, 'items=0-1', undefined)).toEqual({ kind: 'full' });
    expect(decideRange(10, E, 'bytes=5-2', undefined)).toEqual({ kind: 'full' });
  });
});
