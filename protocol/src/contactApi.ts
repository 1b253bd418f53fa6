import { z } from 'zod';
import { CONTACT_STATES } from './contactJudge.js';

/**
 * A site's contact plan and where the site stands against it, as `/api/sites`, `/api/sites/:site` and
 * `/api/fleet` give it (docs/decisions/260-contact-plans.md). Absent from older hubs.
 */
export const SiteContactSchema = z.object({
  /** Where the windows come from: declared (agents or the hub's config), learned from history, or none. */
  source: z.enum(['declared', 'learned', 'none']),
  /** The windows in the declared format (`every 4m for 40s from …`, `0 2 * * * for 30m`). */
  windows: z.array(z.string()),
  /** For learned windows, 0…1; null when declared or none. */
  confidence: z.number().min(0).max(1).nullable(),
  /** Whether the hub judges silence by these windows (declared, or learned with enough confidence). */
  judged: z.boolean(),
  state: z.enum(CONTACT_STATES),
  nextWindowAt: z.iso.datetime().nullable(),
  nextWindowEndsAt: z.iso.datetime().nullable(),
  /** The latest window that opened (the open one, or the last one). */
  lastWindowAt: z.iso.datetime().nullable(),
  lastWindowEndsAt: z.iso.datetime().nullable(),
  /** Windows passed (end plus grace) without contact since the last contact. */
  missedWindows: z.number().int().nonnegative(),
  /** How long after a window ends its contact may still arrive, seconds. */
  graceS: z.number().nonnegative(),
  /** Missed windows after which the site reads unreachable. */
  unreachableAfter: z.number().int().positive(),
  /**
   * Windows declared for the site at the hub (`contactPlans.sites`) that no agent of the site says it
   * holds yet: sent down to it, never judged until it confirms them
   * (docs/decisions/590-windows-declared-once.md). Absent: none waiting (or an older hub).
   */
  unconfirmed: z.array(z.string()).optional(),
});
export type SiteContact = z.infer<typeof SiteContactSchema>;

/** The contact state a matrix cell carries when its site's silence is judged by a plan. */
export const CellContactSchema = z.enum(['in-window', 'waiting', 'overdue', 'unreachable']);
export type CellContact = z.infer<typeof CellContactSchema>;
