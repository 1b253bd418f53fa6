import { z } from 'zod';
import { RunIdSchema, SiteIdSchema } from './ids.js';
import { PlanCountsSchema, PlanStatusSchema } from './plan-summary.js';

/**
 * The hub's dashboard API (`/api/…`). Field names of `MatrixCell` are read by the team's own checks:
 * keep them as they are.
 */

export const CellStatusSchema = z.union([PlanStatusSchema, z.literal('no-data')]);
export type CellStatus = z.infer<typeof CellStatusSchema>;

export const MatrixCellSchema = z.object({
  site: SiteIdSchema,
  environment: z.string(),
  component: z.string(),
  status: CellStatusSchema,
  counts: PlanCountsSchema.nullable(),
  /** When the plan ran at the site (its clock, corrected by the offset estimate), ISO 8601. */
  plannedAt: z.iso.datetime().nullable(),
  /** When the fact reached the hub, ISO 8601. */
  receivedAt: z.iso.datetime().nullable(),
  runId: RunIdSchema.nullable(),
  expectedIntervalS: z.number().nonnegative().nullable(),
  stale: z.boolean(),
  siteUnreachable: z.boolean(),
  reason: z.string().nullable().optional(),
});
export type MatrixCell = z.infer<typeof MatrixCellSchema>;

export const MatrixResponseSchema = z.object({
  cells: z.array(MatrixCellSchema),
  /** The hub time the matrix describes (now, or `at`). */
  asOf: z.iso.datetime().optional(),
});
export type MatrixResponse = z.infer<typeof MatrixResponseSchema>;

export const MatrixQuerySchema = z.object({
  site: z.string().optional(),
  environment: z.string().optional(),
  component: z.string().optional(),
  status: CellStatusSchema.optional(),
  stale: z
    .enum(['true', 'false'])
    .transform((s) => s === 'true')
    .optional(),
  at: z.iso.datetime().optional(),
});
export type MatrixQuery = z.infer<typeof MatrixQuerySchema>;
