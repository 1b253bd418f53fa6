import { API_PATHS, MATRIX_PAGE_MAX, MatrixQuerySchema } from '@driftline/protocol';
import { decodeCellCursor, encodeCellCursor, SPANNING_PAGE_MAX } from '../../../core/fleet/MatrixWindow.js';
import { pageWhole } from '../../../core/fleet/pageWhole.js';
import { err } from '../openapiShared.js';
import { checkRefQuery } from './refs.js';
import { route } from './route.js';

/**
 * `/api/matrix`: a window of the cells (site × environment × component) now, through the read model's
 * indexes, or as known at `at` / of a ref; every answer is a bounded page with a cursor.
 */
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
        sites: 'a window of rows: only these sites, comma-separated (at most 500)',
        limit: `most cells in this answer (default and at most ${MATRIX_PAGE_MAX} for one site or a window of sites, ${SPANNING_PAGE_MAX} for a page across sites)`,
        cursor: 'the `next` of the previous page',
        ref: "plans of this ref (pr/42): its cells and no-data for cells that may plan it; default each component's default ref; not with at",
      },
      others: { '400': err('bad query') },
    },
    handler: async (_ctx, d, q) => {
      checkRefQuery(q);
      const now = d.clock.now();
      if (q.at === undefined && q.ref === undefined) {
        const { cells, next } = await d.queries.window.page(q, now);
        return { cells, asOf: new Date(now).toISOString(), next };
      }
      if (q.ref !== undefined) {
        // A ref's matrix by ranges of its index, bounded by the page (docs/decisions/650-ref-matrix-pages.md).
        const { cells, next } = await d.queries.refPages.page({ ...q, ref: q.ref }, now);
        return { cells, asOf: new Date(now).toISOString(), next };
      }
      // The matrix of a past time is computed whole, then paged the same way.
      const at = q.at ? Date.parse(q.at) : undefined;
      const all = await d.queries.matrix(q, now, at);
      const sites = q.sites ? new Set(q.sites) : null;
      const limit = Math.min(q.limit ?? MATRIX_PAGE_MAX, MATRIX_PAGE_MAX);
      const { cells, last } = pageWhole(
        sites ? all.filter((c) => sites.has(c.site)) : all,
        decodeCellCursor(q.cursor),
        limit,
      );
      return { cells, asOf: new Date(at ?? now).toISOString(), next: last ? encodeCellCursor(last) : null };
    },
  }),
];
