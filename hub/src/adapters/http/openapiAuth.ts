import { policyFor } from './policy.js';

/** The component schemas these paths refer to. */
type SchemaName =
  | 'Session'
  | 'SessionCreate'
  | 'AuditResponse'
  | 'BundleDetail'
  | 'BundlesResponse'
  | 'Error';
type Ref = (name: SchemaName) => object;
type Json = (name: SchemaName, description: string) => object;

const q = (name: string, description: string) => ({
  name,
  in: 'query',
  schema: { type: 'string' },
  description,
});
const err = (json: Json, description: string) => json('Error', description);

/** Security schemes of the people's side: an operator token, or the dashboard's session cookie. */
export const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'An operator token from `hub user add`' },
  cookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'driftline_session',
    description:
      'Set by sign-in; writes also send header X-Driftline-CSRF with the value GET /api/session gives',
  },
};

/** Paths for sign-in, the audit log and bundles to outposts. */
export function authPaths(ref: Ref, json: Json): Record<string, object> {
  return {
    '/api/session': {
      get: {
        summary:
          'Who is signed in, with which roles and how; `csrf` is the value cookie-authenticated writes send',
        responses: { '200': json('Session', 'signed in'), '401': err(json, 'not signed in') },
      },
      post: {
        summary: 'Sign in with an operator token: sets the session cookie',
        requestBody: { required: true, content: { 'application/json': { schema: ref('SessionCreate') } } },
        responses: {
          '200': json('Session', 'signed in; Set-Cookie carries the session'),
          '401': err(json, 'wrong or revoked token'),
          '429': err(json, 'too many failed sign-ins from this address'),
        },
      },
      delete: {
        summary: 'Sign out: deletes the session and clears the cookie',
        responses: { '204': { description: 'signed out' } },
      },
    },
    '/api/audit': {
      get: {
        summary: 'The audit log, newest first',
        parameters: [q('limit', '1-500, default 100'), q('before', 'an entry id: older entries only')],
        responses: { '200': json('AuditResponse', 'entries'), '400': err(json, 'bad query') },
      },
    },
    '/api/bundles': {
      get: {
        summary: 'Published bundles with delivery counts',
        parameters: [q('site', 'only this site')],
        responses: { '200': json('BundlesResponse', 'bundles') },
      },
      post: {
        summary:
          'Publish the request body as a signed bundle to sites (streamed; at most api.maxUploadBytes)',
        parameters: [
          q('site', "site ids, comma-separated, or 'all'"),
          q('name', 'name shown and used for the placed file'),
          q('kind', 'file kind'),
          q('ttl', 'seconds until it expires'),
        ],
        requestBody: {
          required: true,
          content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
        },
        responses: { '201': json('BundleDetail', 'published'), '413': err(json, 'over api.maxUploadBytes') },
      },
    },
    '/api/bundles/{bundleId}': {
      get: {
        summary: 'One bundle with per-site delivery',
        parameters: [{ name: 'bundleId', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { '200': json('BundleDetail', 'bundle'), '404': err(json, 'not found') },
      },
    },
  };
}

/**
 * Adds to every operation who may call it (`x-driftline-role`, from the route policy), its security
 * (none for the open sign-in routes) and the answers every guarded route can give (401, 403, 429).
 */
export function withRoles(paths: Record<string, object>, json: Json): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [path, ops] of Object.entries(paths)) {
    const next: Record<string, object> = {};
    for (const [method, op] of Object.entries(ops as Record<string, object>)) {
      const policy = policyFor(method, path.replace(/\{(\w+)\}/g, ':$1'));
      const responses = (op as { responses?: object }).responses ?? {};
      next[method] =
        policy.need === 'open'
          ? { ...op, security: [], 'x-driftline-role': 'open' }
          : {
              ...op,
              'x-driftline-role': policy.need,
              responses: {
                '401': err(json, 'no or wrong credential (WWW-Authenticate: Bearer realm="driftline")'),
                '403': err(json, 'the credential lacks the role, or a cookie write lacks X-Driftline-CSRF'),
                '429': err(json, 'rate limited; see Retry-After'),
                ...responses,
              },
            };
    }
    out[path] = next;
  }
  return out;
}
