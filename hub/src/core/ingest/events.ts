import type { Committed } from '../ingestTypes.js';
import type { Batch } from './batch.js';

/** Step 10, events: what the committed batch changed, for live listeners; null when nothing did. */
export function committedEvent(b: Batch): Committed | null {
  const changed =
    b.w.runs.length + b.changedCells.size + b.sites.size + b.doneRequests.size + b.deliveries.length;
  if (changed === 0) return null;
  return {
    cells: [...b.changedCells.values()],
    runs: b.w.runs,
    sites: [...b.sites.keys()],
    planRequests: [...b.doneRequests.values()],
    deliveries: b.deliveries,
  };
}
