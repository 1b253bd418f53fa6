import { API_PATHS, WireError } from '@driftline/protocol';
import { err } from '../openapiShared.js';
import { route } from './route.js';

/** `/api/sites`: every site, and one with its agents and cells. */
export const siteRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.sites,
    role: 'viewer',
    response: { status: 200, schema: 'SitesResponse', description: 'sites' },
    doc: { summary: 'Every site' },
    handler: async (_ctx, d) => ({ sites: await d.queries.sites(d.clock.now()) }),
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
