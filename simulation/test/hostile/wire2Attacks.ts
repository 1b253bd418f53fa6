import { brotliDecompressSync } from 'node:zlib';
import { wire2 } from '@driftline/protocol';
import type { Attack, HopRequest, HopResponse, RequestVerdict } from './hostileProxy.js';

/** Attacks on hop v2's messages (docs/decisions/495-hop-v2-on-the-agent-link.md); each counts what it did. */

const message = (body: Buffer) => wire2.decodeMessage(new Uint8Array(body));

/**
 * The agent's first `n` v2 pushes get one byte of their changes flipped on the way to the relay (their
 * signature no longer matches). `flipped` counts them.
 */
export function flippedPushes(n: number): Attack & { flipped: number } {
  const attack = {
    name: 'flipped v2 pushes',
    flipped: 0,
    onRequest(req: HopRequest): RequestVerdict {
      if (req.method !== 'POST' || req.path !== wire2.WIRE2_PATH || attack.flipped >= n) return undefined;
      const m = message(req.body);
      if (!m.ok || m.value.kind !== 'push') return undefined;
      attack.flipped++;
      const body = Buffer.from(req.body);
      body[body.length >> 1] = (body[body.length >> 1] ?? 0) ^ 0x01;
      return { forward: { ...req, body } };
    },
  };
  return attack;
}

/**
 * Every item of a v2 pull answer (the hub's acks, control) gets the last byte of its hub signature
 * flipped, ids and everything else kept. `altered` counts the copies.
 */
export function alteredPullAnswers(): Attack & { altered: number } {
  const attack = {
    name: 'altered v2 pull answers',
    altered: 0,
    onResponse(req: HopRequest, res: HopResponse): HopResponse | undefined {
      if (req.method !== 'POST' || req.path !== wire2.WIRE2_PATH || res.status !== 200) return undefined;
      const br = res.headers['content-encoding'] === 'br';
      const plain = new Uint8Array(br ? brotliDecompressSync(res.body) : res.body);
      const page = wire2.decodePullAnswer(plain);
      if (!page.ok || page.value.items.length === 0) return undefined;
      const items = page.value.items.map((b) => {
        const c = Uint8Array.from(b);
        c[c.length - 1] = (c[c.length - 1] ?? 0) ^ 0x5a;
        attack.altered++;
        return c;
      });
      const { 'content-encoding': _e, ...headers } = res.headers;
      return { ...res, headers, body: Buffer.from(wire2.encodePullAnswer({ ...page.value, items })) };
    },
  };
  return attack;
}
