import { decodeBundle, type Receipt } from '@driftline/protocol';
import type { Peer } from '../ports/HopBackend.js';

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
 * Applies S4's (docs/architecture.md#invariants) "a peer acts only for its own sites" to a posted batch: a downstream peer may post
 * only bundles going up to the hub (`destination: 'hub'`; a site's downlink is filled only from the
 * upstream direction) whose `source` is a site the peer's token covers (or `*`). Acks and control
 * bundles come from the hub, so no downstream peer can post one. Signatures are not checked here.
 */
export function scopeBatch(peer: Peer, bundles: readonly Uint8Array[], by: string): ScopedBatch {
  const allowed: Uint8Array[] = [];
  const at: number[] = [];
  const refused: ScopedBatch['refused'] = [];
  const out: (Receipt | undefined)[] = new Array(bundles.length);
  bundles.forEach((bytes, index) => {
    const d = decodeBundle(bytes);
    if (d.ok) {
      const h = d.value.header;
      const refuse = (reason: ScopeRefusal, message: string) => {
        const receipt: Receipt = {
          bundleId: h.id,
          index,
          status: 'rejected',
          code: 'forbidden',
          message,
          by,
        };
        out[index] = receipt;
        refused.push({ receipt, reason });
      };
      if (h.destination !== 'hub') {
        refuse(
          'not-uplink',
          `peer '${peer.name}' may send bundles only toward the hub; a site's downlink is filled from upstream`,
        );
        return;
      }
      const site = h.source === 'hub' ? null : h.source.site;
      if (site === null || !(peer.sites.includes('*') || peer.sites.includes(site))) {
        refuse(
          'foreign-site',
          `peer '${peer.name}' acts for ${peer.sites.join(', ') || 'no site'}, not for the bundle's source '${site ?? 'hub'}'${site === null ? '' : ` (let it: at the hub \`hub peer sites ${peer.name} --sites ${[...peer.sites, site].join(',')}\`; at a relay, the site's agent needs a token from \`relay token add ${site}\`)`}`,
        );
        return;
      }
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
