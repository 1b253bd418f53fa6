import { brotliCompressSync, brotliDecompressSync } from 'node:zlib';
import { decodeBatch, decodeBundle, encodeBatch } from '@driftline/protocol';
import type { Attack, HopRequest, HopResponse } from './hostileHandler.js';

/**
 * The attacks of issue 29 part B (docs/decisions/230-time-a-hop-cannot-forge.md), each counting what it
 * did: (c) a hop below an honest relay rewrites the `driftline-source-clocks` header of bundle posts
 * (decision 070), optionally after holding the post; (d) it eats a site's downlink; (e) it keeps bundle
 * posts to replay them later.
 */

const isBundlePost = (req: HopRequest) => req.method === 'POST' && req.path.startsWith('/v1/bundles');

/** Every source the post lists, claimed at `offsetMs;u=0` (its clock minus the next hop's). */
function rewrite(req: HopRequest, offsetMs: number): HopRequest {
  const listed = String(req.headers['driftline-source-clocks'] ?? '');
  const sources = listed
    .split(',')
    .map((p) => p.slice(0, p.indexOf('=')).trim())
    .filter((s) => s.length > 0);
  return {
    ...req,
    headers: {
      ...req.headers,
      'driftline-source-clocks': sources.map((s) => `${s}=${offsetMs};u=0`).join(', '),
    },
  };
}

/** Claims every source's clock is `offsetMs` ahead of the next hop's (+1 day: `86_400_000`). */
export function clockLie(offsetMs: number): Attack & { rewritten: number } {
  const attack = {
    name: `clock lie ${offsetMs} ms`,
    rewritten: 0,
    onRequest(req: HopRequest) {
      if (!isBundlePost(req) || !req.headers['driftline-source-clocks']) return undefined;
      attack.rewritten++;
      return { forward: rewrite(req, offsetMs) };
    },
  };
  return attack;
}

/**
 * Holds every bundle post `holdMs`, then forwards it claiming the sources' clocks are `holdMs` behind:
 * the results would look made when they arrived (fresh), not `holdMs` earlier.
 */
export function holdAndFreshen(holdMs: number): Attack & { rewritten: number } {
  const attack = {
    name: `hold ${holdMs} ms and claim −${holdMs} ms`,
    rewritten: 0,
    async onRequest(req: HopRequest) {
      if (!isBundlePost(req) || !req.headers['driftline-source-clocks']) return undefined;
      await new Promise((r) => setTimeout(r, holdMs));
      attack.rewritten++;
      return { forward: rewrite(req, -holdMs) };
    },
  };
  return attack;
}

/**
 * (d) Eats a site's downlink: every control bundle (plan requests, approvals) in a downlink page the
 * agent pulls is dropped, the cursor kept, so the agent moves past what it never saw. `eaten` counts them.
 */
export function eatDownlink(): Attack & { eaten: number } {
  const attack = {
    name: 'eat the downlink',
    eaten: 0,
    onResponse(req: HopRequest, res: HopResponse) {
      if (req.method !== 'GET' || !req.path.startsWith('/v1/bundles') || res.status !== 200) return undefined;
      const br = res.headers['content-encoding'] === 'br';
      const batch = decodeBatch(new Uint8Array(br ? brotliDecompressSync(res.body) : res.body));
      if (!batch.ok) return undefined;
      const kept = batch.value.filter((b) => {
        const d = decodeBundle(b);
        const control = d.ok && d.value.header.kind === 'control';
        if (control) attack.eaten++;
        return !control;
      });
      if (kept.length === batch.value.length) return undefined;
      const body = Buffer.from(encodeBatch(kept));
      return { ...res, body: br ? brotliCompressSync(body) : body };
    },
  };
  return attack;
}

/** (e) Keeps a copy of every bundle post (method, path, headers, body) to replay later; changes nothing. */
export function capturePosts(): Attack & { posts: HopRequest[] } {
  const attack = {
    name: 'capture bundle posts',
    posts: [] as HopRequest[],
    onRequest(req: HopRequest) {
      if (isBundlePost(req)) attack.posts.push(req);
      return undefined;
    },
  };
  return attack;
}

/**
 * (g) Swaps payloads between agents: the body of one agent's bundle post goes up under the next post of
 * another agent (its token, its clock headers), and that one's body under the next post after it.
 * `swapped` counts the posts that went up with another agent's body.
 */
export function swapPayloads(): Attack & { swapped: number } {
  let held: { auth: string; body: Buffer } | null = null;
  const attack = {
    name: 'swap payloads between agents',
    swapped: 0,
    onRequest(req: HopRequest) {
      if (!isBundlePost(req)) return undefined;
      const auth = String(req.headers.authorization ?? '');
      const other = held && held.auth !== auth ? held : null;
      held = { auth, body: req.body };
      if (!other) return undefined;
      attack.swapped++;
      return { forward: { ...req, body: other.body } };
    },
  };
  return attack;
}
