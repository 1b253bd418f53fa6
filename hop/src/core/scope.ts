import { type BundleId, decodeBundle, type Receipt, wire2 } from '@driftline/protocol';
import type { Peer } from '../ports/HopBackend.js';
import { pushBundleId } from '../wire2/push.js';

/** Why a bundle was refused before custody, for receipts and the refusal counter. */
export type ScopeRefusal = 'foreign-site' | 'not-uplink';

/** A batch split by what its peer may post, with a way to put the receipts back in order. */
export interface ScopedBatch {
  /** The bundles the peer may post, in order (undecodable ones too: the backend rejects them with the codec's code). */
  allowed: Uint8Array[];
  /** Refused bundles: their receipt and why. */
  refused: { receipt: Receipt; reason: ScopeRefusal }[];
  /** The whole batch's receipts, from the backend's receipts for `allowed` (indexes renumbered). */
  complete(inner: readonly Receipt[]): Receipt[];
}

/**
 * The agent whose hop v2 key this node registered under short id `from` (decision 495); null: not here
 * (it registered at a relay below this one).
 */
export type Wire2KeyOwner = (from: number) => { site: string; agent: string } | null;

/** Whether `peer` acts for `site` (its token's sites, or `*`): may post its bundles and pull its downlink. */
export function actsFor(peer: Pick<Peer, 'sites'>, site: string): boolean {
  return peer.sites.includes('*') || peer.sites.includes(site);
}

type Refusal = { bundleId: BundleId | null; reason: ScopeRefusal; message: string } | null;

/**
 * Applies S4's (docs/architecture.md#invariants) "a peer acts only for its own sites" to a posted batch: a downstream peer may post
 * only bundles going up to the hub (`destination: 'hub'`; a site's downlink is filled only from the
 * upstream direction) whose `source` is a site the peer's token covers (or `*`). Acks and control
 * bundles come from the hub, so no downstream peer can post one. Signatures are not checked here.
 * With `keyOwner` (a relay, which pins keys: docs/decisions/495-hop-v2-on-the-agent-link.md) hop v2
 * messages are scoped too: the hub's ack is downlink, and a push of a key registered here for another site
 * is not the peer's; without it (the hub, whose ingest checks a push's site) they pass unread.
 */
/**
 * A downlink watch's sites split by `peer`'s scope (decision 620): those it acts for, with their cursors
 * as numbers, are watched; the others are answered as refused.
 */
export function scopeWatch(
  peer: Pick<Peer, 'sites'>,
  cursors: Iterable<readonly [string, string]>,
): { watched: Map<string, number>; refused: string[] } {
  const watched = new Map<string, number>();
  const refused: string[] = [];
  for (const [site, cursor] of cursors)
    if (actsFor(peer, site)) watched.set(site, Number(cursor));
    else refused.push(site);
  return { watched, refused };
}

export function scopeBatch(
  peer: Peer,
  bundles: readonly Uint8Array[],
  by: string,
  keyOwner?: Wire2KeyOwner,
): ScopedBatch {
  const allowed: Uint8Array[] = [];
  const at: number[] = [];
  const refused: ScopedBatch['refused'] = [];
  const out: (Receipt | undefined)[] = new Array(bundles.length);
  bundles.forEach((bytes, index) => {
    const r = !wire2.isWire2Message(bytes)
      ? bundleRefusal(peer, bytes)
      : keyOwner
        ? wire2Refusal(peer, bytes, keyOwner)
        : null;
    if (r) {
      const receipt: Receipt = {
        bundleId: r.bundleId,
        index,
        status: 'rejected',
        code: 'forbidden',
        message: r.message,
        by,
      };
      out[index] = receipt;
      refused.push({ receipt, reason: r.reason });
      return;
    }
    at.push(index);
    allowed.push(bytes);
  });
  return {
    allowed,
    refused,
    complete(inner) {
      inner.forEach((r, i) => {
        const index = at[i] as number;
        out[index] = { ...r, index };
      });
      return out as Receipt[];
    },
  };
}

/** A v1 bundle's refusal; none for one that does not decode (the backend rejects it with the codec's code). */
function bundleRefusal(peer: Peer, bytes: Uint8Array): Refusal {
  const d = decodeBundle(bytes);
  if (!d.ok) return null;
  const h = d.value.header;
  if (h.destination !== 'hub')
    return {
      bundleId: h.id,
      reason: 'not-uplink',
      message: `peer '${peer.name}' may send bundles only toward the hub; a site's downlink is filled from upstream`,
    };
  const site = h.source === 'hub' ? null : h.source.site;
  if (site !== null && actsFor(peer, site)) return null;
  return {
    bundleId: h.id,
    reason: 'foreign-site',
    message: `peer '${peer.name}' acts for ${peer.sites.join(', ') || 'no site'}, not for the bundle's source '${site ?? 'hub'}'${site === null ? '' : ` (let it: at the hub \`hub peer sites ${peer.name} --sites ${[...peer.sites, site].join(',')}\`; at a relay, the site's agent needs a token from \`relay token add ${site}\`)`}`,
  };
}

/**
 * A v2 message's refusal; none for a push whose key was not registered here, nor for one that does not
 * decode or is of another kind (the backend rejects those with its code).
 */
function wire2Refusal(peer: Peer, bytes: Uint8Array, sender: Wire2KeyOwner): Refusal {
  const d = wire2.decodeMessage(bytes);
  if (!d.ok) return null;
  const m = d.value;
  // the hub's messages (acks, publications) travel down only
  if (m.from === wire2.HUB_NODE_ID)
    return {
      bundleId: null,
      reason: 'not-uplink',
      message: `peer '${peer.name}' may send only pushes toward the hub; a site's downlink is filled from upstream`,
    };
  const source = m.kind === 'push' ? sender(m.from) : null;
  if (!source || actsFor(peer, source.site)) return null;
  return {
    bundleId: pushBundleId((m.body as wire2.PushBody).t0, m.signature) as BundleId,
    reason: 'foreign-site',
    message: `peer '${peer.name}' acts for ${peer.sites.join(', ') || 'no site'}, not for the push's source '${source.site}/${source.agent}'`,
  };
}
