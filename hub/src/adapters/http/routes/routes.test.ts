import { HOP_ROUTES } from '@driftline/hop';
import Koa from 'koa';
import { describe, expect, it } from 'vitest';
import { openApiDocument } from '../openapi.js';
import { routePaths } from '../openapiRoutes.js';
import { policyFor, ROUTE_POLICIES } from '../policy.js';
import type { RouteDeps } from './deps.js';
import { API_ROUTES } from './index.js';
import { type Route, route } from './route.js';
import { routerOf } from './router.js';

const ROLES = ['open', 'viewer', 'operator', 'publisher', 'approver', 'admin'];
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');

type Doc = { paths: Record<string, Record<string, { 'x-driftline-role'?: string }>> };

/** A route an endpoint's file would add: the test's stand-in for a new endpoint. */
const added = route({
  method: 'GET',
  path: '/api/widgets/:widget',
  role: 'operator',
  response: { status: 200, schema: 'SitesResponse', description: 'widgets' },
  doc: { summary: 'A widget' },
  handler: (ctx) => (ctx.params.widget === 'bad' ? ({ sites: 'no' } as never) : { sites: [] }),
});

describe('the /api route table', () => {
  it('gives every route a role, and the guard and /api/openapi.json that role', () => {
    const doc = openApiDocument('test') as Doc;
    expect(API_ROUTES.length).toBeGreaterThan(25);
    for (const r of API_ROUTES) {
      const key = `${r.method} ${r.path}`;
      expect(ROLES, key).toContain(r.role);
      expect(policyFor(r.method, r.path.replace(/:\w+/g, 'x')).need, key).toBe(r.role);
      expect(doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()]?.['x-driftline-role'], key).toBe(
        r.role,
      );
    }
    // …and nothing else of /api is guarded or declared.
    const table = new Set(API_ROUTES.map((r) => `${r.method} ${r.path}`));
    const policies = ROUTE_POLICIES.map((p) => `${p.method} ${p.path}`).filter((k) => k.includes(' /api'));
    expect(policies.filter((k) => !table.has(k))).toEqual([]);
    const declared = Object.entries(doc.paths)
      .filter(([p]) => p.startsWith('/api'))
      .flatMap(([p, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${p.replace(/\{(\w+)\}/g, ':$1')}`),
      );
    expect(declared.filter((k) => !table.has(k))).toEqual([]);
    expect(declared.length).toBe(API_ROUTES.length);
  });

  it('declares each hop route with the role its entry names (/metrics: the role the guard gives it)', () => {
    const doc = openApiDocument('test') as Doc;
    for (const r of HOP_ROUTES) {
      const want = r.role === 'metrics' ? policyFor('GET', '/metrics').need : r.role;
      const op = doc.paths[openApiPath(r.path)]?.[r.method.toLowerCase()];
      expect(op?.['x-driftline-role'], `${r.method} ${r.path}`).toBe(want);
    }
  });

  it('declares no route twice', () => {
    const keys = API_ROUTES.map((r) => `${r.method} ${r.path.toLowerCase()}`);
    expect(keys.filter((k, i) => keys.indexOf(k) !== i)).toEqual([]);
  });

  it('documents and serves an added entry from that entry alone', async () => {
    const routes: Route[] = [...API_ROUTES, added];
    const op = routePaths(routes)['/api/widgets/{widget}']?.get as Record<string, unknown>;
    expect(op).toMatchObject({
      summary: 'A widget',
      'x-driftline-role': 'operator',
      parameters: [{ name: 'widget', in: 'path', required: true }],
    });
    expect(Object.keys(op.responses as object).sort()).toEqual(['200', '304', '401', '403', '429', '503']);

    const app = new Koa();
    app.silent = true;
    app.use(routerOf(routes, {} as RouteDeps).routes());
    const server = app.listen(0, '127.0.0.1');
    try {
      await new Promise((ok) => server.once('listening', ok));
      const { port } = server.address() as { port: number };
      const good = await fetch(`http://127.0.0.1:${port}/api/widgets/w1`);
      expect(good.status).toBe(200);
      expect(await good.json()).toEqual({ sites: [] });
      // An answer its schema refuses never leaves.
      const bad = await fetch(`http://127.0.0.1:${port}/api/widgets/bad`);
      expect(bad.status).toBe(500);
      expect(await bad.text()).not.toContain('no');
    } finally {
      await new Promise((ok) => server.close(ok));
    }
  });

  it('does not compile a route without a role, or a handler answering another shape', () => {
    const spec = {
      method: 'GET',
      path: '/api/x',
      response: { status: 200, schema: 'SitesResponse', description: 'x' },
      doc: { summary: 'x' },
    } as const;
    // @ts-expect-error role is required
    route({ ...spec, handler: () => ({ sites: [] }) });
    // @ts-expect-error the answer is not a SitesResponse
    route({ ...spec, role: 'viewer', handler: () => ({ cells: [] }) });
    expect(route({ ...spec, role: 'viewer', handler: () => ({ sites: [] }) }).role).toBe('viewer');
  });
});
