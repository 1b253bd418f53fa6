import { z } from 'zod';
import { ErrorCodeSchema } from './errors.js';
import { BundleIdSchema, SiteIdSchema } from './ids.js';

/**
 * JSON shapes of the hop API (`/v1/…`), served alike by relays and the hub (DESIGN, Wire).
 */

/**
 * One answer per bundle of a `POST /v1/bundles` batch, sent only after the node's commit (D1).
 * `stored`: taken into custody now; `duplicate`: already held or delivered (D2), also a success;
 * `rejected`: refused for `code`; the sender must not retry it unchanged.
 */
export const ReceiptSchema = z.object({
  bundleId: BundleIdSchema.nullable(),
  /** Position of the bundle in the batch, so a bundle too broken to have an id can be named. */
  index: z.number().int().nonnegative(),
  status: z.enum(['stored', 'duplicate', 'rejected']),
  code: ErrorCodeSchema.optional(),
  message: z.string().optional(),
  /** Who answered: `hub` or the relay's name; a relay's receipt prunes nothing at the agent (D4). */
  by: z.string(),
});
export type Receipt = z.infer<typeof ReceiptSchema>;

export const ReceiptsResponseSchema = z.object({ receipts: z.array(ReceiptSchema) });
export type ReceiptsResponse = z.infer<typeof ReceiptsResponseSchema>;

/** `GET /v1/bundles?for=<site>&after=<cursor>&limit=<n>` */
export const DownlinkQuerySchema = z.object({
  for: SiteIdSchema,
  after: z
    .string()
    .regex(/^[0-9]{1,20}$/, 'cursor is the decimal number the previous answer gave')
    .optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
export type DownlinkQuery = z.infer<typeof DownlinkQuerySchema>;

/** Response header carrying the cursor to pass as `after` next time. */
export const CURSOR_HEADER = 'driftline-cursor';

export const HealthSchema = z.object({
  ok: z.boolean(),
  role: z.enum(['relay', 'hub']),
  name: z.string(),
  version: z.string(),
  time: z.number().int(),
});
export type Health = z.infer<typeof HealthSchema>;
