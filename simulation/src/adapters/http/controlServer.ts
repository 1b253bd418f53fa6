import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type ErrorCode, renderError } from '@driftline/protocol';
import { mergeSettings, parseSettings } from '../../core/link/settings.js';
import type { LinkProxy } from '../net/LinkProxy.js';

const MAX_BODY = 64 * 1024;

/**
 * The link's control API (JSON over HTTP, node:http: four routes do not need a framework).
 *   GET  /link         settings and state        PUT   /link  replace settings (defaults fill gaps)
 *   PATCH /link        merge partial settings    POST  /link/up | /link/down | /link/auto
 *   GET  /link/stats   counters                  GET   /health
 * Errors use protocol's ERRORS table: `{ error: { code, message } }`.
 */
export function createControlServer(link: LinkProxy, describe: () => object): Server {
  return createServer((req, res) => {
    handle(link, describe, req, res).catch((e) => send(res, ...err('internal', String(e))));
  });
}

async function handle(
  link: LinkProxy,
  describe: () => object,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/\/+$/, '') || '/';
  const m = req.method ?? 'GET';
  const route = `${m} ${path}`;
  switch (route) {
    case 'GET /health':
      return send(res, 200, { ok: true });
    case 'GET /link':
      return send(res, 200, { ...describe(), settings: link.settings, state: stateOf(link) });
    case 'GET /link/stats':
      return send(res, 200, link.stats());
    case 'PUT /link':
    case 'PATCH /link': {
      const body = await readJson(req);
      if (!body.ok) return send(res, ...err('bad-request', body.problem));
      const r = m === 'PUT' ? parseSettings(body.value) : mergeSettings(link.settings, body.value);
      if (!r.ok) return send(res, ...err('bad-request', `invalid link settings: ${r.problems.join('; ')}`));
      link.setSettings(r.settings);
      return send(res, 200, { settings: link.settings, state: stateOf(link) });
    }
    case 'POST /link/up':
    case 'POST /link/down':
    case 'POST /link/auto': {
      const what = path.slice('/link/'.length);
      link.force(what === 'auto' ? null : (what as 'up' | 'down'));
      return send(res, 200, { state: stateOf(link) });
    }
  }
  if (['/health', '/link', '/link/stats', '/link/up', '/link/down', '/link/auto'].includes(path)) {
    return send(res, ...err('method-not-allowed', `${m} is not allowed on ${path}`));
  }
  return send(res, ...err('not-found', `no route ${path}; try GET /link`));
}

function stateOf(link: LinkProxy) {
  const s = link.stats();
  return { up: s.up, forced: s.forced, msUntilChange: s.msUntilChange };
}

function err(code: ErrorCode, detail: string): [number, object] {
  const r = renderError(code, detail);
  return [r.status, r.body];
}

function send(res: ServerResponse, status: number, body: object): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(`${JSON.stringify(body)}\n`);
}

async function readJson(
  req: IncomingMessage,
): Promise<{ ok: true; value: unknown } | { ok: false; problem: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > MAX_BODY) return { ok: false, problem: `body over ${MAX_BODY} bytes` };
    chunks.push(c as Buffer);
  }
  try {
    return { ok: true, value: JSON.parse(Buffer.concat(chunks).toString('utf8')) };
  } catch {
    return { ok: false, problem: 'body is not JSON; send the settings as a JSON object' };
  }
}
