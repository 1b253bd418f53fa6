import { overlayConfirmed, unpackDocEntry } from '@driftline/protocol';
import type { DocEntries } from './materialise.js';
import type { Segment } from './mergeDoc.js';

/**
 * A merge's segment read as a document (for `materialise`); the cadences from the memo when unchanged.
 * Packed entries are parsed here, once each, and a cell gets its `confirmed` entry applied (decision 330).
 */
export class SegmentEntries implements DocEntries {
  private readonly parsed = new Map<string, unknown>();

  constructor(
    private readonly seg: Segment,
    private readonly memo: Map<string, unknown>,
  ) {}
  entry(top: 'runs' | 'cells', key: string): unknown {
    const text = this.seg.packed[top].get(key);
    if (text === undefined) return this.seg[top][key];
    const k = `${top}\u0000${key}`;
    if (this.parsed.has(k)) return this.parsed.get(k);
    const v = unpackDocEntry(text);
    const out = top === 'cells' ? overlayConfirmed(v, this.seg.confirmed.get(key)) : v;
    this.parsed.set(k, out);
    return out;
  }
  keys(top: 'runs' | 'cells'): string[] {
    if (top === 'cells' && this.seg.cellKeys) return this.seg.cellKeys;
    return [...Object.keys(this.seg[top]), ...this.seg.packed[top].keys()];
  }
  facts(): unknown {
    const f = this.seg.facts as Record<string, unknown> | undefined;
    if (!this.seg.cadenceFromMemo) {
      if (f && typeof f === 'object') this.memo.set('cadenceS', f.cadenceS);
      return f;
    }
    return { ...f, cadenceS: this.memo.get('cadenceS') };
  }
}
