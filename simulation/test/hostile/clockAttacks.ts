import type { Attack, HopRequest } from './hostileProxy.js';

/**
 * The clock attacks of issue 29 part B (case c): a hop below an honest relay rewrites the
 * `driftline-source-clocks` header of bundle posts (docs/decisions/070-clock-offsets.md), optionally after
 * holding the post. Every attack counts the posts it rewrote.
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
