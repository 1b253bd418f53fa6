import type * as A from '@automerge/automerge';
import { encodePush, type PushForms } from '@driftline/hop';
import { HopClient } from '@driftline/hop/client';
import { wire2Registration } from '@driftline/hop/testing';
import { type AckPayload, decodeBundle, decodePayload, wire2 } from '@driftline/protocol';
import type { AgentSim } from './agentSim.js';
import { startHub } from './hubFixture.js';

/** A hub with ship-7/a1 enrolled, and that agent's key registered for hop v2 with the hub itself. */
export async function wire2Hub(extra: object = {}) {
  const hub = await startHub(extra);
  const agent = hub.agent;
  const client = new HopClient({ url: hub.hopUrl, token: 'relay-token', timeoutMs: 10_000 });
  const info = await client.registerWire2(await wire2Registration(agent.keys));
  if (!info.ok) {
    await hub.close();
    throw new Error(info.message);
  }
  return { agent, client, info, hub };
}

/** The agent's next round (changes since its last ack, or since `since`) as a v2 push. */
export async function v2Push(
  agent: AgentSim,
  from: number,
  seq: number,
  t0: number,
  opts: {
    since?: A.Heads;
    blobs?: { sha256: string; size: number; runId?: string }[];
    forms?: PushForms;
    /** More of the round follows within these seconds (push field 11, decision 525). */
    ackLaterS?: number;
  } = {},
): Promise<Uint8Array> {
  const b = decodeBundle(
    await agent.delta({
      ...(opts.since ? { from: opts.since } : {}),
      ...(opts.blobs ? { blobs: opts.blobs } : {}),
    }),
  );
  if (!b.ok) throw new Error(b.error.message);
  const p = decodePayload('doc-delta', b.value.payload);
  if (!p.ok) throw new Error(p.error.message);
  return encodePush(
    { ...p.value, priority: 'status' },
    { from, seq, t0, ackLaterS: opts.ackLaterS },
    agent.keys.privateKey,
    opts.forms,
  );
}

/** One v2 pull after `have`: the cursor, and the acks it brought, v2 messages and v1 bundles apart. */
export async function pullAcks(client: HopClient, agent: AgentSim, from: number, seq: number, have: number) {
  const r = await client.exchangeWire2(
    await wire2.encodeMessage(
      { kind: 'pull', from, to: 0, seq, body: { have, holdS: 0 } },
      agent.keys.privateKey,
    ),
  );
  if (!r.ok) throw new Error(r.message);
  if (r.value.status === 204 || r.value.body.length === 0) return { cursor: have, v2: [], v1: [] };
  const page = wire2.decodePullAnswer(r.value.body);
  if (!page.ok) throw new Error(page.error.message);
  const v2: wire2.AckBody[] = [];
  const v1: AckPayload[] = [];
  for (const item of page.value.items) {
    const m = wire2.decodeMessage(item);
    if (m.ok && m.value.kind === 'ack') v2.push(m.value.body as wire2.AckBody);
    const b = decodeBundle(item);
    if (!m.ok && b.ok && b.value.header.kind === 'ack') {
      const p = decodePayload('ack', b.value.payload);
      if (p.ok) v1.push(p.value);
    }
  }
  return { cursor: page.value.cursor, v2, v1 };
}
