import { DocApplySchema, unpackDocEntry } from '@driftline/protocol';
import type { ApplyRow } from '../ports/HubStore.js';

/** Most apply records read from one document at once: the rest wait for its next change. */
export const MAX_APPLIES_PER_DOC = 500;

/**
 * The agent's `applies` map (one record per approved run) as hub rows, agent times corrected by
 * `offsetMs` (agent clock minus hub clock). Records that fail `DocApplySchema`, or whose key is not
 * their run id, are skipped and named in `invalid`.
 */
export function applyRows(
  site: string,
  agent: string,
  value: unknown,
  offsetMs: number,
): { rows: ApplyRow[]; invalid: string[] } {
  const rows: ApplyRow[] = [];
  const invalid: string[] = [];
  if (!value || typeof value !== 'object') return { rows, invalid };
  const toHub = (t: number | undefined) => (t === undefined ? null : t - offsetMs);
  for (const [key, raw] of Object.entries(value as Record<string, unknown>).slice(0, MAX_APPLIES_PER_DOC)) {
    // Written as a map or packed (JSON text), as the agent writes runs and cells.
    const p = DocApplySchema.safeParse(unpackDocEntry(raw));
    if (!p.success || p.data.runId !== key) {
      invalid.push(`applies.${key.slice(0, 64)}`);
      continue;
    }
    const a = p.data;
    rows.push({
      site,
      agent,
      runId: a.runId,
      environment: a.environment,
      component: a.component,
      state: a.state,
      reason: a.reason ?? null,
      approvalIds: [...a.approvalIds],
      approvers: [...a.approvers],
      ...(a.refused ? { refused: a.refused.map((x) => ({ ...x, at: x.at - offsetMs })) } : {}),
      receivedAt: a.receivedAt - offsetMs,
      startedAt: toHub(a.startedAt),
      finishedAt: toHub(a.finishedAt),
      errorExcerpt: a.errorExcerpt ?? null,
      nextRunId: a.nextRunId ?? null,
      updatedAt: a.updatedAt - offsetMs,
    });
  }
  return { rows, invalid };
}
