import { z } from 'zod';
import { AgentIdSchema, RunIdSchema, Sha256Schema, SiteIdSchema } from './ids.js';
import { PlanSummarySchema } from './planSummary.js';

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

/**
 * A site's cell, keyed across sites (`site`, then the cell's parts, NUL-separated: no part can hold a
 * NUL, so two cells never share a key). For maps over many sites (the hub's batch, the dashboard).
 */
export function siteCellKey(
  site: string,
  environment: string,
  component: string,
  ref?: string | null,
): string {
  return `${site}\u0000${environment}\u0000${component}\u0000${ref ?? ''}`;
}

/**
 * The statuses that are failures: kept past the run count by retention, pushed first by the agent,
 * never pruned before the hub holds them.
 */
export const FAILURE_STATUSES = ['failed', 'locked', 'redaction-failed'] as const;
export type FailureStatus = (typeof FAILURE_STATUSES)[number];

export function isFailureStatus(status: string): status is FailureStatus {
  return (FAILURE_STATUSES as readonly string[]).includes(status);
}

/**
 * Whether a plan is the same as a cell's current one ("unchanged as of"): both carry a plan hash, the
 * hashes are equal and so is the status (the same plan can be `changes` one day and `drift` the next
 * when the approved state moved). The agent then only confirms the cell; the hub marks such a run
 * `unchanged`. One rule for both sides.
 */
export function isUnchangedPlan(
  current: { planHash?: string | null; status?: string } | null | undefined,
  next: { planHash?: string | null; status: string },
): boolean {
  return !!current && !!next.planHash && current.planHash === next.planHash && current.status === next.status;
}
