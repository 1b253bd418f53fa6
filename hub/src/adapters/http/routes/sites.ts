import {
  API_PATHS,
  SITES_PAGE_DEFAULT,
  SITES_PAGE_MAX,
  SitesQuerySchema,
  WireError,
} from '@driftline/protocol';
import { err } from '../openapiShared.js';
import { route } from './route.js';

/** `/api/sites`: sites a page at a time, and one with its agents and cells. */
export const siteRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.sites,
    role: 'viewer',
    query: SitesQuerySchema,
    response: { status: 200, schema: 'SitesResponse', description: 'sites' },
    doc: {
      summary: 'Sites, a page at a time, ordered and paged by the hub',
      queryText: {
        sort: 'site (default), -site, lastContact (oldest first), -lastContact, problems (most failed, drifted or stale cells first)',
        limit: `most sites in this page (default ${SITES_PAGE_DEFAULT}, at most ${SITES_PAGE_MAX})`,
        cursor: 'the `next` of the previous page',
        contains: 'only sites whose name contains this text',
      },
      others: { '400': err('bad query') },
    },
    handler: async (_ctx, d, q) => d.queries.fleet.sitesPage(q, d.clock.now()),
  }),
  route({
    method: 'GET',
    path: API_PATHS.site,
    role: 'viewer',
    response: { status: 200, schema: 'SiteDetail', description: 'site' },
    doc: { summary: 'One site with its agents and cells', others: { '404': err('no such site') } },
    handler: async (ctx, d) => {
      const site = await d.queries.site(ctx.params.site ?? '', d.clock.now());
      if (!site) throw new WireError('not-found', `no site '${ctx.params.site}' (see GET /api/sites)`);
      return site;
    },
  }),
];
