import { READS_INLINE_PUBLICATIONS } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import type { Touched } from './DocReader.js';
import { materialise } from './materialise.js';

const touched: Touched = {
  runs: new Set(),
  cells: new Set(),
  facts: true,
  cadence: false,
  publications: false,
  applies: false,
  requests: false,
  refused: [],
};

/** The agent's facts row as `materialise` makes it from a document holding only `facts`. */
function factsOf(facts: unknown) {
  const doc = { entry: () => undefined, keys: () => [], facts: () => facts };
  const ctx = {
    site: 'ship-7',
    agent: 'a1',
    docId: 'ship-7/a1/epoch-1',
    now: 0,
    offsetMs: 0,
    prevPlan: () => null,
  };
  return materialise(doc, touched, ctx);
}

const base = { version: '1', cadenceS: {}, queueDepth: 0, reportedAt: 1 };

describe('materialise: the reads fact (decision 360)', () => {
  it('marks an agent that names inline publications among what it reads, and no other', () => {
    expect(factsOf({ ...base, reads: [READS_INLINE_PUBLICATIONS] }).facts?.readsInline).toBe(true);
    expect(factsOf({ ...base, reads: ['something-else'] }).facts?.readsInline).toBe(false);
    expect(factsOf(base).facts?.readsInline).toBe(false);
  });

  it('refuses facts whose reads is hostile: not a list, too many names or one too long', () => {
    const hostile = [
      READS_INLINE_PUBLICATIONS,
      { 0: READS_INLINE_PUBLICATIONS },
      [...Array.from({ length: 20 }, (_, i) => `r${i}`), READS_INLINE_PUBLICATIONS],
      [READS_INLINE_PUBLICATIONS, 'x'.repeat(41)],
      [READS_INLINE_PUBLICATIONS, 7],
    ];
    for (const reads of hostile) {
      const m = factsOf({ ...base, reads });
      expect(m.facts).toBeNull();
      expect(m.invalid).toEqual(['facts']);
    }
  });
});
