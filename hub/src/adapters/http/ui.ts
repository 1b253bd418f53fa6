import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import type { Middleware } from 'koa';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/**
 * Serves the built dashboard (`ui/dist`) at `/` (`GET` and `HEAD`), or a short page saying how to build it.
 * Any other path outside `/api/`, `/v1/` and `/metrics` that names no file answers `index.html`.
 */
export function uiMiddleware(dir: string | null): Middleware {
  return async (ctx, next) => {
    if (
      (ctx.method !== 'GET' && ctx.method !== 'HEAD') ||
      ctx.path.startsWith('/api/') ||
      ctx.path.startsWith('/v1/') ||
      ctx.path === '/metrics'
    )
      return next();
    if (!dir || !existsSync(join(dir, 'index.html'))) {
      if (ctx.path !== '/') return next();
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body =
        'Driftline hub. The dashboard is not built here: run `npm install` at the Driftline checkout (it builds ui/dist), or point uiDir in hub.yaml at a built one. The API is at /api/matrix, described at /api/openapi.json.\n';
      return;
    }
    const rel = normalize(ctx.path).replace(/^(\.\.[/\\])+/, '');
    let file = join(dir, rel);
    if (!file.startsWith(dir)) return next();
    const s = await stat(file).catch(() => null);
    if (!s?.isFile()) file = join(dir, 'index.html'); // client-side routes
    ctx.type = TYPES[extname(file)] ?? 'application/octet-stream';
    ctx.body = await readFile(file);
  };
}
