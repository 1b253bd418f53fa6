import { describe, expect, it } from 'vitest';
import type { AgentLedger } from '../src/core/ledger/AgentLedger.js';
import { ackFor, memoryLedger } from './agentStorageFixtures.js';
import { runId, summary } from './helpers/storeFixtures.js';

/**
 * Custody deadlines (docs/decisions/575-custody-deadline-per-path.md): a receipt the hub never acknowledges
 * past its upstream's deadline sends what it covered again by another upstream, and names the one that sat.
 */
const MIN = 60_000;

function push(s: AgentLedger, upstream: string) {
  const d = s.pending()[0];
  if (!d) throw new Error('nothing pending');
  s.recordPush({
    bundleId: `b-${upstream}-${d.heads.join()}`,
    epoch: d.epoch,
    heads: d.heads,
    bytes: d.changes.length,
    upstream,
    receipt: 'stored',
    blobs: d.blobs.map((b) => b.sha256),
    fromAck: d.fromAck === true,
  });
  return d;
}

describe('custody deadlines', () => {
  it('sends what an upstream sat on again once its deadline passes, by the others first, and names it', () => {
    let t = 1_000_000;
    const { ledger: s } = memoryLedger({ custodyDeadlineMs: 10 * MIN, now: () => t });
    s.record({ runId: runId(), summary: summary() });
    const first = push(s, 'http://sitter');
    expect(first.fromAck).toBe(true);
    expect(s.pending()).toEqual([]);
    t += 10 * MIN - 1;
    expect(s.pending()).toEqual([]);
    t += 1;
    const again = s.pending()[0];
    expect(again?.changes).toEqual(first.changes);
    expect(again?.overdue).toEqual({ by: 'http://sitter', at: 1_000_000, deadlineMs: 10 * MIN });
    expect(again?.fromAck).toBe(true);
    push(s, 'http://honest');
    expect(s.pending()).toEqual([]);
    expect(s.sitters()).toEqual([
      { upstream: 'http://sitter', since: t, results: 1, oldestAt: 1_000_000, resends: 1 },
    ]);
    expect(s.status().custodyOverdue.map((c) => c.upstream)).toEqual(['http://sitter']);
  });

  it('learns each path’s delivery time from the hub’s acks and sets the deadline by it', () => {
    let t = 1_000_000;
    const { ledger: s } = memoryLedger({ custodyDeadlineMs: 60 * MIN, now: () => t });
    s.record({ runId: runId(), summary: summary() });
    const d = push(s, 'http://honest');
    t += 4 * MIN;
    s.applyAck(ackFor(1, d.heads));
    // The next result: the honest path delivered in 4 min, so a path that has delivered nothing is given
    // 1.5 × 4 min + 1 min, not the hour of `custodyDeadlineMs`.
    s.record({ runId: runId(), summary: summary({ component: 'dns' }) });
    push(s, 'http://sitter');
    t += 7 * MIN - 1;
    expect(s.pending()).toEqual([]);
    t += 1;
    expect(s.pending()[0]?.overdue?.deadlineMs).toBe(7 * MIN);
  });

  it('counts an upstream that delivers as no longer sitting, and lets go only of what an ack covers', () => {
    let t = 1_000_000;
    const { ledger: s } = memoryLedger({ custodyDeadlineMs: 10 * MIN, now: () => t });
    s.record({ runId: runId(), summary: summary() });
    push(s, 'http://slow');
    t += 10 * MIN;
    // No other upstream: the same one again, counted as a resend of its episode.
    const resent = push(s, 'http://slow');
    expect(resent.fromAck).toBe(true);
    expect(s.sitters()).toMatchObject([{ upstream: 'http://slow', resends: 1 }]);
    t += MIN;
    s.record({ runId: runId(), summary: summary({ component: 'dns' }) });
    const second = push(s, 'http://slow');
    expect(second.fromAck).toBe(false);
    t += 2 * MIN;
    // The hub acknowledges the resent push only (3 min after its receipt): it delivered, so it no longer
    // sits, and its deadline is 1.5 × 3 + 1 = 5.5 min; the second receipt (2 min old) is still held.
    s.applyAck(ackFor(1, resent.heads));
    expect(s.sitters()).toEqual([]);
    // (An ack newer than the receipt sends the changes since it again anyway: resend.ts.)
    t += 3.5 * MIN - 1;
    expect(s.pending()[0]?.overdue).toBeUndefined();
    t += 1;
    expect(s.pending()[0]?.overdue).toMatchObject({ by: 'http://slow', deadlineMs: 5.5 * MIN });
  });
});
