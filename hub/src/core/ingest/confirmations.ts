import { DocPlanRequestSchema } from '@driftline/protocol';
import type { PlanRequestRow } from '../../ports/HubStore.js';
import type { Batch } from './batch.js';

/** Entries of an agent's `requests` map read per batch (an epoch holds far fewer requests). */
export const MAX_CONFIRMATIONS = 10_000;

/**
 * The plan requests an agent's document says it received (`requests`, decision 230), noted before the
 * document's segments are read: a run answers a request only if the agent started it after it received
 * the request. A document with the map (even empty) marks its agent as one that confirms.
 */
export function noteConfirmations(b: Batch, site: string, agent: string, requests: unknown): void {
  if (requests === undefined || requests === null || typeof requests !== 'object') return;
  const row = b.agents.get(`${site}/${agent}`);
  if (row) row.confirmsRequests = true;
  let n = 0;
  for (const [id, value] of Object.entries(requests as Record<string, unknown>)) {
    // An agent's document is untrusted input: at most MAX_CONFIRMATIONS entries are read per batch.
    if (++n > MAX_CONFIRMATIONS) break;
    const p = DocPlanRequestSchema.safeParse(value);
    if (!p.success) continue;
    const { state, receivedAt, runId, answeredAt, startedAt } = p.data;
    b.confirmations.set(id, {
      agent,
      state,
      receivedAt,
      ...(runId !== undefined && answeredAt !== undefined ? { runId, answeredAt } : {}),
      ...(startedAt !== undefined ? { startedAt } : {}),
    });
  }
}

/** The site's open requests, read once per batch. */
export async function openRequests(b: Batch, site: string): Promise<PlanRequestRow[]> {
  let open = b.openRequests.get(site);
  if (!open) {
    open = await b.store.listPlanRequests({ site, open: true });
    b.openRequests.set(site, open);
  }
  return open;
}

/**
 * After the document is read: each open request of the site its agent confirmed moves by the agent's
 * word, `accepted` → `delivered` (at the time it says, on the hub clock), `refused`, `expired`. A request
 * a run already answered in this batch keeps `done` and gains the times. A request the agent says it
 * started the plan for gains `startedAt` (the API shows it `running`, decision 560). A request the agent
 * stamped with the run it started for it (decision 300) is `done` by that run, also when the plan came
 * out the same (no new run travels then: a cell confirmation).
 */
export async function recordConfirmations(b: Batch, site: string, agent: string, offsetMs: number) {
  if (b.confirmations.size === 0) return;
  for (const req of await openRequests(b, site)) {
    const c = b.confirmations.get(req.requestId);
    if (!c || c.agent !== agent || req.agent !== agent) continue;
    let cur = b.doneRequests.get(req.requestId) ?? req;
    if (cur.agentReceivedAt == null) {
      const deliveredAt = hubTime(c.receivedAt, offsetMs, firstPossible(cur), b.now);
      const times = { agentReceivedAt: c.receivedAt, deliveredAt };
      const state =
        cur.state === 'done'
          ? 'done'
          : c.state === 'accepted'
            ? 'delivered'
            : (c.state as 'refused' | 'expired');
      cur = { ...cur, ...times, state };
      b.doneRequests.set(req.requestId, cur);
    }
    if (
      c.startedAt !== undefined &&
      c.state === 'accepted' &&
      cur.state !== 'expired' &&
      cur.startedAt == null
    ) {
      const floor = Math.max(firstPossible(cur), cur.deliveredAt ?? 0);
      cur = { ...cur, startedAt: hubTime(c.startedAt, offsetMs, floor, b.now) };
      b.doneRequests.set(req.requestId, cur);
    }
    if (c.runId !== undefined && c.state === 'accepted' && cur.state === 'delivered')
      b.doneRequests.set(req.requestId, { ...cur, state: 'done', doneAt: b.now, runId: c.runId });
  }
}

/**
 * An agent's time on the hub clock: moved by its offset (an estimate, within its uncertainty: T2), never
 * before `floor`, what the hub saw happen first, nor after now (decision 560).
 */
export function hubTime(agentAt: number, offsetMs: number, floor: number, now: number): number {
  return Math.min(Math.max(agentAt - offsetMs, floor), now);
}

/**
 * The earliest the agent can have had a request: when it was asked, and once a relay pulled it from the
 * hub, then (the agent's copy came through a pull; decision 560).
 */
export const firstPossible = (r: PlanRequestRow): number => Math.max(r.requestedAt, r.relayAt ?? 0);
