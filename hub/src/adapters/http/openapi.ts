import { HOP_ROUTES } from '@driftline/hop';
import { SECURITY_SCHEMES } from './openapiAuth.js';
import { hopPaths } from './openapiHop.js';
import { routePaths, withRole } from './openapiRoutes.js';
import { componentSchemas } from './openapiShared.js';
import { policyFor } from './policy.js';
import { API_ROUTES } from './routes/index.js';

/**
 * OpenAPI 3.1 description of everything the hub serves: `/api/…`, sign-in, the dashboard's files, and the
 * hop API (`/v1/…`, `/metrics`). The `/api` operations are generated from the route table
 * (`routes/index.ts`): schemas from protocol's zod schemas, query parameters from the zod schemas the
 * routes parse with, and who may call each (`x-driftline-role`) from its role.
 */
export function openApiDocument(version: string): object {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Driftline hub API',
      version,
      description:
        'Every GET also answers HEAD with the same status and headers (Content-Length, ETag) and no body. ' +
        'JSON reads carry a strong ETag; If-None-Match with it answers 304. No route replaces a resource, ' +
        'so none evaluates If-Match. A 401 carries WWW-Authenticate: Bearer realm="driftline"; a 429 or 503 ' +
        'carries Retry-After. With listen.hop and listen.api apart, /v1 (but /v1/health) is served on the ' +
        'hop listener only, and /api, the dashboard and /metrics on the api listener only.',
    },
    tags: [
      { name: 'api', description: "the people's side: dashboard, operators, CI" },
      { name: 'hop', description: 'the hop API relays and directly connected agents use' },
    ],
    security: [{ bearer: [] }, { cookie: [] }],
    paths: { ...routePaths(API_ROUTES), ...withHopRoles(hopPaths()) },
    components: { securitySchemes: SECURITY_SCHEMES, schemas: componentSchemas() },
  };
}

/** An OpenAPI path template (`/a/{b}`) in router form (`/a/:b`). */
const routerPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/**
 * The hop API's operations with who may call each Koa route from hop's route table (`HOP_ROUTES`): a
 * peer token, nobody in particular (`/v1/health`), or for `/metrics` the role the guard gives it. The
 * operations served beside Koa (tus, the dashboard's files) name their own.
 */
function withHopRoles(paths: Record<string, Record<string, object>>): Record<string, object> {
  const out: Record<string, object> = {};
  for (const [path, ops] of Object.entries(paths))
    out[path] = Object.fromEntries(
      Object.entries(ops).map(([method, op]) => {
        const route = HOP_ROUTES.find(
          (r) => r.method === method.toUpperCase() && r.path === routerPath(path),
        );
        if (!route) return [method, op];
        if (route.role === 'metrics') return [method, withRole(op, policyFor(method, path).need)];
        const security = route.role === 'peer' ? [{ peer: [] }] : [];
        return [method, { ...op, security, 'x-driftline-role': route.role }];
      }),
    );
  return out;
}
