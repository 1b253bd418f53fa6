import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { API_ROUTES } from './index.js';
import type { Route } from './route.js';

/** The files of this folder that hold no endpoint: the table, its types, its router and its dependencies. */
const MACHINERY = new Set(['index.ts', 'route.ts', 'router.ts', 'deps.ts']);

const isRoute = (x: unknown): x is Route =>
  typeof x === 'object' &&
  x !== null &&
  typeof (x as Route).method === 'string' &&
  typeof (x as Route).path === 'string' &&
  typeof (x as Route).role === 'string' &&
  typeof (x as Route).handler === 'function';

/** Every route each module of this folder exports (in an exported list), by file. */
async function exportedRoutes(): Promise<Map<string, Route[]>> {
  const dir = fileURLToPath(new URL('.', import.meta.url));
  const out = new Map<string, Route[]>();
  for (const file of readdirSync(dir).sort()) {
    if (!file.endsWith('.ts') || file.endsWith('.test.ts') || MACHINERY.has(file)) continue;
    const mod = (await import(pathToFileURL(`${dir}${file}`).href)) as Record<string, unknown>;
    const routes = Object.values(mod).flatMap((v) => (Array.isArray(v) ? v.filter(isRoute) : []));
    out.set(file, routes);
  }
  return out;
}

/**
 * `routes/index.ts` is a hand list (Node has no glob import): a resource file left out of it passed the
 * typecheck and every other test, and its endpoints were silently absent. This test reads the folder
 * instead (docs/decisions/432-route-table-complete.md).
 */
describe('the /api route table is complete', () => {
  it('serves every route that a module of the routes folder exports', async () => {
    const byFile = await exportedRoutes();
    expect(byFile.size).toBeGreaterThan(10);
    const table = new Set(API_ROUTES);
    const missing = [...byFile].flatMap(([file, routes]) =>
      routes
        .filter((r) => !table.has(r))
        .map((r) => `${r.method} ${r.path} (routes/${file}): add its list to API_ROUTES in routes/index.ts`),
    );
    expect(missing).toEqual([]);
  });

  it('has an endpoint in every module of the folder but its machinery', async () => {
    const empty = [...(await exportedRoutes())].filter(([, routes]) => routes.length === 0).map(([f]) => f);
    expect(empty, 'modules of routes/ that export no route list: move helpers out of routes/').toEqual([]);
  });

  it('holds only routes some module of the folder declares', async () => {
    const declared = new Set([...(await exportedRoutes()).values()].flat());
    expect(API_ROUTES.filter((r) => !declared.has(r)).map((r) => `${r.method} ${r.path}`)).toEqual([]);
  });
});
