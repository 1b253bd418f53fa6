import { cellKey } from '@driftline/protocol';
import type { IngestDeps } from '../ingestTypes.js';
import { materialise } from '../materialise.js';
import type { Segment } from '../mergeDoc.js';
import { RunCells } from '../refCells.js';
import { SegmentEntries } from '../segmentEntries.js';
import { custodyWebhookRows } from '../webhooks.js';
import { answerRequests } from './answerRequests.js';
import type { Batch } from './batch.js';
import { recordCells } from './cells.js';

/** The document a segment belongs to, and its clock offset as known when the segment is read. */
export interface SegmentContext {
  site: string;
  agent: string;
  docId: string;
  memo: Map<string, unknown>;
  offsetMs: number;
}

/**
 * Step 4, materialise: what one merged segment of a document changed becomes runs, cells (step 5),
 * agent facts and answered plan requests (step 6).
 */
export async function readSegment(
  b: Batch,
  d: Pick<IngestDeps, 'log' | 'count' | 'webhookUrls'>,
  ctx: SegmentContext,
  seg: Segment | null | undefined,
): Promise<void> {
  if (!seg) return;
  const { site, agent, docId, offsetMs } = ctx;
  const what = seg.touched;
  const doc = new SegmentEntries(seg, ctx.memo);
  const runCells = new RunCells(doc, what.cells);
  // A run is `unchanged` (and not `new-drift`) against the plan its cell had before this batch.
  const prevPlans = new Map<string, { planHash: string | null; status: string } | null>();
  const runCellKeys = [];
  for (const k of what.runs) {
    const r = doc.entry('runs', k) as { environment?: unknown; component?: unknown } | undefined;
    if (r)
      runCellKeys.push({
        environment: String(r.environment),
        component: String(r.component),
        atRef: runCells.atRef(r),
      });
  }
  // The cells of all of them in one read.
  await b.prefetchCells(site, runCellKeys);
  for (const { environment: env, component: comp, atRef: at } of runCellKeys) {
    const prev = await b.cell(site, env, comp, at);
    prevPlans.set(cellKey(env, comp, at), prev ? { planHash: prev.planHash, status: prev.status } : null);
  }
  const m = materialise(doc, what, {
    site,
    agent,
    docId,
    now: b.now,
    offsetMs,
    prevPlan: (k) => prevPlans.get(k) ?? null,
    runCells,
  });
  if (m.invalid.length > 0)
    d.log.warn({ docId, invalid: m.invalid }, 'skipped document entries that fail the AgentDoc schema');
  if (m.refused.length > 0) {
    d.log.warn(
      { docId, refused: m.refused.slice(0, 20), count: m.refused.length },
      'refused document entries for their key: the agent (or whoever signed as it) wrote an entry no honest agent writes (docs/decisions/570-hostile-document-keys.md)',
    );
    d.count.entriesRefused?.(m.refused.length);
  }
  const agentRow = b.agents.get(`${site}/${agent}`);
  if (m.facts && agentRow) {
    // an upstream newly found sitting on this agent's custody notifies once per episode (decision 575)
    b.w.webhooks.push(
      ...custodyWebhookRows(
        d.webhookUrls,
        { site, agent },
        agentRow.custodyOverdue,
        m.facts.custodyOverdue,
        b.now,
      ),
    );
    Object.assign(agentRow, m.facts);
  }
  b.w.runs.push(...m.runs);
  d.count.merged(m.runs.length);
  await recordCells(b, site, m.cells, what.cells, d.webhookUrls);
  await answerRequests(b, site, m, offsetMs, agent);
}
