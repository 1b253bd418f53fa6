import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize } from 'node:path';
import type { MockHub } from './mockHub.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/**
 * A tiny server for the end-to-end test and the benchmark: the built dashboard from `distDir` at `/`,
 * and `/api/…` answered by a `MockHub` (schema-validated), including the `/api/events` stream.
 * Binds 127.0.0.1 on a free port.
 */
export async function startStubServer(
  hub: MockHub,
  distDir: string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    try {
      if (url.pathname === '/api/events' && hub.signedIn) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
        res.write(': hello\n\n');
        const off = hub.openStream(
          (frame) => res.write(frame),
          () => res.end(),
        );
        req.on('close', off);
        return;
      }
      if (url.pathname.startsWith('/api/')) {
        let body: unknown;
        if (req.method === 'POST') {
          const chunks: Buffer[] = [];
          for await (const c of req) chunks.push(c as Buffer);
          body = JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null');
        }
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
        const answer = hub.handle(req.method ?? 'GET', url, body, headers);
        if (answer.body === undefined) {
          res.writeHead(answer.status);
          res.end();
          return;
        }
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.body));
        return;
      }
      const rel = normalize(url.pathname === '/' ? '/index.html' : url.pathname).replace(/^(\.\.[/\\])+/, '');
      const file = await readFile(join(distDir, rel)).catch(() => null);
      if (!file) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end(`not found: ${url.pathname}`);
        return;
      }
      res.writeHead(200, { 'content-type': TYPES[extname(rel)] ?? 'application/octet-stream' });
      res.end(file);
    } catch (e) {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String(e));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        hub.dropStreams();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
