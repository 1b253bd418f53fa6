import type { DocEntries } from './materialise.js';
import type { Segment } from './mergeDoc.js';

/** A merge's segment read as a document (for `materialise`); the cadences from the memo when unchanged. */
export class SegmentEntries implements DocEntries {
  constructor(
    private readonly seg: Segment,
    private readonly memo: Map<string, unknown>,
  ) {}
  entry(top: 'runs' | 'cells', key: string): unknown {
    return this.seg[top][key];
  }
  keys(top: 'runs' | 'cells'): string[] {
    return top === 'cells' && this.seg.cellKeys ? this.seg.cellKeys : Object.keys(this.seg[top]);
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
