import { z } from 'zod';
import { AgentIdSchema, RunIdSchema, Sha256Schema, SiteIdSchema } from './ids.js';
import { PlanSummarySchema } from './plan-summary.js';

/** One plan run, immutable once recorded; keyed by its sortable `RunId`. */
export const RunRecordSchema = z.object({
  runId: RunIdSchema,
  site: SiteIdSchema,
  agent: AgentIdSchema,
  summary: PlanSummarySchema,
  /** sha256 of the compressed redacted detail blob, when one was stored. */
  detailBlob: Sha256Schema.optional(),
  /** Set when this run only confirms the previous plan for the cell ("unchanged as of <time>"). */
  unchangedFrom: RunIdSchema.optional(),
});
export type RunRecord = z.infer<typeof RunRecordSchema>;

/**
 * How a cell is keyed inside one site: `environment/component` for the component's default ref (or a
 * component without a repository), `environment/component@ref` for plans of any other ref.
 */
export function cellKey(environment: string, component: string, ref?: string | null): string {
  return ref ? `${environment}/${component}@${ref}` : `${environment}/${component}`;
}
