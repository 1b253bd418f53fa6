import {
  agentRef,
  type BundleId,
  type DecodedBundle,
  type DocDeltaPayload,
  decodeBundle,
  decodePayload,
  type ErrorCode,
  type KeyCache,
  parseDocId,
  verifyBundle,
  type wire2,
} from '@driftline/protocol';
import type { AgentRow } from '../ports/HubStore.js';

/** What the hub keeps of a hop v2 push for its ack (decisions 495, 525). */
export interface Wire2Pushed {
  from: number;
  seq: number;
  tip: Uint8Array;
  ackLaterS?: number;
}

export { KeyCache } from '@driftline/protocol';

/** Why a bundle was refused; also the label of the refusal counter. */
export type RefusalReason =
  | 'bad-bundle'
  | 'unsupported-version'
  | 'unknown-kind'
  | 'wrong-kind'
  | 'unknown-agent'
  | 'revoked-agent'
  | 'bad-signature'
  | 'agent-mismatch';

export type Verified =
  | {
      ok: true;
      bundle: DecodedBundle;
      payload: DocDeltaPayload;
      agent: AgentRow;
      doc: { id: string; site: string; agent: string; epoch: number };
      /**
       * A hop v2 push (decision 495): its sender's short id, its sequence and its signature's `tip`, for
       * the ack; `ackLaterS`: the ack may wait for the agent's next push this long (decision 525).
       */
      wire2?: Wire2Pushed;
      /** A v2 push's heartbeat: the change the merge rebuilds after `payload.changes` (decision 500). */
      heartbeat?: wire2.HeartbeatBody;
    }
  | {
      ok: false;
      bundleId: BundleId | null;
      reason: RefusalReason;
      code: ErrorCode;
      message: string;
      /** The agent the header names as source, when it names one: where a rejection goes. */
      source: { site: string; agent: string } | null;
    };

const CODE: Record<RefusalReason, ErrorCode> = {
  'bad-bundle': 'bad-bundle',
  'unsupported-version': 'unsupported-version',
  'unknown-kind': 'unknown-kind',
  'wrong-kind': 'unprocessable',
  'unknown-agent': 'unknown-agent',
  'revoked-agent': 'revoked-agent',
  'bad-signature': 'bad-signature',
  'agent-mismatch': 'forbidden',
};

export function refuse(
  bundleId: BundleId | null,
  reason: RefusalReason,
  message: string,
  source: { site: string; agent: string } | null = null,
): Verified {
  return { ok: false, bundleId, reason, code: CODE[reason], message, source };
}

/**
 * Checks a bundle meant for the hub (S4 in docs/architecture.md#invariants): a doc-delta from an enrolled, unrevoked agent,
 * signed by its pinned key, about a document of that same agent. Nothing is stored here.
 */
export async function verifyDocDelta(
  bytes: Uint8Array,
  lookup: (site: string, agent: string) => Promise<AgentRow | null>,
  keys: KeyCache,
): Promise<Verified> {
  const decoded = decodeBundle(bytes);
  if (!decoded.ok) return refuse(null, decoded.error.code, decoded.error.message);
  const b = decoded.value;
  const id = b.header.id;
  if (b.header.kind !== 'doc-delta') {
    return refuse(id, 'wrong-kind', `the hub takes doc-delta bundles upstream, not '${b.header.kind}'`);
  }
  const src = b.header.source;
  if (src === 'hub' || !src.agent) {
    return refuse(id, 'agent-mismatch', 'a doc-delta must name its agent as source {site, agent}');
  }
  const who = agentRef(src.site, src.agent);
  const from = { site: src.site as string, agent: src.agent as string };
  const agent = await lookup(src.site, src.agent);
  if (!agent) return refuse(id, 'unknown-agent', `agent '${who}' is not enrolled`, from);
  if (agent.revokedAt !== null) return refuse(id, 'revoked-agent', `agent '${who}' was revoked`, from);
  if (!(await verifyBundle(b, await keys.get(agent.publicKey)))) {
    return refuse(id, 'bad-signature', `signature does not match enrolled key for agent '${who}'`, from);
  }
  const payload = decodePayload('doc-delta', b.payload);
  if (!payload.ok) return refuse(id, 'bad-bundle', payload.error.message, from);
  const doc = b.header.doc ? parseDocId(b.header.doc) : null;
  if (!doc || doc.site !== src.site || doc.agent !== src.agent || doc.epoch !== payload.value.epoch) {
    return refuse(
      id,
      'agent-mismatch',
      `agent '${who}' may not write document '${b.header.doc ?? '(none)'}' epoch ${payload.value.epoch}`,
      from,
    );
  }
  return { ok: true, bundle: b, payload: payload.value, agent, doc: { id: b.header.doc as string, ...doc } };
}
