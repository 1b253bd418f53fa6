import { RefNameSchema } from '@driftline/protocol';
import { z } from 'zod';

/**
 * Query parameters of the people's side, one zod schema per route. The routes parse with these and
 * `/api/openapi.json` declares its parameters from them, so what a route reads is what the document says.
 */

/** `GET /api/cells/{site}/{environment}/{component}/runs` */
export const RunsQuery = z.object({
  before: z
    .string()
    .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/)
    .optional()
    .describe('a run id: older runs only (the previous page’s nextBefore)'),
  limit: z.coerce.number().int().min(1).max(500).default(100).describe('runs per page'),
  ref: RefNameSchema.optional().describe(
    "only runs of this ref (pr/42); default the runs of the component's default ref",
  ),
});

/** `GET /api/audit` */
export const AuditQuery = z.object({
  limit: z.coerce.number().int().min(1).max(500).default(100).describe('entries per page'),
  before: z.coerce.number().int().positive().optional().describe('an entry id: older entries only'),
});

/** `GET /api/plan-requests` and `GET /api/publications` */
export const SiteFilterQuery = z.object({
  site: z.string().min(1).optional().describe('only this site'),
});

/** `GET /api/events` */
export const EventsQuery = z.object({
  lastEventId: z
    .string()
    .optional()
    .describe('for clients that cannot send the Last-Event-ID header: the last event id they saw'),
});

/** `GET /` */
export const SignInQuery = z.object({
  token: z
    .string()
    .optional()
    .describe('an operator token: signs in (session cookie) and answers 303 to /, or to /?signin=failed'),
});
