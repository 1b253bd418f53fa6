import { parseWindow } from '@driftline/protocol';
import { z } from 'zod';
import type { ContactPlanSettings } from './core/contact/siteContact.js';

/**
 * `contactPlans:` of hub.yaml: how silence is judged against each site's contact windows, and windows
 * declared here for sites (beside those their agents declare). docs/decisions/260-contact-plans.md.
 */
export const ContactPlansConfigSchema = z
  .strictObject({
    graceS: z
      .number()
      .nonnegative()
      .default(60)
      .describe(
        "How long after a window ends its contact may still arrive (the agents' sync interval, light time), seconds.",
      ),
    unreachableAfterMissed: z
      .number()
      .int()
      .positive()
      .default(3)
      .describe('Missed windows in a row after which a site reads unreachable (one missed: overdue).'),
    learnSilenceS: z
      .number()
      .positive()
      .default(300)
      .describe(
        'Where no window is declared, a silence longer than this ends a contact session when windows are learned from history, seconds.',
      ),
    minConfidence: z
      .number()
      .min(0)
      .max(1)
      .default(0.6)
      .describe(
        'Learned windows judge silence only with at least this confidence (0…1); below, they are shown.',
      ),
    sites: z
      .record(
        z.string().max(200),
        z
          .array(
            z
              .string()
              .max(200)
              .superRefine((text, ctx) => {
                const r = parseWindow(text);
                if (!r.ok)
                  ctx.addIssue({
                    code: 'custom',
                    message: `${r.error} (see docs/configuration.md, contactPlans)`,
                  });
              }),
          )
          .max(50),
      )
      .default({})
      .describe(
        "Contact windows per site: 'every 4m for 40s from 2026-11-27T00:00:00Z', '0 2 * * * for 30m' (cron, UTC) or '2026-11-27T14:00:00Z for 8m', each optionally ending 'tz Europe/Berlin'. Sent, signed, to the site's agents; the site is judged by them once an agent says it holds them (decision 590).",
      ),
  })
  .prefault({})
  .describe('Contact plans: expected silence between windows is not an outage.');

export type ContactPlansConfig = z.infer<typeof ContactPlansConfigSchema>;

/** The settings the hub's core reads, in milliseconds. */
export function contactPlanSettings(c: ContactPlansConfig): ContactPlanSettings {
  return {
    graceMs: c.graceS * 1000,
    unreachableAfter: c.unreachableAfterMissed,
    learnSilenceMs: c.learnSilenceS * 1000,
    minConfidence: c.minConfidence,
    sites: c.sites,
  };
}
