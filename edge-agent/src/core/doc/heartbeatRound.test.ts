import * as A from '@automerge/automerge';
import { type HeartbeatBackend, heartbeatActor, rebuildHeartbeat } from '@driftline/hop/heartbeat';
import { docId, type PlanSummary } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { type AgentAutomergeDoc, newEpochDoc, plainFacts, readDoc, type StoredAgentDoc } from './agentDoc.js';
import { heartbeatForm } from './heartbeatRound.js';
import { comp, HOUR, N, round, T0 } from './testRounds.js';

const DOC_ID = docId('ship-7', 'a1', 1);
const lastChange = (doc: AgentAutomergeDoc) => {
  const heads = A.getHeads(doc);
  return A.decodeChange(A.getBackend(doc).getChangeByHash(heads[0] as string) as Uint8Array);
};

/**
 * The hub's side of a heartbeat (decision 500), as its merge does it: the replica loaded as the
 * heartbeat actor, the push's changes merged, the heartbeat's change rebuilt in place. Answers the
 * replica after it, or why not (the replica then stays as it was).
 */
function hubMerges(
  replica: AgentAutomergeDoc,
  form: NonNullable<ReturnType<typeof heartbeatForm>>,
): { doc: AgentAutomergeDoc; ok: true } | { ok: false; reason: string } {
  const doc = A.load<StoredAgentDoc>(A.save(replica), { actor: heartbeatActor(DOC_ID) });
  const h = A.getBackend(doc);
  if (form.changes.length > 0) h.loadIncremental(form.changes);
  const r = rebuildHeartbeat(h as unknown as HeartbeatBackend, DOC_ID, form.heartbeat, true);
  return r.ok ? { ok: true, doc: A.load<StoredAgentDoc>(A.save(doc)) } : r;
}

const merged = (replica: AgentAutomergeDoc, form: NonNullable<ReturnType<typeof heartbeatForm>>) => {
  const r = hubMerges(replica, form);
  if (!r.ok) throw new Error(r.reason);
  return r.doc;
};

/** The agent's epoch after a first round and its ack: the hub holds a replica of it. */
function started() {
  const doc = round(newEpochDoc('ship-7', 'a1', 1), T0, true).doc;
  return { doc, replica: A.clone(doc), acked: A.getHeads(doc) };
}

describe('a quiet round as a heartbeat the hub rebuilds (decision 500)', () => {
  it('reads as the confirmations written apart, and the hub rebuilds the very change from the heartbeat', () => {
    let { doc, replica, acked } = started();
    let apart = A.clone(doc);
    for (let k = 1; k <= 3; k++) {
      const at = T0 + k * 6 * HOUR;
      const r = round(doc, at, 'heartbeat', () => ({}), k);
      apart = round(apart, at, true, () => ({}), k).doc;
      expect(r.unchanged.every(Boolean)).toBe(true);
      doc = r.doc;
      // the same cells and facts as decision 330's apart entries
      expect(readDoc(doc).cells).toEqual(readDoc(apart).cells);
      expect(plainFacts(doc)).toMatchObject({ queueDepth: k, reportedAt: at });
      expect(lastChange(doc).actor).toBe(heartbeatActor(DOC_ID));
      const form = heartbeatForm(doc, A.saveSince(doc, acked));
      if (!form) throw new Error('a quiet round has a heartbeat form');
      expect(form.changes.length).toBe(0);
      // the round's change, ~46 B a cell before compression, is ~1 B a cell as a heartbeat
      expect(form.heartbeat.gaps.length + form.heartbeat.runs.length).toBeLessThanOrEqual(N + 4);
      replica = merged(replica, form);
      // the same document at both ends: same heads, the next change applies on top
      expect(A.getHeads(replica)).toEqual(A.getHeads(doc));
      expect(readDoc(replica)).toEqual(readDoc(doc));
      acked = A.getHeads(doc);
    }
  });

  it('carries the changes before it too, when the hub has not acknowledged them', () => {
    const s = started();
    let doc = s.doc;
    const replica = s.replica;
    const acked = A.getHeads(doc);
    doc = round(doc, T0 + 6 * HOUR, 'heartbeat').doc;
    doc = round(doc, T0 + 12 * HOUR, 'heartbeat', () => ({}), 1).doc;
    const form = heartbeatForm(doc, A.saveSince(doc, acked));
    if (!form) throw new Error('a heartbeat form');
    expect(form.changes.length).toBeGreaterThan(0);
    expect(A.getHeads(merged(replica, form))).toEqual(A.getHeads(doc));
  });

  it('writes a round with news as its change, then its unchanged cells as the heartbeat change', () => {
    const { doc, replica, acked } = started();
    const drift = (i: number) =>
      i === 3
        ? { status: 'drift' as const, planHash: `${'f'.repeat(60)}0003` as PlanSummary['planHash'] }
        : {};
    const moved = (i: number) => (i === 1 ? { git: { commit: 'd'.repeat(40) } as PlanSummary['git'] } : {});
    let agent = doc;
    let apart = A.clone(doc);
    let hub = replica;
    let since = acked;
    for (const [k, over] of [drift, moved].entries()) {
      const at = T0 + (k + 1) * 6 * HOUR;
      agent = round(agent, at, 'heartbeat', over, k + 1).doc;
      apart = round(apart, at, true, over, k + 1).doc;
      // the changed plan (or the moved commit) in the round's change, the other 49 cells after it
      expect(lastChange(agent).actor).toBe(heartbeatActor(DOC_ID));
      expect(readDoc(agent).cells).toEqual(readDoc(apart).cells);
      const form = heartbeatForm(agent, A.saveSince(agent, since));
      if (!form) throw new Error('a heartbeat form');
      expect(form.changes.length).toBeGreaterThan(0);
      hub = merged(hub, form);
      expect(A.getHeads(hub)).toEqual(A.getHeads(agent));
      since = A.getHeads(agent);
    }
    // and decision 330's reading: the commit planned last
    expect(readDoc(agent).cells[`prod/${comp(1)}`]?.commit).toBe('d'.repeat(40));
  });

  it('writes a round with too few unchanged cells as one change', () => {
    const { doc } = started();
    const next = round(doc, T0 + 6 * HOUR, 'heartbeat', (i) =>
      i > 44 ? {} : { status: 'drift', planHash: `${'f'.repeat(60)}${String(i).padStart(4, '0')}` as never },
    ).doc;
    expect(lastChange(next).actor).not.toBe(heartbeatActor(DOC_ID));
    expect(heartbeatForm(next, A.saveSince(next, A.getHeads(doc)))).toBeNull();
  });

  it('is refused by a hub whose document is not the agent’s, or for a change the heartbeat does not name', () => {
    const { doc, replica, acked } = started();
    const next = round(doc, T0 + 6 * HOUR, 'heartbeat', () => ({}), 1).doc;
    const form = heartbeatForm(next, A.saveSince(next, acked));
    if (!form) throw new Error('a heartbeat form');
    // a hash the agent did not sign (or a hub whose Automerge makes another change): never merged
    const other = { ...form, heartbeat: { ...form.heartbeat, change: new Uint8Array(8).fill(7) } };
    expect(hubMerges(replica, other)).toMatchObject({
      ok: false,
      reason: /does not rebuild the agent's change/,
    });
    expect(A.getHeads(replica)).toEqual(acked);
    // a replica that lacks a cell the agent has: another cell list
    const fewer = A.change(A.clone(replica), (d) => {
      delete (d as unknown as { cells: Record<string, unknown> }).cells[`prod/${comp(0)}`];
    });
    expect(hubMerges(fewer, form)).toMatchObject({ ok: false, reason: /another cell list/ });
  });
});
