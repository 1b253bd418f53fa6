import type { Merger } from '../ports/Merger.js';
import { mergeDoc } from './mergeDoc.js';

/** Merges in the hub's own thread (tests, and `ingest.mergeWorkers: 0`). */
export const inThread: Merger = {
  merge: async (input) => mergeDoc(input),
  close: async () => {},
};
