import { z } from 'zod';
import { globMatch } from './glob.js';
import { SiteIdSchema } from './ids.js';
import { PlanCountsSchema } from './planSummary.js';

/**
 * Git refs a site plans (branches, tags, `pr/<n>`), the cells a ref touches, and what a site needs
 * before it can plan (providers it lacks). Headquarters publishes source as git bundles and providers
 * as mirror files; the agent's local config decides which refs each component may plan.
 */

/** The ref every component plans when its config lists no `refs`. */
export const DEFAULT_REF = 'main';

const REF_CHARS = /^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$/;

/**
 * Why `name` is not an acceptable ref name (git's `check-ref-format` rules, narrowed to a charset
 * with no shell metacharacters), or null when it is fine.
 */
export function refNameProblem(name: string): string | null {
  if (!REF_CHARS.test(name))
    return 'a ref is 1-200 characters of letters, digits, ".", "_", "-" and "/", starting with a letter or digit';
  if (name.includes('..')) return 'a ref may not contain ".."';
  if (name.includes('//')) return 'a ref may not contain "//"';
  if (name.endsWith('/') || name.endsWith('.')) return 'a ref may not end with "/" or "."';
  if (name.split('/').some((s) => s.startsWith('.') || s.endsWith('.lock')))
    return 'no part of a ref may start with "." or end with ".lock"';
  return null;
}

/** A ref name: `main`, `release/2.1`, `pr/42`. */
export const RefNameSchema = z.string().superRefine((s, ctx) => {
  const p = refNameProblem(s);
  if (p) ctx.addIssue({ code: 'custom', message: p });
});

/** A ref pattern of a component's `refs`: a ref name where `*` stands for any characters (`pr/*`). */
export const RefPatternSchema = z.string().superRefine((s, ctx) => {
  const p = refNameProblem(s.replaceAll('*', 'x'));
  if (p) ctx.addIssue({ code: 'custom', message: p.replace('a ref', 'a ref pattern') });
});

/** Whether `ref` matches `pattern`, where `*` matches any run of characters (slashes included). */
export function refMatches(pattern: string, ref: string): boolean {
  return globMatch(pattern, ref);
}

/** A full commit id as git prints it (SHA-1 or SHA-256). */
export const CommitSchema = z.string().regex(/^[0-9a-f]{40}([0-9a-f]{24})?$/, 'must be a full commit id');

/** A provider build a site needs or has: `registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64`. */
export const ProviderBuildSchema = z
  .string()
  .max(300)
  .regex(
    /^[a-z0-9.-]{1,100}\/[a-z0-9_-]{1,64}\/[a-z0-9_-]{1,64}( [0-9A-Za-z.+-]{1,64}( [a-z0-9]{1,20}_[a-z0-9]{1,20})?)?$/,
    'must be "<host>/<namespace>/<type> [<version> [<os>_<arch>]]"',
  );

/** `GET /api/refs/:ref/status?commit=`: whether every cell the ref touches has a plan of the commit. */
export const REF_GATE_STATES = ['complete', 'pending', 'blocked', 'failed'] as const;
export const RefGateStateSchema = z.enum(REF_GATE_STATES);
export type RefGateState = z.infer<typeof RefGateStateSchema>;

export const RefCellStatusSchema = z.object({
  site: SiteIdSchema,
  environment: z.string(),
  component: z.string(),
  /** This cell's part of the gate: a plan of the commit exists (`complete`), failed, is blocked, or not yet. */
  state: RefGateStateSchema,
  /** The plan's status (`changes`, `clean`, `drift`, `failed`, `blocked`, …) when one of the commit exists. */
  planStatus: z.string().nullable(),
  counts: PlanCountsSchema.nullable(),
  /** The commit the cell's latest plan of this ref was of, if any. */
  commit: z.string().nullable(),
  plannedAt: z.iso.datetime().nullable(),
  receivedAt: z.iso.datetime().nullable(),
  runId: z.string().nullable(),
  reason: z.string().nullable(),
  needs: z.array(z.string()),
  /**
   * Publications on their way to the site that answer every need of a `blocked` plan: the cell is then
   * `pending` (the site plans again when they are placed), not blocked. Absent or empty otherwise.
   */
  onTheWay: z.array(z.string()).optional(),
});
export type RefCellStatus = z.infer<typeof RefCellStatusSchema>;

export const RefStatusResponseSchema = z.object({
  ref: z.string(),
  commit: z.string(),
  /** failed if any cell failed, else blocked if any is blocked, else pending if any is pending, else complete. */
  state: RefGateStateSchema,
  counts: z.object({
    complete: z.number().int().nonnegative(),
    pending: z.number().int().nonnegative(),
    blocked: z.number().int().nonnegative(),
    failed: z.number().int().nonnegative(),
    total: z.number().int().nonnegative(),
  }),
  /**
   * `counts` cover every cell; `cells` lists every cell while the ref touches at most 1,000 cells, past
   * that only the cells not complete (at most 1,000, the first by site and cell).
   */
  cells: z.array(RefCellStatusSchema),
});
export type RefStatusResponse = z.infer<typeof RefStatusResponseSchema>;

/** `GET /api/refs`: refs the hub holds plans of, with how many cells and when last planned. */
export const RefsResponseSchema = z.object({
  refs: z.array(
    z.object({
      ref: z.string(),
      cells: z.number().int().nonnegative(),
      lastPlannedAt: z.iso.datetime().nullable(),
      lastReceivedAt: z.iso.datetime().nullable(),
    }),
  ),
});
export type RefsResponse = z.infer<typeof RefsResponseSchema>;

/** `GET /api/needs`: what each site lacks to plan, and which cells wait for it. */
export const NeedSchema = z.object({
  site: SiteIdSchema,
  need: z.string(),
  cells: z.array(z.object({ environment: z.string(), component: z.string(), ref: z.string().nullable() })),
  /** When the oldest of those blocked plans ran, ISO 8601. */
  since: z.iso.datetime().nullable(),
});
export type Need = z.infer<typeof NeedSchema>;
export const NeedsResponseSchema = z.object({ needs: z.array(NeedSchema) });
export type NeedsResponse = z.infer<typeof NeedsResponseSchema>;

/**
 * `GET /api/sources?site=`: what each site reported holding, for publishers: the heads of its git
 * mirrors (so the next bundle sends only what it lacks), the provider builds in its mirror, its platform.
 */
export const SiteSourcesSchema = z.object({
  site: SiteIdSchema,
  /** Repository name → ref → commit, merged over the site's agents. */
  repos: z.record(z.string(), z.record(z.string(), z.string())),
  providers: z.array(z.string()),
  /** `os_arch` of the site's agents, e.g. `linux_amd64`. */
  platforms: z.array(z.string()),
  /** When the newest of these facts was reported, ISO 8601. */
  reportedAt: z.iso.datetime().nullable(),
});
export type SiteSources = z.infer<typeof SiteSourcesSchema>;
export const SourcesResponseSchema = z.object({ sites: z.array(SiteSourcesSchema) });
export type SourcesResponse = z.infer<typeof SourcesResponseSchema>;
