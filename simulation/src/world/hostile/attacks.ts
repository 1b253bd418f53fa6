import type { ServerResponse } from 'node:http';
import { brotliDecompressSync } from 'node:zlib';
import { decodeBatch, decodeBundle, encodeBatch } from '@driftline/protocol';
import type { Attack, HopRequest, HopResponse, RequestVerdict } from './hostileHandler.js';

/** The attacks of issue 29 part A, one factory each; every attack counts what it did. */

const TUS = { 'tus-resumable': '1.0.0', 'cache-control': 'no-store' };
const answer = (status: number, headers: Record<string, string>): { answer: HopResponse } => ({
  answer: { status, headers, body: Buffer.alloc(0) },
});

/**
 * (a) Fake tus completion: the hop answers the tus creation and every PATCH with plausible offsets and
 * keeps nothing, so the uploader believes the blob is upstream. `completed` counts uploads it "finished".
 */
export function fakeTusCompletion(): Attack & { completed: number } {
  const uploads = new Map<string, { length: number; offset: number }>();
  let next = 0;
  const attack = {
    name: 'fake tus completion',
    completed: 0,
    onRequest(req: { method: string; path: string; headers: Record<string, unknown>; body: Buffer }) {
      if (!req.path.startsWith('/v1/uploads')) return undefined;
      if (req.method === 'POST') {
        const id = `fake${++next}`;
        uploads.set(id, { length: Number(req.headers['upload-length']), offset: 0 });
        return answer(201, { ...TUS, location: `/v1/uploads/${id}`, 'upload-offset': '0' });
      }
      const u = uploads.get(req.path.split('/').pop() ?? '');
      if (!u) return undefined; // an upload made before the attack: the honest relay answers for it
      if (req.method === 'PATCH') {
        u.offset = Number(req.headers['upload-offset']) + req.body.length;
        if (u.offset >= u.length) attack.completed++;
        return answer(204, { ...TUS, 'upload-offset': String(u.offset) });
      }
      if (req.method === 'HEAD')
        return answer(200, { ...TUS, 'upload-offset': String(u.offset), 'upload-length': String(u.length) });
      return answer(204, TUS); // DELETE: "terminated"
    },
  };
  return attack;
}

/**
 * (b) Altered downlink copies with genuine ids: every bundle of a downlink page keeps its header (id,
 * kind, destination) and gets one byte of its hub signature flipped. `altered` counts the copies.
 */
export function alteredDownlink(): Attack & { altered: number } {
  const attack = {
    name: 'altered downlink copies',
    altered: 0,
    onRequest(req: HopRequest): RequestVerdict {
      if (req.method !== 'GET' || !req.path.startsWith('/v1/bundles?')) return undefined;
      // Plain bytes back, so the copies can be rewritten without recompressing.
      const { 'accept-encoding': _drop, ...headers } = req.headers;
      return { forward: { ...req, headers } };
    },
    onResponse(req: HopRequest, res: HopResponse): HopResponse | undefined {
      if (req.method !== 'GET' || !req.path.startsWith('/v1/bundles?') || res.status !== 200)
        return undefined;
      const batch = decodeBatch(new Uint8Array(res.body));
      if (!batch.ok || batch.value.length === 0) return undefined;
      const copies = batch.value.map((b) => {
        const c = Uint8Array.from(b);
        c[c.length - 1] = (c[c.length - 1] ?? 0) ^ 0x5a; // the last byte of the Ed25519 signature
        attack.altered++;
        return c;
      });
      return { ...res, body: Buffer.from(encodeBatch(copies)) };
    },
  };
  return attack;
}

/**
 * Not an attack: an upstream whose tus endpoint is down (503 to every upload request), so the relay
 * below keeps the blobs it receipted. `refused` counts the requests it turned away.
 */
export function uploadsDown(): Attack & { refused: number } {
  const attack = {
    name: 'uploads down',
    refused: 0,
    onRequest(req: HopRequest): RequestVerdict {
      if (!req.path.startsWith('/v1/uploads')) return undefined;
      attack.refused++;
      return { answer: { status: 503, headers: { 'retry-after': '1' }, body: Buffer.from('down') } };
    },
  };
  return attack;
}

/**
 * (f) Flipped bytes: the first `bundles` bundles posted get one byte of their signature flipped (the
 * header, so the id and route, stay readable) and the first `patches` tus PATCH bodies one byte in their
 * middle; after that the hop is honest. `flipped` counts what it altered.
 */
export function flippedBytes(n: { bundles: number; patches: number }): Attack & {
  flipped: { bundles: number; patches: number };
} {
  const attack = {
    name: 'flipped bytes',
    flipped: { bundles: 0, patches: 0 },
    onRequest(req: HopRequest): RequestVerdict {
      if (req.method === 'PATCH' && req.path.startsWith('/v1/uploads/') && req.body.length > 0) {
        if (attack.flipped.patches >= n.patches) return undefined;
        attack.flipped.patches++;
        const body = Buffer.from(req.body);
        const at = body.length >> 1;
        body[at] = (body[at] ?? 0) ^ 0x01;
        return { forward: { ...req, body } };
      }
      if (req.method !== 'POST' || req.path !== '/v1/bundles' || attack.flipped.bundles >= n.bundles)
        return undefined;
      const br = req.headers['content-encoding'] === 'br';
      const batch = decodeBatch(new Uint8Array(br ? brotliDecompressSync(req.body) : req.body));
      if (!batch.ok) return undefined;
      const bundles = batch.value.map((b) => {
        if (attack.flipped.bundles >= n.bundles) return b;
        attack.flipped.bundles++;
        const c = Uint8Array.from(b);
        c[c.length - 1] = (c[c.length - 1] ?? 0) ^ 0x01;
        return c;
      });
      const { 'content-encoding': _e, ...headers } = req.headers;
      return { forward: { ...req, headers, body: Buffer.from(encodeBatch(bundles)) } };
    },
  };
  return attack;
}

const isPull = (req: { method: string; path: string }) =>
  req.method === 'GET' && req.path.startsWith('/v1/bundles?');

/**
 * (h) Holds every downlink pull open without a word (no status, no byte) until the agent lets go; every
 * other request passes. `held` counts the pulls it took, `open` those still open.
 */
export function silentPulls(): Attack & { held: number; open: number } {
  const attack = {
    name: 'hold downlink pulls without a word',
    held: 0,
    open: 0,
    takeOver(req: { method: string; path: string }, out: ServerResponse): boolean {
      if (!isPull(req)) return false;
      attack.held++;
      attack.open++;
      out.on('close', () => attack.open--);
      return true;
    },
  };
  return attack;
}

/**
 * (i) Answers every downlink pull at once with a 200 and then one byte every `everyMs`, for as long as
 * the agent listens (a batch that never ends). `dripped` counts the bytes sent, `cut` the answers the
 * agent closed.
 */
export function dripPulls(everyMs = 250): Attack & { answered: number; dripped: number; cut: number } {
  const attack = {
    name: `drip downlink answers a byte every ${everyMs} ms`,
    answered: 0,
    dripped: 0,
    cut: 0,
    takeOver(req: { method: string; path: string }, out: ServerResponse): boolean {
      if (!isPull(req)) return false;
      attack.answered++;
      out.writeHead(200, { 'content-type': 'application/vnd.driftline.batch', 'driftline-cursor': '1' });
      const body = Buffer.from(encodeBatch([new Uint8Array(4096)]));
      let i = 0;
      const t = setInterval(() => {
        if (out.destroyed || i >= body.length) return clearInterval(t);
        out.write(body.subarray(i, ++i));
        attack.dripped++;
      }, everyMs);
      out.on('close', () => {
        clearInterval(t);
        if (i < body.length) attack.cut++;
      });
      return true;
    },
  };
  return attack;
}

/**
 * (j) Fake receipts: answers every bundle post with `stored` receipts from `by` and forwards nothing, so
 * the agent believes a relay took custody (and that the detail blobs it announced are on their way).
 * `faked` counts the receipts.
 */
export function fakeReceipts(by = 'relay-1'): Attack & { faked: number } {
  const attack = {
    name: 'fake receipts',
    faked: 0,
    onRequest(req: HopRequest): RequestVerdict {
      if (req.method !== 'POST' || req.path !== '/v1/bundles') return undefined;
      const br = req.headers['content-encoding'] === 'br';
      const batch = decodeBatch(new Uint8Array(br ? brotliDecompressSync(req.body) : req.body));
      if (!batch.ok) return undefined;
      const receipts = batch.value.map((b, index) => {
        const d = decodeBundle(b);
        attack.faked++;
        return { bundleId: d.ok ? d.value.header.id : null, index, status: 'stored', by };
      });
      return {
        answer: {
          status: 200,
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(JSON.stringify({ receipts })),
        },
      };
    },
  };
  return attack;
}
