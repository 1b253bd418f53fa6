import { wire2 } from '@driftline/protocol';
import type { Attack, HopRequest, RequestVerdict } from './hostileHandler.js';

/**
 * Attacks on what carries hop v2 pushes besides the agent's own link (docs/decisions/495-hop-v2-on-the-agent-link.md):
 * relay-1's v1 batches to the hub, which carry the pushes verbatim, and the pushes of two agents on one
 * hop. Each counts what it did.
 */

const isBatchPost = (req: HopRequest) => req.method === 'POST' && req.path.startsWith('/v1/bundles');

/**
 * An unkeyed relay's clock lie for v2 pushes (issue 42): a v2 push states no clock and relay-1 composes
 * none for it, so the hop adds the claim itself to every batch post: each of `sources` at `offsetMs;u=0`.
 * `claimed` counts the posts.
 */
export function claimClocks(offsetMs: number, sources: string[]): Attack & { claimed: number } {
  const attack = {
    name: `claim ${sources.join(', ')} at ${offsetMs} ms`,
    claimed: 0,
    onRequest(req: HopRequest): RequestVerdict {
      if (!isBatchPost(req)) return undefined;
      attack.claimed++;
      const claim = sources.map((s) => `${s}=${offsetMs};u=0`).join(', ');
      return { forward: { ...req, headers: { ...req.headers, 'driftline-source-clocks': claim } } };
    },
  };
  return attack;
}

/** The `from` of the v2 push a request carries (null: not one). */
function pushFrom(req: HopRequest): number | null {
  if (req.method !== 'POST' || req.path !== wire2.WIRE2_PATH) return null;
  const m = wire2.decodeMessage(new Uint8Array(req.body));
  return m.ok && m.value.kind === 'push' ? m.value.from : null;
}

/**
 * (g) on v2: the body of one agent's push goes up under the next push request of another agent, and that
 * one's body under the next after it (v2 has no token to swap: the request is all the hop can move), so
 * each agent is answered the other's custody. `swapped` counts the requests that carried another's push.
 */
export function swapV2Pushes(): Attack & { swapped: number } {
  let held: { from: number; body: Buffer } | null = null;
  const attack = {
    name: 'swap v2 pushes between agents',
    swapped: 0,
    onRequest(req: HopRequest): RequestVerdict {
      const from = pushFrom(req);
      if (from === null) return undefined;
      const other = held && held.from !== from ? held : null;
      held = { from, body: req.body };
      if (!other) return undefined;
      attack.swapped++;
      return { forward: { ...req, body: other.body } };
    },
  };
  return attack;
}
