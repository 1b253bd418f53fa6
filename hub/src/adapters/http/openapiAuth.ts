import { PublishQuerySchema } from '@driftline/protocol';
import { LEGACY_PATH, PUBLICATIONS_PATH } from '../publish/publicationApi.js';
import { err, json, pathParam, queryParams, ref, retryLater, unauthorized } from './openapiShared.js';
import { policyFor } from './policy.js';
import { AuditQuery, SiteFilterQuery } from './queries.js';

const notModified = { '304': { description: 'not modified: the ETag sent in If-None-Match is current' } };

/**
 * Security schemes: an operator token or the dashboard's session cookie on the people's side; a peer
 * token on the hop API.
 */
export const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'An operator token from `hub user add`' },
  cookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'driftline_session',
    description:
      'Set by sign-in; writes also send header X-Driftline-CSRF with the value GET /api/session gives',
  },
  peer: {
    type: 'http',
    scheme: 'bearer',
    description: 'A peer token from `hub peer` (a relay, or an agent talking to the hub directly)',
  },
};

/** Paths for sign-in, the audit log and publications. */
export function authPaths(): Record<string, Record<string, object>> {
  return {
    '/api/session': {
      get: {
        summary:
          'Who is signed in, with which roles and how; `csrf` is the value cookie-authenticated writes send',
        responses: {
          '200': json('Session', 'signed in'),
          ...notModified,
          '401': unauthorized('not signed in'),
        },
      },
      post: {
        summary: 'Sign in with an operator token: sets the session cookie',
        requestBody: { required: true, content: { 'application/json': { schema: ref('SessionCreate') } } },
        responses: {
          '200': json('Session', 'signed in; Set-Cookie carries the session'),
          '400': err('not { "token": "…" }, or not JSON'),
          '401': unauthorized('wrong or revoked token'),
          '413': err('body over 4 KiB'),
          '429': retryLater('too many failed sign-ins from this address'),
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
        parameters: queryParams(AuditQuery),
        responses: { '200': json('AuditResponse', 'entries'), ...notModified, '400': err('bad query') },
      },
    },
    ...publicationPaths(false),
    ...publicationPaths(true),
  };
}

/**
 * Adds to every operation of the people's side who may call it (`x-driftline-role`, from the route
 * policy), its security (none for the open sign-in routes), the answers every guarded route can give
 * (401, 403), and to every one the 429 of the rate limit and the 503 of a busy store. Operations that already name their role
 * (the hop API, the dashboard's files) are kept as they are.
 */
export function withRoles(paths: Record<string, Record<string, object>>): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [path, ops] of Object.entries(paths)) {
    const next: Record<string, object> = {};
    for (const [method, op] of Object.entries(ops)) {
      if ('x-driftline-role' in op) {
        next[method] = op;
        continue;
      }
      const policy = policyFor(method, path.replace(/\{(\w+)\}/g, ':$1'));
      const responses = {
        '429': retryLater('rate limited'),
        ...((op as { responses?: object }).responses ?? {}),
        '503': retryLater('the hub store is busy'),
      };
      next[method] =
        policy.need === 'open'
          ? { tags: ['api'], ...op, responses, security: [], 'x-driftline-role': 'open' }
          : {
              tags: ['api'],
              ...op,
              'x-driftline-role': policy.need,
              responses: {
                '401': unauthorized('no or wrong credential'),
                '403': err('the credential lacks the role, or a cookie write lacks X-Driftline-CSRF'),
                ...responses,
              },
            };
    }
    out[path] = next;
  }
  return out;
}

/**
 * `/api/publications`, or with `legacy` its deprecated name `/api/bundles` (decision 170): the same
 * routes answering the old field names (`bundleId`, `bundles`), with `Deprecation` and `Link` headers.
 */
function publicationPaths(legacy: boolean): Record<string, Record<string, object>> {
  const base = legacy ? LEGACY_PATH : PUBLICATIONS_PATH;
  const id = legacy ? 'bundleId' : 'publicationId';
  const detail = legacy ? 'LegacyBundleDetail' : 'PublicationDetail';
  const old = legacy
    ? { deprecated: true, description: 'Deprecated: use /api/publications (same answer, new field names).' }
    : {};
  return {
    [base]: {
      get: {
        ...old,
        summary: 'Publications (files published to sites) with delivery counts',
        parameters: queryParams(SiteFilterQuery),
        responses: {
          '200': json(legacy ? 'LegacyBundlesResponse' : 'PublicationsResponse', 'publications'),
          ...notModified,
        },
      },
      post: {
        ...old,
        summary: 'Publish the request body to sites as a publication (streamed; at most api.maxUploadBytes)',
        parameters: queryParams(PublishQuerySchema, {
          site: "site ids, comma-separated, or 'all'",
          name: 'name shown and used for the placed file',
          kind: 'file kind',
          ttl: 'seconds until it expires',
        }),
        requestBody: {
          required: true,
          content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } },
        },
        responses: {
          '201': json(detail, 'published'),
          '400': err('bad query or unknown site'),
          '413': err('over api.maxUploadBytes'),
        },
      },
    },
    [`${base}/{${id}}`]: {
      get: {
        ...old,
        summary: 'One publication with per-site delivery',
        parameters: [pathParam(id)],
        responses: { '200': json(detail, 'publication'), ...notModified, '404': err('not found') },
      },
    },
  };
}
