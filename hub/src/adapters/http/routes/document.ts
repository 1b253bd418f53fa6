import { API_PATHS } from '@driftline/protocol';
import { raw } from '../openapiShared.js';
import { route } from './route.js';

/** `/api/openapi.json`: the document generated from this table (docs/decisions/280-one-place-per-decision.md). */
export const documentRoutes = [
  route({
    method: 'GET',
    path: API_PATHS.openapi,
    role: 'viewer',
    response: { status: 200, raw: raw('application/json', 'the OpenAPI document', { type: 'object' }) },
    doc: { summary: 'This document' },
    handler: (ctx, d) => {
      ctx.body = d.openApi();
    },
  }),
];
