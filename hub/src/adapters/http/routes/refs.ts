import {
  API_PATHS,
  MAX_SOURCE_SITES,
  NeedsQuerySchema,
  RefNameSchema,
  RefStatusQuerySchema,
  RefsQuerySchema,
  refNameProblem,
  SiteIdSchema,
  SourcesQuerySchema,
  WireError,
} from '@driftline/protocol';
import { err } from '../openapiShared.js';
import { parseOr400 } from '../parse.js';
import { route } from './route.js';

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
export const refRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.refs,
    role: 'viewer',
    query: RefsQuerySchema,
    response: { status: 200, schema: 'RefsResponse', description: 'refs' },
    doc: {
      summary: 'Refs the hub holds plans of, newest plan first, with how many cells each',
      others: { '400': err('bad query') },
    },
    handler: (_ctx, d, q) => d.queries.refs.refs(q.limit),
  }),
  route({
    method: 'GET',
    // A ref's slashes are percent-encoded (pr%2F42): the guard matches segment by segment, decoded.
    path: API_PATHS.refStatus,
    role: 'viewer',
    query: RefStatusQuerySchema,
    response: { status: 200, schema: 'RefStatusResponse', description: 'the gate and each cell' },
    doc: {
      summary:
        'The CI gate: whether every cell the ref touches (its agents may plan it, or it has plans of it) has a plan of the commit. ' +
        'Overall failed > blocked > pending > complete.',
      description:
        '`counts` cover every cell; `cells` lists every cell while the ref touches at most 1,000, past that only the cells not complete (at most 1,000, the first by site and cell).',
      pathText: { ref: 'the ref, percent-encoded (pr%2F42)' },
      others: { '400': err('bad ref name or commit'), '404': err('no site plans this ref') },
    },
    // The path parameter is checked before the query, as it always was.
    queryByHandler: true,
    handler: async (ctx, d) => {
      const ref = RefNameSchema.safeParse(ctx.params.ref ?? '');
      if (!ref.success)
        throw new WireError(
          'bad-request',
          `path parameter 'ref': ${ref.error.issues[0]?.message} (percent-encode a slash: pr%2F42)`,
        );
      const q = parseOr400(RefStatusQuerySchema, ctx.query, 'query parameter');
      const status = await d.queries.refs.status(ref.data, q.commit, d.clock.now());
      if (!status)
        throw new WireError(
          'not-found',
          `no site plans ref '${ref.data}': check the components' refs (source.refs in agent.yaml)`,
        );
      return status;
    },
  }),
  route({
    method: 'GET',
    path: API_PATHS.needs,
    role: 'viewer',
    query: NeedsQuerySchema,
    response: { status: 200, schema: 'NeedsResponse', description: 'needs' },
    doc: {
      summary: 'What sites lack to plan (provider builds, commits), from blocked cells, by site and need',
      others: { '400': err('bad query') },
    },
    handler: (_ctx, d, q) => d.queries.refs.needs(q.site),
  }),
  route({
    method: 'GET',
    // Publishers read what sites hold; every role implies viewer.
    path: API_PATHS.sources,
    role: 'viewer',
    query: SourcesQuerySchema,
    response: { status: 200, schema: 'SourcesResponse', description: 'per site' },
    doc: {
      summary:
        'What sites hold, for publishers: heads of their git mirrors, provider builds, platforms (as their agents report)',
      others: { '400': err('bad query'), '404': err('a named site has no enrolled agent') },
    },
    handler: async (_ctx, d, q) => {
      const sites = q.site === undefined || q.site === 'all' ? null : [...new Set(q.site.split(','))];
      if (sites && sites.length > MAX_SOURCE_SITES)
        throw new WireError('bad-query', `query parameter 'site': at most ${MAX_SOURCE_SITES} sites`);
      for (const s of sites ?? [])
        if (!SiteIdSchema.safeParse(s).success)
          throw new WireError('bad-query', `query parameter 'site': '${s.slice(0, 100)}' is not a site id`);
      const answer = await d.queries.refs.sources(sites);
      const missing = (sites ?? []).filter((s) => !answer.sites.some((x) => x.site === s));
      if (missing.length > 0)
        throw new WireError(
          'not-found',
          `no enrolled agent at site(s) ${missing.join(', ')} (see GET /api/sites)`,
        );
      return answer;
    },
  }),
];
