import { pushBundleId } from '@driftline/hop';
import {
  decodeBundle,
  endpointText,
  type Receipt,
  ulidFromBytes,
  ulidTime,
  wire2,
} from '@driftline/protocol';
import type { IncomingBundle } from '../ports/Custody.js';

/** How long a v2 push is held at most (v1's default bundle lifetime: a push names none). */
const PUSH_LIFETIME_MS = 30 * 86_400_000;

/**
 * Reads what custody needs from a bundle's framing and header. Signatures are not checked here:
 * the hub verifies them end to end (S4 in docs/architecture.md#invariants); a relay only refuses what it cannot route.
 * The lifetime counts from the source's `created`, on the relay's clock.
 */
export function describeBundle(
  bytes: Uint8Array,
  /** `site/agent` of a hop v2 sender registered here (decision 495); null: not here (it came through a relay). */
  wire2Source: (from: number) => string | null = () => null,
  now = Date.now(),
): { ok: true; value: IncomingBundle } | { ok: false; code: NonNullable<Receipt['code']>; message: string } {
  if (wire2.isWire2Message(bytes)) return describePush(bytes, wire2Source, now);
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

/**
 * A hop v2 push, or the hub's v2 ack or publication, carried as it came (docs/decisions/495-hop-v2-on-the-agent-link.md): its id from its
 * signature, toward the hub, first when it holds a failure. Its signature is the hub's to check.
 */
function describePush(
  bytes: Uint8Array,
  wire2Source: (from: number) => string | null,
  now: number,
): { ok: true; value: IncomingBundle } | { ok: false; code: NonNullable<Receipt['code']>; message: string } {
  const d = wire2.decodeMessage(bytes);
  if (!d.ok) return { ok: false, code: d.error.code, message: d.error.message };
  const m = d.value;
  if (m.kind === 'ack' && m.from === wire2.HUB_NODE_ID) {
    // the hub's ack of a v2 push, on its way down: the site is the one it was pulled for
    const ack = m.body as wire2.AckBody;
    return {
      ok: true,
      value: {
        id: pushBundleId(ack.committedAt, m.signature),
        dest: '',
        priority: 'control',
        kind: 'ack',
        expiresAt: now + PUSH_LIFETIME_MS,
        bytes,
      },
    };
  }
  if (m.kind === 'publication' && m.from === wire2.HUB_NODE_ID) {
    // the hub's compact publication manifest (decision 505), on its way down at bulk as v1's `blob`
    const p = m.body as wire2.PublicationBody;
    return {
      ok: true,
      value: {
        id: pushBundleId(ulidTime(ulidFromBytes(p.id)), m.signature),
        dest: '',
        priority: 'bulk',
        kind: 'blob',
        expiresAt: p.expires !== undefined ? p.expires * 1000 : now + PUSH_LIFETIME_MS,
        bytes,
      },
    };
  }
  if (m.kind !== 'push')
    return {
      ok: false,
      code: 'unprocessable',
      message: `a relay carries v2 pushes up, acks and publications down, not ${m.kind}`,
    };
  const body = m.body as wire2.PushBody;
  const source = wire2Source(m.from);
  return {
    ok: true,
    value: {
      id: pushBundleId(body.t0, m.signature),
      dest: 'hub',
      priority: body.failure ? 'failure' : 'status',
      kind: 'doc-delta',
      expiresAt: Math.min(body.t0 ?? now, now) + PUSH_LIFETIME_MS,
      bytes,
      ...(source ? { source } : {}),
    },
  };
}
