/**
 * `Range` handling for `GET /v1/blobs/:sha256` (RFC 9110 §14). One byte range is served; a
 * multi-range request is answered with the whole representation (200), which §14.2 allows.
 */
export type RangeDecision =
  | { kind: 'full' }
  | { kind: 'partial'; start: number; end: number }
  | { kind: 'unsatisfiable' };

export function decideRange(
  size: number,
  etag: string,
  range: string | undefined,
  ifRange: string | undefined,
): RangeDecision {
  if (!range) return { kind: 'full' };
  // §13.1.5: If-Range with an entity tag needs a strong match; a date (or anything else) we treat as
  // "changed", which only costs a full resend and never serves mixed versions.
  if (ifRange !== undefined && ifRange.trim() !== etag) return { kind: 'full' };
  const m = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(range.trim());
  if (!m) return { kind: 'full' }; // unknown unit or several ranges: §14.2 lets us ignore Range
  const [, a, b] = m as unknown as [string, string, string];
  if (a === '' && b === '') return { kind: 'full' };
  if (a === '') {
    const suffix = Number(b);
    if (suffix === 0 || size === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(a);
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = b === '' ? size - 1 : Math.min(Number(b), size - 1);
  if (end < start) return { kind: 'full' }; // syntactically invalid range: ignored (§14.1.1)
  return { kind: 'partial', start, end };
}
