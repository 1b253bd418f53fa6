import { err, json, pathParam, queryParams, ref, retryLater, unauthorized } from './openapiShared.js';
import type { Need, Route } from './routes/route.js';

const NOT_MODIFIED = {
  '304': { description: 'not modified: the ETag sent in If-None-Match is current' },
};

/** `/a/:b` as OpenAPI writes it: `/a/{b}`. */
const templated = (path: string) => path.replace(/:(\w+)/g, '{$1}');

/** The path parameters of a route, in order. */
const pathParams = (path: string) => [...path.matchAll(/:(\w+)/g)].map((m) => m[1] ?? '');

function requestBody(r: Route): object | undefined {
  if (!r.body) return undefined;
  if ('stream' in r.body)
    return {
      required: true,
      content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
    };
  return { required: true, content: { 'application/json': { schema: ref(r.body.schema) } } };
}

/** One route's operation: from its schemas (query, body, answer) and its `doc`. */
function operation(r: Route): object {
  const parameters = [
    ...pathParams(r.path).map((name) => pathParam(name, r.doc.pathText?.[name])),
    ...(r.doc.headers ?? []),
    ...(r.query ? queryParams(r.query, r.doc.queryText) : []),
  ];
  const a = r.response;
  const body = requestBody(r);
  return {
    ...(r.doc.deprecated ? { deprecated: true } : {}),
    ...(r.doc.description ? { description: r.doc.description } : {}),
    summary: r.doc.summary,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(body ? { requestBody: body } : {}),
    responses: {
      [a.status]: 'schema' in a ? json(a.schema, a.description) : a.raw,
      ...(r.method === 'GET' && r.doc.conditional !== false ? NOT_MODIFIED : {}),
      ...(r.doc.others ?? {}),
    },
  };
}

/**
 * `op` with who may call it (`x-driftline-role`), its security (none for the open sign-in routes), the
 * answers every guarded route can give (401, 403), and the 429 of the rate limit and the 503 of a busy
 * store.
 */
export function withRole(op: object, need: Need): object {
  const responses = {
    '429': retryLater('rate limited'),
    ...(op as { responses?: object }).responses,
    '503': retryLater('the hub store is busy'),
  };
  return need === 'open'
    ? { tags: ['api'], ...op, responses, security: [], 'x-driftline-role': 'open' }
    : {
        tags: ['api'],
        ...op,
        'x-driftline-role': need,
        responses: {
          '401': unauthorized('no or wrong credential'),
          '403': err('the credential lacks the role, or a cookie write lacks X-Driftline-CSRF'),
          ...responses,
        },
      };
}

/** The operations of the `/api` routes, by OpenAPI path and method, each with its role. */
export function routePaths(routes: readonly Route[]): Record<string, Record<string, object>> {
  const out: Record<string, Record<string, object>> = {};
  for (const r of routes) {
    const path = templated(r.path);
    out[path] = { ...out[path], [r.method.toLowerCase()]: withRole(operation(r), r.role) };
  }
  return out;
}
