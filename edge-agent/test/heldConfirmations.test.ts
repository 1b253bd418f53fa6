import * as A from '@automerge/automerge';
import { AgentDocSchema, asSiteId, cellKey, plainAgentDoc } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { renderStatus } from '../src/commands/status.js';
import { RecordBatcher } from '../src/core/record/RecordBatcher.js';
import type { RecordRunInput } from '../src/ports/Ledger.js';
import { ackFor, memoryLedger, sqliteLedger } from './agentStorageFixtures.js';
import { detail, runId, summary, tempDir } from './helpers/storeFixtures.js';

/**
 * Confirmations held until the round ends (docs/decisions/370-one-change-per-push.md): unchanged re-plans
 * recorded while more results are coming are kept in the ledger's storage and written into the document
 * as one change with the round's last result, any other change, or the next push.
 */

const CELLS = 200;
const at = (round: number, i: number) => new Date(Date.UTC(2030, 0, 1, round) + i * 1000).toISOString();
const comp = (i: number) => `component-${String(i).padStart(3, '0')}`;
const input = (round: number, i: number, hash = 'a'): RecordRunInput => ({
  runId: runId(),
  summary: summary({ component: comp(i), finishedAt: at(round, i), planHash: hash.repeat(64) as never }),
});
/** Changes in a delta (`saveSince` bytes are a run of change chunks). */
const changesIn = (doc: A.Doc<unknown>, since: string[]) => A.getChangesSince(doc, since).length;

/** Records a round through the daemon's batcher, `perBatch` results a commit, more coming until the last. */
function recordRound(
  ledger: { recordMany: (i: RecordRunInput[], o?: { moreComing?: boolean }) => unknown },
  inputs: RecordRunInput[],
  perBatch: number,
) {
  let left = inputs.length;
  const batcher = new RecordBatcher({
    recordMany: (batch: RecordRunInput[], opts: { moreComing: boolean }) =>
      ledger.recordMany(batch, opts) as never,
    setTimer: () => () => {},
    windowMs: 5000,
    maxBatch: perBatch,
    moreComing: () => left > 0,
  });
  for (const i of inputs) {
    left--;
    void batcher.record(i);
  }
  batcher.flush();
}

/** The hub's rejection of a bundle of this agent's, now (a heartbeat it could not rebuild). */
const refusedNow = () => {
  const t = Date.now();
  return {
    type: 'rejection' as const,
    site: 'ship-7' as never,
    agent: 'a1' as never,
    code: 'bad-bundle' as const,
    bundleIds: ['01JC0000000000000000000010' as never],
    count: 1,
    firstAt: t,
    lastAt: t,
  };
};

function acked(ledger: ReturnType<typeof memoryLedger>['ledger']) {
  const d = ledger.pending()[0];
  if (!d) throw new Error('nothing pending');
  ledger.applyAck({ ...ackFor(d.epoch, d.heads, []), readsConfirmed: true });
  return d.heads;
}

describe('held confirmations', () => {
  it('writes a quiet round recorded in many small batches as one change in the next bundle', () => {
    const { ledger } = memoryLedger();
    ledger.recordMany(Array.from({ length: CELLS }, (_, i) => input(0, i)));
    const since = acked(ledger);
    recordRound(
      ledger,
      Array.from({ length: CELLS }, (_, i) => input(1, i)),
      1,
    );
    const d = ledger.pending()[0]!;
    const doc = ledger.loadEpoch(d.epoch);
    expect(changesIn(doc, since)).toBe(1);
    // 200 confirmed entries of ~46 B and one change header (decision 330 measured 9,220 B apart).
    expect(d.changes.length).toBeLessThan(10_000);
    const cells = AgentDocSchema.parse(plainAgentDoc(A.toJS(doc))).cells;
    expect(cells[cellKey('prod', comp(7))]).toMatchObject({
      plannedAt: Date.parse(at(1, 7)),
      confirmations: 1,
    });
  });

  it('holds a changed plan with the confirmations before it until the next push, and counts a cell held twice', () => {
    const now = Date.UTC(2030, 0, 1, 3);
    const { ledger } = memoryLedger({ now: () => now });
    ledger.recordMany([input(0, 0), input(0, 1)]);
    const since = acked(ledger);
    ledger.recordMany([input(1, 0)], { moreComing: true });
    ledger.recordMany([input(2, 0)], { moreComing: true });
    expect(ledger.recordMany([input(2, 1, 'b')], { moreComing: true })[0]?.unchanged).toBe(false);
    const d = ledger.pending()[0]!;
    const doc = ledger.loadEpoch(d.epoch);
    expect(changesIn(doc, since)).toBe(1);
    const cells = AgentDocSchema.parse(plainAgentDoc(A.toJS(doc))).cells;
    expect(cells[cellKey('prod', comp(0))]).toMatchObject({
      plannedAt: Date.parse(at(2, 0)),
      confirmations: 2,
      unchangedSince: Date.parse(at(0, 0)),
    });
  });

  it('tells `edge-agent status` what is held back and when it goes up (bytes pending do not count it yet)', () => {
    let now = Date.UTC(2030, 0, 1, 6);
    const { ledger } = memoryLedger({ now: () => now });
    ledger.recordMany([input(0, 0), input(0, 1), input(0, 2)]);
    acked(ledger);
    expect(ledger.status().held).toEqual({ cells: 0, runs: 0, since: null, dueBy: null });
    expect(renderStatus(ledger.status())).toContain('held back      nothing\n');
    const heldAt = now;
    ledger.recordMany([input(1, 0)], { moreComing: true });
    now += 1000;
    ledger.recordMany([input(1, 1)], { moreComing: true });
    // confirmations alone: with the round's last plan, or ten minutes after the first at the latest
    const quiet = ledger.status();
    expect(quiet.held).toEqual({ cells: 2, runs: 0, since: heldAt, dueBy: heldAt + 600_000 });
    expect(quiet.bytesPending).toBe(0);
    expect(renderStatus(quiet)).toContain(
      `held back      2 cell(s), 0 new run(s) of a plan round under way, since ${new Date(heldAt).toISOString()}`,
    );
    expect(renderStatus(quiet)).toContain(
      `with the round's last plan, at ${new Date(heldAt + 600_000).toISOString()} at the latest`,
    );
    // a changed plan no schedule ran is due at once (decision 485): it goes with the next push
    now += 1000;
    ledger.recordMany([input(1, 2, 'b')], { moreComing: true });
    expect(ledger.status().held).toEqual({ cells: 3, runs: 1, since: heldAt, dueBy: now });
    expect(renderStatus(ledger.status())).toContain('3 cell(s), 1 new run(s) of a plan round under way');
    // the uplink's next bundle has them in the document: pending, no longer held
    expect(ledger.pending()).toHaveLength(1);
    expect(ledger.status().held).toEqual({ cells: 0, runs: 0, since: null, dueBy: null });
    expect(ledger.status().bytesPending).toBeGreaterThan(0);
  });

  it('holds a cron round’s confirmation at most half its cadence: rounds that overlap still send their quiet plans', () => {
    let now = Date.UTC(2030, 0, 1, 6);
    const { ledger } = memoryLedger({ now: () => now });
    ledger.recordMany([input(0, 0), input(0, 1)]);
    acked(ledger);
    // every 10 s, each plan outlasting it: the next firing is queued before a result is recorded, so
    // more is always coming and the round never ends
    const heldAt = now;
    ledger.recordMany([{ ...input(1, 0), scheduledEveryS: 10 }], { moreComing: true });
    now += 1000;
    ledger.recordMany([input(1, 1)], { moreComing: true }); // start-up's: no cadence, ten minutes
    expect(ledger.status().held).toMatchObject({ cells: 2, runs: 0, dueBy: heldAt + 5000 });
    now = heldAt + 4999;
    expect(ledger.pending()).toEqual([]);
    now = heldAt + 5000;
    expect(ledger.pending()).toHaveLength(1);
    expect(ledger.status().held).toEqual({ cells: 0, runs: 0, since: null, dueBy: null });
    // a later firing of the cell keeps the first hold's deadline; a six-hour cadence keeps ten minutes
    const again = now;
    ledger.recordMany([{ ...input(2, 0), scheduledEveryS: 6 * 3600 }], { moreComing: true });
    now += 3000;
    ledger.recordMany([{ ...input(3, 0), scheduledEveryS: 10 }], { moreComing: true });
    expect(ledger.status().held).toMatchObject({ cells: 1, dueBy: again + 5000 });
    ledger.recordMany([{ ...input(3, 1), scheduledEveryS: 6 * 3600 }], { moreComing: true });
    expect(ledger.status().held).toMatchObject({ cells: 2, dueBy: again + 5000 });
  });

  it('keeps held results across a restart, and the hub ack acknowledges their runs', () => {
    const dir = tempDir();
    const first = sqliteLedger(dir).ledger;
    first.recordMany([input(0, 0), input(0, 1), input(0, 2)]);
    acked(first);
    const changed = input(1, 2, 'b');
    first.recordMany([input(1, 0), input(1, 1), changed], { moreComing: true });
    expect(first.status().unackedRuns).toBe(3);
    first.close();
    const again = sqliteLedger(dir).ledger;
    // Read at once: a third plan of cell 0 counts the held one.
    again.recordMany([input(2, 0)], { moreComing: true });
    const doc = again.loadEpoch(1); // readers of the document see them: written first
    const d = again.pending()[0]!;
    expect(d.heads).toEqual(A.getHeads(doc));
    const plain = AgentDocSchema.parse(plainAgentDoc(A.toJS(doc)));
    expect(plain.cells[cellKey('prod', comp(0))]).toMatchObject({
      plannedAt: Date.parse(at(2, 0)),
      confirmations: 2,
    });
    expect(plain.cells[cellKey('prod', comp(1))]).toMatchObject({
      plannedAt: Date.parse(at(1, 1)),
      confirmations: 1,
    });
    expect(plain.cells[cellKey('prod', comp(2))]).toMatchObject({ runId: changed.runId, confirmations: 0 });
    expect(plain.runs[changed.runId]?.summary.planHash).toBe('b'.repeat(64));
    const r = again.applyAck({ ...ackFor(d.epoch, d.heads, []), readsConfirmed: true });
    expect(r.runsAcked).toBe(4);
    expect(again.status().unackedRuns).toBe(0);
  });

  it("holds changed plans too while more are coming: the round's last result writes all, facts once", () => {
    const { ledger, storage } = memoryLedger();
    const facts = { version: '1', cadenceS: { 'prod/a': 60 }, contactIntervalS: 60, upstream: 'http://r' };
    const withFacts = (i: RecordRunInput) => ({ ...i, facts });
    ledger.recordMany([withFacts(input(0, 0)), withFacts(input(0, 1))]);
    const since = acked(ledger);
    const changed = [withFacts(input(1, 0, 'b')), withFacts(input(1, 1, 'b'))];
    for (const c of changed) ledger.recordMany([c], { moreComing: true });
    expect(storage.heldRuns().map((r) => r.runId)).toEqual(changed.map((c) => c.runId).sort());
    expect(storage.heldCells()).toHaveLength(2);
    ledger.recordMany([withFacts(input(1, 2, 'b'))]);
    expect(storage.heldRuns()).toHaveLength(0);
    const end = ledger.loadEpoch(1) as unknown as A.Doc<{ facts: { queueDepth: number } }>;
    expect(end.facts.queueDepth).toBe(3); // the two of round 0 were acknowledged
    expect(changesIn(end, since)).toBe(1);
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(end)));
    for (const c of changed) expect(doc.runs[c.runId]).toBeDefined();
    expect(doc.cells[cellKey('prod', comp(1))]?.runId).toBe(changed[1]?.runId);
  });

  it("holds a scheduled round's changed plan and its detail with the round: one push once due, the detail after its run entry", () => {
    let now = Date.UTC(2030, 0, 1, 2);
    const { ledger } = memoryLedger({ now: () => now, holdNewsMs: 600_000 });
    ledger.recordMany([input(0, 0), input(0, 1)]);
    const since = acked(ledger);
    ledger.recordMany([input(1, 0)], { moreComing: true }); // a confirmation: waits
    expect(ledger.pending()).toEqual([]);
    now += 60_000;
    const changed = { ...input(1, 1, 'b'), detail: detail('news'), scheduledEveryS: 6 * 3600 };
    ledger.recordMany([changed], { moreComing: true });
    // news waits with the round (decisions 395, 485): no push, and its detail does not go up before its run
    expect(ledger.pending()).toEqual([]);
    expect(ledger.blobsToUpload()).toEqual([]);
    now += 540_000; // ten minutes after the first was held (sync.newsHoldS 600)
    expect(ledger.blobsToUpload().map((b) => b.runId)).toEqual([changed.runId]);
    const d = ledger.pending()[0]!;
    const doc = ledger.loadEpoch(1);
    expect(d.heads).toEqual(A.getHeads(doc));
    expect(changesIn(doc, since)).toBe(1);
    const plain = AgentDocSchema.parse(plainAgentDoc(A.toJS(doc)));
    expect(plain.runs[changed.runId]).toBeDefined();
    expect(plain.cells[cellKey('prod', comp(0))]).toMatchObject({ plannedAt: Date.parse(at(1, 0)) });
    const r = ledger.applyAck({ ...ackFor(d.epoch, d.heads, []), readsConfirmed: true });
    expect(r.runsAcked).toBe(2);
  });

  it('writes held changed plans no schedule ran with the next push: their news does not wait for the round to end', () => {
    const { ledger } = memoryLedger();
    ledger.recordMany([input(0, 0), input(0, 1)]);
    const since = acked(ledger);
    ledger.recordMany([input(1, 0)], { moreComing: true }); // a confirmation: waits
    expect(ledger.pending()).toEqual([]);
    const changed = input(1, 1, 'b');
    ledger.recordMany([changed], { moreComing: true });
    const d = ledger.pending()[0]!;
    const doc = ledger.loadEpoch(1);
    expect(d.heads).toEqual(A.getHeads(doc));
    expect(changesIn(doc, since)).toBe(1);
    const plain = AgentDocSchema.parse(plainAgentDoc(A.toJS(doc)));
    expect(plain.runs[changed.runId]).toBeDefined();
    expect(plain.cells[cellKey('prod', comp(0))]).toMatchObject({ plannedAt: Date.parse(at(1, 0)) });
    const r = ledger.applyAck({ ...ackFor(d.epoch, d.heads, []), readsConfirmed: true });
    expect(r.runsAcked).toBe(2);
  });

  it('does not hold back a failed plan, even in a scheduled round: it goes with the next push, and what was held with it', () => {
    const { ledger } = memoryLedger({ now: () => Date.UTC(2030, 0, 1, 4), holdNewsMs: 600_000 });
    ledger.recordMany([input(0, 0), input(0, 1)]);
    acked(ledger);
    ledger.recordMany([input(1, 0)], { moreComing: true });
    expect(ledger.pending()).toEqual([]);
    const failed: RecordRunInput = {
      runId: runId(),
      summary: summary({ component: comp(1), finishedAt: at(1, 1), status: 'failed', reason: 'boom' }),
      scheduledEveryS: 6 * 3600,
    };
    ledger.recordMany([failed], { moreComing: true });
    const d = ledger.pending();
    expect(d).toHaveLength(1);
    expect(d[0]?.hasFailure).toBe(true);
    expect(ledger.status().held.cells).toBe(0);
  });

  it('writes at once a confirmation that answers a plan request (the hub counts the request by its stamp)', () => {
    let now = Date.UTC(2030, 0, 1, 0, 30);
    const { ledger, storage } = memoryLedger({ now: () => now });
    ledger.recordMany([input(0, 0), input(0, 1)]);
    acked(ledger);
    const request = {
      type: 'plan-request' as const,
      requestId: 'R1',
      site: asSiteId('ship-7'),
      environment: 'prod',
      component: comp(1),
      requestedAt: now,
      expiresAt: now + 3_600_000,
    };
    expect(ledger.recordPlanRequest(request, 'accepted', null)).toBe(true);
    now += 60_000;
    ledger.recordMany([input(1, 0)], { moreComing: true }); // answers nothing: held
    expect(storage.heldCells()).toHaveLength(1);
    ledger.recordMany([input(1, 1)], { moreComing: true }); // answers R1: written, with the held one
    expect(storage.heldCells()).toHaveLength(0);
    const doc = AgentDocSchema.parse(plainAgentDoc(A.toJS(ledger.loadEpoch(1))));
    expect(doc.requests?.R1).toMatchObject({ answeredAt: Date.parse(at(1, 1)) });
  });

  it('holds nothing when no more results are coming: a lone re-plan is written at once', () => {
    const { ledger, storage } = memoryLedger();
    ledger.record(input(0, 0));
    acked(ledger);
    ledger.recordMany([input(1, 0)], { moreComing: true });
    expect(storage.heldCells()).toHaveLength(1);
    ledger.record(input(2, 0));
    expect(storage.heldCells()).toHaveLength(0);
  });

  it('writes confirmations held past holdConfirmationsMs with the next push, younger ones not', () => {
    let now = Date.UTC(2030, 0, 1);
    const { ledger, storage } = memoryLedger({ now: () => now, holdConfirmationsMs: 600_000 });
    ledger.recordMany([input(0, 0), input(0, 1)]);
    acked(ledger);
    ledger.recordMany([input(1, 0)], { moreComing: true });
    now += 300_000;
    expect(ledger.pending()).toEqual([]);
    expect(storage.heldCells()).toHaveLength(1);
    now += 300_001;
    expect(ledger.pending()).toHaveLength(1);
    expect(storage.heldCells()).toHaveLength(0);
  });
});

describe('a quiet round as a heartbeat change (decision 500)', () => {
  it('writes the held confirmations of a round as the heartbeat change a v2 push carries as a heartbeat', () => {
    const { ledger } = memoryLedger({ heartbeats: true });
    // as the daemon starts: its facts first (they declare the `confirmed` map)
    ledger.updateFacts({ version: '0.1.0', cadenceS: {} } as never);
    ledger.recordMany(Array.from({ length: CELLS }, (_, i) => input(0, i)));
    const since = acked(ledger);
    // one round recorded as the daemon does, a few results a commit, more coming until the last
    recordRound(
      ledger,
      Array.from({ length: CELLS }, (_, i) => input(1, i)),
      7,
    );
    const d = ledger.pending()[0];
    if (!d) throw new Error('nothing pending');
    expect(d.heads).not.toEqual(since);
    const form = ledger.heartbeatForm(d.epoch, d.changes);
    if (!form) throw new Error('a quiet round has a heartbeat form');
    // the whole round is the heartbeat: ~1 B a cell where the change was ~46 B a cell before brotli
    expect(form.changes.length).toBe(0);
    expect(form.heartbeat.gaps.length).toBeLessThan(CELLS * 3);
    // while the hub holds a rejection against the agent, its changes go as they are
    ledger.recordRejection(refusedNow());
    expect(ledger.heartbeatForm(d.epoch, d.changes)).toBeNull();
  });

  it('derives a delta’s heartbeat once for its push and resends, anew when its last change differs', () => {
    const { ledger } = memoryLedger({ heartbeats: true });
    ledger.updateFacts({ version: '0.1.0', cadenceS: {} } as never);
    ledger.recordMany(Array.from({ length: CELLS }, (_, i) => input(0, i)));
    acked(ledger);
    const quiet = (n: number) => {
      recordRound(
        ledger,
        Array.from({ length: CELLS }, (_, i) => input(n, i)),
        7,
      );
      const d = ledger.pending()[0];
      const form = d && ledger.heartbeatForm(d.epoch, d.changes);
      if (!d || !form) throw new Error('a quiet round has a heartbeat form');
      return { d, form };
    };
    const first = quiet(1);
    // the same delta again (a resend, another upstream): the heartbeat derived the first time
    const again = ledger.heartbeatForm(first.d.epoch, first.d.changes.slice());
    expect(again?.heartbeat).toBe(first.form.heartbeat);
    // a rejection standing: the changes; cleared: the heartbeat again
    ledger.recordRejection(refusedNow());
    expect(ledger.heartbeatForm(first.d.epoch, first.d.changes)).toBeNull();
    expect(ledger.clearRejections()).toBe(1);
    expect(ledger.heartbeatForm(first.d.epoch, first.d.changes)?.heartbeat).toBe(first.form.heartbeat);
    // the next quiet round is the delta's last change now: its own heartbeat, the first one's change before it
    const second = quiet(2);
    expect(second.form.heartbeat).not.toBe(first.form.heartbeat);
    expect(second.form.heartbeat.change).not.toEqual(first.form.heartbeat.change);
    expect(second.form.changes.length).toBeGreaterThan(0);
  });

  it('writes confirmations apart as before without `heartbeats` (an agent on hop v1)', () => {
    const { ledger } = memoryLedger();
    ledger.recordMany(Array.from({ length: CELLS }, (_, i) => input(0, i)));
    acked(ledger);
    recordRound(
      ledger,
      Array.from({ length: CELLS }, (_, i) => input(1, i)),
      7,
    );
    const d = ledger.pending()[0];
    if (!d) throw new Error('nothing pending');
    expect(ledger.heartbeatForm(d.epoch, d.changes)).toBeNull();
  });
});
