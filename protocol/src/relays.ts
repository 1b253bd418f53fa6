import { z } from 'zod';
import { RelayStatusSchema } from './hop.js';

/** One thing wrong at a relay, as `/api/relays` and the Links view show it, with the command that fixes it. */
export const RelayProblemSchema = z.object({
  code: z.enum(['sites-refused', 'token-refused', 'upstream-failing', 'refusals', 'custody-old', 'silent']),
  message: z.string(),
  /** The command (or step) that fixes it, as the operator runs it. */
  fix: z.string(),
});
export type RelayProblem = z.infer<typeof RelayProblemSchema>;

/** A peer (relay) the hub issued a token to, and what it last reported of itself (`POST /v1/status`). */
export const RelayInfoSchema = z.object({
  name: z.string(),
  /** The sites the hub lets it act for (`hub peer sites`). */
  sites: z.array(z.string()),
  /** The last time one of its tokens was used here (written at most once a minute). */
  lastUsedAt: z.iso.datetime().nullable(),
  /** When this hub took its last status, or null when it sent none (an older relay, or not yet). */
  reportedAt: z.iso.datetime().nullable(),
  status: RelayStatusSchema.nullable(),
  problems: z.array(RelayProblemSchema),
  /**
   * Enrolled without a key (`hub peer add --no-key`): the hub cannot check the clock terms it passes on,
   * so its agents' clocks are bounded by their own bounds only (decision 415). Absent from older hubs.
   */
  unkeyed: z.boolean().optional(),
  /**
   * When its last token was revoked (`hub peer revoke`): a revoked relay stays listed, its history being
   * audit material, with no problems. Absent for a relay with a working token, and from older hubs.
   */
  revokedAt: z.iso.datetime().nullable().optional(),
});
export type RelayInfo = z.infer<typeof RelayInfoSchema>;

/** `GET /api/relays` (viewer). */
export const RelaysResponseSchema = z.object({ relays: z.array(RelayInfoSchema) });
export type RelaysResponse = z.infer<typeof RelaysResponseSchema>;
