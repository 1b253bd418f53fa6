import {
  CommitSchema,
  NeedsResponseSchema,
  RefNameSchema,
  RefStatusResponseSchema,
  RefsResponseSchema,
  refNameProblem,
  SiteIdSchema,
  SourcesResponseSchema,
  WireError,
} from '@driftline/protocol';
import Router from '@koa/router';
import { z } from 'zod';
import type { RefQueries } from '../../core/RefQueries.js';
import { parseOr400 } from './parse.js';

/** Most sites one `GET /api/sources` names. */
export const MAX_SOURCE_SITES = 100;

/** `GET /api/refs` */
export const RefsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('refs, newest plan first'),
});

/** `GET /api/refs/{ref}/status` */
export const RefStatusQuery = z.object({
  commit: CommitSchema.describe('the full commit id whose plans the gate waits for'),
});

/** `GET /api/needs` */
export const NeedsQuery = z.object({
  site: z.string().min(1).max(200).optional().describe('only this site'),
});

/** `GET /api/sources` */
export const SourcesQuery = z.object({
  site: z
    .string()
    .min(1)
    .max(MAX_SOURCE_SITES * 101)
    .optional()
    .describe(`site ids, comma-separated (at most ${MAX_SOURCE_SITES}); default every site`),
});

/**
 * A `ref` query parameter (`/api/matrix?ref=`, runs `?ref=`) checked as a ref name; `at` (a past
 * matrix) cannot be combined with it: the hub keeps no history of other refs' cells.
 */
export function checkRefQuery(q: { ref?: string; at?: string }): void {
  if (q.ref === undefined) return;
  const problem = refNameProblem(q.ref);
  if (problem) throw new WireError('bad-query', `query parameter 'ref': ${problem}`);
  if (q.at !== undefined)
    throw new WireError('bad-query', "query parameters 'ref' and 'at' cannot be combined: drop 'at'");
}

/** `/api/refs`, `/api/refs/{ref}/status`, `/api/needs`, `/api/sources`: plans of refs and what sites need. */
export function refsRouter(d: { refs: RefQueries; clock: { now(): number } }): Router {
  const r = new Router({ prefix: '/api' });
  r.get('/refs', async (ctx) => {
    const q = parseOr400(RefsQuery, ctx.query, 'query parameter');
    ctx.body = RefsResponseSchema.parse(await d.refs.refs(q.limit));
  });
  r.get('/refs/:ref/status', async (ctx) => {
    const ref = RefNameSchema.safeParse(ctx.params.ref ?? '');
    if (!ref.success)
      throw new WireError(
        'bad-request',
        `path parameter 'ref': ${ref.error.issues[0]?.message} (percent-encode a slash: pr%2F42)`,
      );
    const q = parseOr400(RefStatusQuery, ctx.query, 'query parameter');
    const status = await d.refs.status(ref.data, q.commit, d.clock.now());
    if (!status)
      throw new WireError(
        'not-found',
        `no site plans ref '${ref.data}': check the components' refs (source.refs in agent.yaml)`,
      );
    ctx.body = RefStatusResponseSchema.parse(status);
  });
  r.get('/needs', async (ctx) => {
    const q = parseOr400(NeedsQuery, ctx.query, 'query parameter');
    ctx.body = NeedsResponseSchema.parse(await d.refs.needs(q.site));
  });
  r.get('/sources', async (ctx) => {
    const q = parseOr400(SourcesQuery, ctx.query, 'query parameter');
    const sites = q.site === undefined || q.site === 'all' ? null : [...new Set(q.site.split(','))];
    if (sites && sites.length > MAX_SOURCE_SITES)
      throw new WireError('bad-query', `query parameter 'site': at most ${MAX_SOURCE_SITES} sites`);
    for (const s of sites ?? [])
      if (!SiteIdSchema.safeParse(s).success)
        throw new WireError('bad-query', `query parameter 'site': '${s.slice(0, 100)}' is not a site id`);
    const answer = await d.refs.sources(sites);
    const missing = (sites ?? []).filter((s) => !answer.sites.some((x) => x.site === s));
    if (missing.length > 0)
      throw new WireError(
        'not-found',
        `no enrolled agent at site(s) ${missing.join(', ')} (see GET /api/sites)`,
      );
    ctx.body = SourcesResponseSchema.parse(answer);
  });
  return r;
}
