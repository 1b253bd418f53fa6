import { API_PATHS, MatrixQuerySchema } from '@driftline/protocol';
import { err } from '../openapiShared.js';
import { checkRefQuery } from './refs.js';
import { route } from './route.js';

/** `/api/matrix`: the cells (site × environment × component), now or as known at `at`. */
export const matrixRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.matrix,
    role: 'viewer',
    query: MatrixQuerySchema,
    response: { status: 200, schema: 'MatrixResponse', description: 'cells' },
    doc: {
      summary: 'The matrix of cells (site × environment × component), now or as known at `at`',
      queryText: {
        site: 'only this site',
        environment: 'only this environment',
        component: 'only this component',
        status: 'only cells with this status',
        stale: 'only stale (true) or fresh (false) cells',
        at: 'ISO 8601 time: the matrix as the hub knew it then',
        ref: "plans of this ref (pr/42): its cells and no-data for cells that may plan it; default each component's default ref; not with at",
      },
      others: { '400': err('bad query') },
    },
    handler: async (_ctx, d, q) => {
      checkRefQuery(q);
      const now = d.clock.now();
      const at = q.at ? Date.parse(q.at) : undefined;
      const cells = await d.queries.matrix(q, now, at);
      return { cells, asOf: new Date(at ?? now).toISOString() };
    },
  }),
];
