import type { AgentFacts, PlanSummary } from '@driftline/protocol';
import { type AgentAutomergeDoc, type ConfirmMode, plainFacts, recordRuns } from './agentDoc.js';

/** Plan rounds of a 50-cell agent document, as the daemon records them (tests of decisions 330 and 500). */
export const N = 50;
export const HOUR = 3600_000;
export const T0 = Date.parse('2026-11-01T10:00:00.000Z');
export const comp = (i: number) => `component-${String(i).padStart(3, '0')}`;

export function summary(i: number, at: number, over: Partial<PlanSummary> = {}): PlanSummary {
  return {
    component: comp(i),
    environment: 'prod',
    status: 'clean',
    counts: { add: 0, change: 0, destroy: 0, replace: 0, import: 0, drift: 0 },
    resources: [],
    startedAt: new Date(at - 60_000).toISOString(),
    finishedAt: new Date(at).toISOString(),
    planHash: `${String(i).padStart(4, '0')}${'a'.repeat(60)}` as PlanSummary['planHash'],
    git: { commit: 'c'.repeat(40) } as PlanSummary['git'],
    ...over,
  };
}

/** The same run ids for the same round in both documents compared. */
const runId = (at: number, i: number) =>
  `01JC${String((at - T0) / HOUR).padStart(10, '0')}${String(i).padStart(12, '0')}`;

/** One plan round of every cell, recorded as one change, as the daemon records results that finish together. */
export function round(
  doc: AgentAutomergeDoc,
  at: number,
  confirmApart: ConfirmMode,
  over: (i: number) => Partial<PlanSummary> = () => ({}),
  /** The facts' queue depth (a round's recording reports it, with the time). */
  queueDepth = 0,
) {
  const facts: AgentFacts = {
    version: '0.1.0',
    cadenceS: Object.fromEntries(Array.from({ length: N }, (_, i) => [`prod/${comp(i)}`, 21_600])),
    queueDepth,
    reportedAt: at,
  };
  return recordRuns(
    doc,
    Array.from({ length: N }, (_, i) => ({
      runId: runId(at, i),
      summary: summary(i, at, over(i)),
      recordedAt: at,
    })),
    facts,
    plainFacts(doc),
    confirmApart,
  );
}
