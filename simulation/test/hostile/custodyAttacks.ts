import type { Attack, HopRequest, HopResponse } from '../../src/world/hostile/hostileHandler.js';

/**
 * Attacks on the signed per-hop timing chain (docs/decisions/290-signed-hop-chain.md), by a hop below
 * an honest relay whose key the hub has enrolled. Each also restates the agent's clock in the plain
 * `driftline-source-clocks` (decision 070) by `offsetMs`, consistently, from the first bundle on.
 */

const isBundlePost = (req: HopRequest) => req.method === 'POST' && req.path.startsWith('/v1/bundles');

/** Every source the post lists, claimed at `offsetMs;u=0`. */
function restateSources(req: HopRequest, offsetMs: number): HopRequest['headers'] {
  const listed = String(req.headers['driftline-source-clocks'] ?? '');
  const sources = listed
    .split(',')
    .map((p) => p.slice(0, p.indexOf('=')).trim())
    .filter((s) => s.length > 0);
  return sources.length === 0
    ? req.headers
    : { ...req.headers, 'driftline-source-clocks': sources.map((s) => `${s}=${offsetMs};u=0`).join(', ') };
}

/**
 * Rewrites each custody record of a bundle post: the relay's times in the agent's stamped exchange
 * moved by `offsetMs` (what would make the agent's signed term say `offsetMs` less), the record's
 * signature kept. `rewritten` counts the records it changed.
 */
export function rewriteCustody(offsetMs: number): Attack & { rewritten: number } {
  const attack = {
    name: `rewrite custody records by ${offsetMs} ms`,
    rewritten: 0,
    onRequest(req: HopRequest) {
      if (!isBundlePost(req)) return undefined;
      const headers = restateSources(req, offsetMs);
      const custody = String(req.headers['driftline-custody'] ?? '');
      if (custody) {
        headers['driftline-custody'] = custody
          .split(',')
          .map((rec) => {
            const [payload, sig] = rec.split('.');
            const json = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8'));
            if (!json.up) return rec;
            json.up.t[1] -= offsetMs;
            json.up.t[2] -= offsetMs;
            attack.rewritten++;
            return `${Buffer.from(JSON.stringify(json)).toString('base64url')}.${sig}`;
          })
          .join(',');
      }
      return { forward: { ...req, headers } };
    },
  };
  return attack;
}

/**
 * Restamps: moves relay-1's receive and reply times on every answer to the agent by −`offsetMs` (the
 * agent then measures its clock `offsetMs` ahead and signs that), and restates the plain estimate to
 * match. The relay's signature over its times no longer fits them. `restamped` counts the answers.
 */
export function restampTimes(offsetMs: number): Attack & { restamped: number } {
  const attack = {
    name: `restamp relay times by −${offsetMs} ms`,
    restamped: 0,
    onRequest(req: HopRequest) {
      return isBundlePost(req) ? { forward: { ...req, headers: restateSources(req, offsetMs) } } : undefined;
    },
    onResponse(_req: HopRequest, res: HopResponse) {
      const t1 = Number(res.headers['driftline-received']);
      const t2 = Number(res.headers['driftline-replied']);
      if (!Number.isFinite(t1) || !Number.isFinite(t2) || !res.headers['driftline-received'])
        return undefined;
      attack.restamped++;
      return {
        ...res,
        headers: {
          ...res.headers,
          'driftline-received': String(t1 - offsetMs),
          'driftline-replied': String(t2 - offsetMs),
        },
      };
    },
  };
  return attack;
}

/** Strips `driftline-custody` from every bundle post and restates the plain estimate. `stripped` counts them. */
export function stripCustody(offsetMs: number): Attack & { stripped: number } {
  const attack = {
    name: `strip custody, claim ${offsetMs} ms`,
    stripped: 0,
    onRequest(req: HopRequest) {
      if (!isBundlePost(req)) return undefined;
      const { 'driftline-custody': custody, ...headers } = restateSources(req, offsetMs);
      if (custody) attack.stripped++;
      return { forward: { ...req, headers } };
    },
  };
  return attack;
}
