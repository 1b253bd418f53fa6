import type Router from '@koa/router';
import type Koa from 'koa';

/** One route a Koa router answers: method (HEAD left out: every GET answers it), path, path parameters. */
export interface RouteOp {
  method: string;
  path: string;
  params: string[];
}

const normal = (path: string) => (path.length > 1 ? path.replace(/\/+$/, '') : path);

/**
 * The routes registered on `app`'s routers, read from their layers (what @koa/router matches requests
 * against), in `:param` form.
 */
export function routerOps(app: Koa): RouteOp[] {
  const out: RouteOp[] = [];
  for (const mw of app.middleware) {
    const router = (mw as { router?: Router }).router;
    if (!router) continue;
    for (const layer of router.stack) {
      for (const method of layer.methods) {
        if (method === 'HEAD') continue;
        out.push({
          method,
          path: normal(layer.path as string),
          params: layer.paramNames.map((p: { name: string | number }) => String(p.name)),
        });
      }
    }
  }
  return out;
}

/** An OpenAPI path template (`/a/{b}`) in router form (`/a/:b`). */
export const routerPath = (openApiPath: string) => openApiPath.replace(/\{(\w+)\}/g, ':$1');

/** `METHOD path` */
export const opKey = (o: { method: string; path: string }) => `${o.method.toUpperCase()} ${o.path}`;
