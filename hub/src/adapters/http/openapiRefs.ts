import { err, json, pathParam, queryParams } from './openapiShared.js';
import { NeedsQuery, RefStatusQuery, RefsQuery, SourcesQuery } from './refsRouter.js';

const notModified = { '304': { description: 'not modified: the ETag sent in If-None-Match is current' } };

/** Paths for plans of refs (the CI gate), what sites need and what they hold. */
export function refPaths(): Record<string, Record<string, object>> {
  return {
    '/api/refs': {
      get: {
        summary: 'Refs the hub holds plans of, newest plan first, with how many cells each',
        parameters: queryParams(RefsQuery),
        responses: { '200': json('RefsResponse', 'refs'), ...notModified, '400': err('bad query') },
      },
    },
    '/api/refs/{ref}/status': {
      get: {
        summary:
          'The CI gate: whether every cell the ref touches (its agents may plan it, or it has plans of it) has a plan of the commit. ' +
          'Overall failed > blocked > pending > complete.',
        parameters: [pathParam('ref', 'the ref, percent-encoded (pr%2F42)'), ...queryParams(RefStatusQuery)],
        responses: {
          '200': json('RefStatusResponse', 'the gate and each cell'),
          ...notModified,
          '400': err('bad ref name or commit'),
          '404': err('no site plans this ref'),
        },
      },
    },
    '/api/needs': {
      get: {
        summary: 'What sites lack to plan (provider builds, commits), from blocked cells, by site and need',
        parameters: queryParams(NeedsQuery),
        responses: { '200': json('NeedsResponse', 'needs'), ...notModified, '400': err('bad query') },
      },
    },
    '/api/sources': {
      get: {
        summary:
          'What sites hold, for publishers: heads of their git mirrors, provider builds, platforms (as their agents report)',
        parameters: queryParams(SourcesQuery),
        responses: {
          '200': json('SourcesResponse', 'per site'),
          ...notModified,
          '400': err('bad query'),
          '404': err('a named site has no enrolled agent'),
        },
      },
    },
  };
}
