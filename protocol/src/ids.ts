import { z } from 'zod';

/**
 * Branded identifiers. A plain string cannot be passed where a `SiteId` is expected;
 * parse it with the schema (or `asSiteId`) at the boundary where it enters.
 */

const SLUG = /^[a-z0-9][a-z0-9._-]{0,62}$/;
const slugMessage = (what: string) =>
  `${what} must be 1-63 characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit`;

export const SiteIdSchema = z.string().regex(SLUG, slugMessage('site id')).brand<'SiteId'>();
export type SiteId = z.infer<typeof SiteIdSchema>;

export const AgentIdSchema = z.string().regex(SLUG, slugMessage('agent id')).brand<'AgentId'>();
export type AgentId = z.infer<typeof AgentIdSchema>;

/** ULID: 26 characters of Crockford base32, sortable by creation time. */
const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;
export const RunIdSchema = z
  .string()
  .regex(ULID, 'run id must be a ULID (26 characters of Crockford base32)')
  .brand<'RunId'>();
export type RunId = z.infer<typeof RunIdSchema>;

export const BundleIdSchema = z
  .string()
  .regex(ULID, 'bundle id must be a ULID (26 characters of Crockford base32)')
  .brand<'BundleId'>();
export type BundleId = z.infer<typeof BundleIdSchema>;

export const Sha256Schema = z
  .string()
  .regex(/^[0-9a-f]{64}$/, 'sha256 must be 64 lowercase hex characters')
  .brand<'Sha256'>();
export type Sha256 = z.infer<typeof Sha256Schema>;

export const asSiteId = (s: string): SiteId => SiteIdSchema.parse(s);
export const asAgentId = (s: string): AgentId => AgentIdSchema.parse(s);
export const asRunId = (s: string): RunId => RunIdSchema.parse(s);
export const asBundleId = (s: string): BundleId => BundleIdSchema.parse(s);
export const asSha256 = (s: string): Sha256 => Sha256Schema.parse(s);

/** `site/agent`: how an agent is named in logs, keys and messages. */
export function agentRef(site: SiteId, agent: AgentId): string {
  return `${site}/${agent}`;
}
