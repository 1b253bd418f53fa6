import { decodeBundle, endpointText, type Receipt } from '@driftline/protocol';
import type { IncomingBundle } from '../ports/Custody.js';

/**
 * Reads what custody needs from a bundle's framing and header. Signatures are not checked here:
 * the hub verifies them end to end (S4 in docs/architecture.md#invariants); a relay only refuses what it cannot route.
 * The lifetime counts from the source's `created`, on the relay's clock.
 */
export function describeBundle(
  bytes: Uint8Array,
): { ok: true; value: IncomingBundle } | { ok: false; code: NonNullable<Receipt['code']>; message: string } {
  const d = decodeBundle(bytes);
  if (!d.ok) return { ok: false, code: d.error.code, message: d.error.message };
  const h = d.value.header;
  return {
    ok: true,
    value: {
      id: h.id,
      dest: h.destination === 'hub' ? 'hub' : h.destination.site,
      priority: h.priority,
      kind: h.kind,
      expiresAt: h.created + h.lifetimeS * 1000,
      bytes,
      source: endpointText(h.source),
    },
  };
}
