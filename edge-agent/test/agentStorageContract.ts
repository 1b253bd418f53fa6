import { describe, expect, it } from 'vitest';
import type { AgentStorage, BlobRow, EpochRow, RunRow } from '../src/ports/AgentStorage.js';
import type { ApplyRecord } from '../src/ports/ApplyStore.js';

/** One contract every AgentStorage adapter passes (STYLE.md, Ports and adapters). */
export function runAgentStorageContract(
  name: string,
  setup: () => { storage: AgentStorage; done: () => void },
) {
  const withStorage = (fn: (s: AgentStorage) => void) => () => {
    const { storage, done } = setup();
    try {
      fn(storage);
    } finally {
      done();
    }
  };

  describe(`AgentStorage contract: ${name}`, () => {
    it(
      'upserts epoch rows whole and lists them in order, unpruned ones apart',
      withStorage((s) => {
        expect(s.latestEpoch()).toBeNull();
        s.commit({ epochs: [epoch(2), epoch(1)] });
        s.commit({ epochs: [{ ...epoch(1), prunedAt: 9, ackedHeads: ['h1'], bytes: 0 }] });
        expect(s.latestEpoch()).toBe(2);
        expect(s.epochs('all').map((e) => e.epoch)).toEqual([1, 2]);
        expect(s.epochs('unpruned').map((e) => e.epoch)).toEqual([2]);
        expect(s.epoch(1)).toEqual({ ...epoch(1), prunedAt: 9, ackedHeads: ['h1'], bytes: 0 });
        expect(s.epoch(3)).toBeUndefined();
      }),
    );

    it(
      'starts the first epoch once: commitFirst writes only while no epoch is stored',
      withStorage((s) => {
        expect(s.commitFirst({ epochs: [epoch(1)], chunks: [chunk(1, 1)] })).toBe(true);
        expect(s.commitFirst({ epochs: [epoch(1)], chunks: [chunk(1, 2)], meta: { k: 'v' } })).toBe(false);
        expect(s.chunks(1)).toEqual([bytes(1)]);
        expect(s.meta('k')).toBeUndefined();
      }),
    );

    it(
      'appends chunks in order, and a reset replaces them by what the same write set appends',
      withStorage((s) => {
        s.commit({ epochs: [epoch(1)], chunks: [chunk(1, 1), chunk(1, 2)] });
        s.commit({ chunks: [chunk(1, 3), chunk(2, 9)] });
        expect(s.chunks(1)).toEqual([bytes(1), bytes(2), bytes(3)]);
        expect(s.chunkCount(1)).toBe(3);
        s.commit({ chunkResets: [1], chunks: [chunk(1, 7)] });
        expect(s.chunks(1)).toEqual([bytes(7)]);
        expect(s.chunks(2)).toEqual([bytes(9)]);
        expect(s.chunkCount(5)).toBe(0);
      }),
    );

    it(
      'keeps nothing of a write set that inserts a run id already stored',
      withStorage((s) => {
        s.commit({ runs: [run('r1')] });
        expect(() =>
          s.commit({
            epochs: [epoch(1)],
            chunks: [chunk(1, 1)],
            runs: [run('r2'), run('r1')],
            meta: { k: 'v' },
          }),
        ).toThrow();
        expect(s.epoch(1)).toBeUndefined();
        expect(s.chunks(1)).toEqual([]);
        expect(s.meta('k')).toBeUndefined();
        expect(s.unackedRunCount()).toBe(1);
      }),
    );

    it(
      'upserts held cells and run entries by key and clears them all before the same write set adds more',
      withStorage((s) => {
        const held = (cellKey: string, cell: string) => ({ cellKey, epoch: 1, cell, heldAt: 5 });
        s.commit({ heldCells: [held('prod/b', '{"n":1}'), held('prod/a', '{"n":1}')] });
        s.commit({ heldCells: [held('prod/b', '{"n":2}')] });
        expect(s.heldCells()).toEqual([held('prod/a', '{"n":1}'), held('prod/b', '{"n":2}')]);
        const heldRun = (runId: string, waitUntil: number | null = 606) => ({
          runId,
          epoch: 1,
          run: '{}',
          heldAt: 6,
          waitUntil,
        });
        s.commit({ heldRuns: [heldRun('r2', null), heldRun('r1')] });
        expect(s.heldRuns()).toEqual([heldRun('r1'), heldRun('r2', null)]);
        s.commit({ heldCleared: true, heldCells: [held('prod/c', '{}')], heldRuns: [heldRun('r3')] });
        expect(s.heldCells()).toEqual([held('prod/c', '{}')]);
        expect(s.heldRuns()).toEqual([heldRun('r3')]);
        expect(() => s.commit({ heldCleared: true, runs: [run('r1'), run('r1')] })).toThrow();
        expect(s.heldCells()).toHaveLength(1);
      }),
    );

    it(
      'answers unacknowledged runs per epoch, their count, the oldest and whether a status is among them',
      withStorage((s) => {
        s.commit({
          runs: [
            run('r1', { finishedAt: 30 }),
            run('r2', { finishedAt: 10, status: 'failed' }),
            run('r3', { epoch: 2, finishedAt: 20 }),
          ],
        });
        s.commit({ runAcks: [{ runId: 'r2', ackedAt: 5 }] });
        expect(s.unackedRuns(1).map((r) => r.runId)).toEqual(['r1']);
        expect(s.unackedRunCount()).toBe(2);
        expect(s.oldestUnackedFinish()).toBe(20);
        expect(s.hasUnackedRun(1, ['failed'])).toBe(false);
        expect(s.hasUnackedRun(1, ['changes', 'failed'])).toBe(true);
        s.commit({ ackedRunsDeleted: [1] });
        expect(s.cellRuns('prod', 'net', null, 10).map((r) => r.runId)).toEqual(['r3', 'r1']);
      }),
    );

    it(
      'lists a cell’s runs newest first, a ref’s apart, and finds the latest changed run after one',
      withStorage((s) => {
        s.commit({
          runs: [
            run('r1'),
            run('r2', { unchanged: true }),
            run('r3', { cellRef: 'feature' }),
            run('r4'),
            run('r5', { unchanged: true }),
          ],
        });
        expect(s.cellRuns('prod', 'net', null, 2).map((r) => r.runId)).toEqual(['r5', 'r4']);
        expect(s.cellRuns('prod', 'net', 'feature', 10).map((r) => r.runId)).toEqual(['r3']);
        expect(s.cellRuns('prod', 'net', null, 10)[0]).toEqual(run('r5', { unchanged: true }));
        expect(s.latestChangedRunAfter('prod', 'net', null, 'r1')).toBe('r4');
        expect(s.latestChangedRunAfter('prod', 'net', null, 'r4')).toBeUndefined();
        expect(s.latestChangedRunAfter('prod', 'net', 'feature', 'r1')).toBe('r3');
      }),
    );

    it(
      'inserts a blob once, updates fields of a stored one, and frees its bytes',
      withStorage((s) => {
        s.commit({ runs: [run('r1')], blobs: [blob('a', { runId: 'r1' })] });
        s.commit({ blobs: [blob('a', { size: 999 })], blobUpdates: [{ sha256: 'zz', announcedAt: 1 }] });
        expect(s.blob('a')).toMatchObject({ size: 3, held: true, runId: 'r1' });
        expect(s.blob('zz')).toBeUndefined();
        s.commit({ blobUpdates: [{ sha256: 'a', data: null, ackedAt: 4 }] });
        expect(s.blob('a')).toMatchObject({ held: false, ackedAt: 4, size: 3, announcedAt: null });
        expect(s.blobTotals(false)).toEqual({ count: 0, bytes: 0 });
      }),
    );

    it(
      'answers which blobs are unannounced per epoch, announced, to upload, held by status, and their totals',
      withStorage((s) => {
        s.commit({
          runs: [run('r1'), run('r2', { epoch: 2 })],
          blobs: [
            blob('a', { runId: 'r1', createdAt: 3, status: 'clean' }),
            blob('b', { runId: 'r1', createdAt: 1, status: 'failed' }),
            blob('c', { runId: 'r2', createdAt: 2, status: 'changes' }),
          ],
        });
        s.commit({
          blobUpdates: [
            { sha256: 'b', announcedAt: 7 },
            { sha256: 'c', uploadedAt: 8, uploadUpstream: 'http://relay', ackedAt: 9 },
          ],
        });
        expect(s.unannouncedBlobs(1).map((b) => b.sha256)).toEqual(['a']);
        expect(s.unannouncedBlobs(2)).toEqual([]);
        // announced long ago but never uploaded: not announced again; once uploaded, it is (decision 412)
        expect(s.unannouncedBlobs(1, 7).map((b) => b.sha256)).toEqual(['a']);
        s.commit({ blobUpdates: [{ sha256: 'b', uploadedAt: 7, uploadUpstream: 'http://relay' }] });
        expect(s.unannouncedBlobs(1, 7).map((b) => b.sha256)).toEqual(['b', 'a']);
        expect(s.unannouncedBlobs(1, 6).map((b) => b.sha256)).toEqual(['a']);
        s.commit({ blobUpdates: [{ sha256: 'b', uploadedAt: null, uploadUpstream: null }] });
        expect(s.announcedBlobs().map((b) => b.sha256)).toEqual(['b']);
        const up = s.blobsToUpload(10);
        expect(up.map((b) => b.sha256)).toEqual(['b', 'a']);
        expect(up[0]?.data).toEqual(bytes(1, 2, 3));
        expect(s.blobsToUpload(1)).toHaveLength(1);
        expect(s.heldBlobs(['clean', 'changes']).map((b) => b.sha256)).toEqual(['c', 'a']);
        expect(s.blobTotals(false)).toEqual({ count: 3, bytes: 9 });
        expect(s.blobTotals(true)).toEqual({ count: 2, bytes: 6 });
      }),
    );

    it(
      'offers an uploaded blob the hub has not acknowledged again once its upload is old enough',
      withStorage((s) => {
        s.commit({
          runs: [run('r1')],
          blobs: [blob('a', { runId: 'r1', createdAt: 1 }), blob('b', { runId: 'r1', createdAt: 2 })],
        });
        s.commit({ blobUpdates: [{ sha256: 'a', uploadedAt: 5, uploadUpstream: 'http://relay' }] });
        expect(s.blobsAwaitingReceipt()).toBe(1);
        expect(s.awaitingReceipt(10)).toMatchObject([{ sha256: 'a', runId: 'r1', uploadedAt: 5 }]);
        expect(s.blobsToUpload(10).map((b) => b.sha256)).toEqual(['b']);
        expect(s.blobsToUpload(10, 4).map((b) => b.sha256)).toEqual(['b']);
        const again = s.blobsToUpload(10, 5);
        expect(again.map((b) => b.sha256)).toEqual(['a', 'b']);
        expect(again[0]).toMatchObject({ uploadedAt: 5, uploadUpstream: 'http://relay' });
        // The hub's ack ends it: neither offered again nor awaiting a receipt.
        s.commit({ blobUpdates: [{ sha256: 'a', data: null, ackedAt: 9 }] });
        expect(s.blobsAwaitingReceipt()).toBe(0);
        expect(s.awaitingReceipt(10)).toEqual([]);
        expect(s.blobsToUpload(10, 100).map((b) => b.sha256)).toEqual(['b']);
      }),
    );

    it(
      'keeps pushes, upstreams, counters and meta by key, the newest push last',
      withStorage((s) => {
        expect(s.lastPush()).toBeUndefined();
        expect(s.counter('dropped_blobs')).toBe(0);
        const push = {
          bundleId: 'b1',
          epoch: 1,
          heads: ['h'],
          bytes: 10,
          createdAt: 1,
          upstream: 'u',
          receipt: null,
          receiptAt: null,
        };
        s.commit({
          pushes: [push, { ...push, bundleId: 'b2', createdAt: 5, receipt: 'stored', receiptAt: 5 }],
        });
        s.commit({ pushes: [{ ...push, receipt: 'duplicate' }] });
        expect(s.lastPush()).toMatchObject({ bundleId: 'b2', receipt: 'stored' });
        const up = {
          url: 'http://b',
          cursor: null,
          lastOkAt: 1,
          lastErrorAt: null,
          lastError: null,
          consecutiveFailures: 0,
        };
        s.commit({
          upstreams: [up, { ...up, url: 'http://a' }],
          counters: { dropped_blobs: 2 },
          meta: { site: 'x' },
        });
        s.commit({
          upstreams: [{ ...up, cursor: 'c9', consecutiveFailures: 3 }],
          counters: { dropped_blobs: 5 },
        });
        expect(s.upstreams().map((u) => u.url)).toEqual(['http://a', 'http://b']);
        expect(s.upstream('http://b')).toEqual({ ...up, cursor: 'c9', consecutiveFailures: 3 });
        expect(s.upstream('http://c')).toBeUndefined();
        expect(s.counter('dropped_blobs')).toBe(5);
        expect(s.meta('site')).toBe('x');
      }),
    );

    it(
      'keeps one rejection per code, newest received first, deleting before upserting',
      withStorage((s) => {
        const r = {
          code: 'bad-signature',
          bundleIds: ['b1'],
          count: 1,
          firstAt: 1,
          lastAt: 1,
          receivedAt: 10,
        };
        s.commit({ rejections: [r, { ...r, code: 'unknown-agent', receivedAt: 20 }] });
        s.commit({ rejections: [{ ...r, bundleIds: ['b1', 'b2'], count: 2 }] });
        expect(s.rejections().map((x) => [x.code, x.count])).toEqual([
          ['unknown-agent', 1],
          ['bad-signature', 2],
        ]);
        s.commit({
          rejectionDeletes: ['unknown-agent', 'bad-signature'],
          rejections: [{ ...r, code: 'forbidden' }],
        });
        expect(s.rejections().map((x) => x.code)).toEqual(['forbidden']);
      }),
    );

    it(
      'records a plan request once, and keeps apply records by run id',
      withStorage((s) => {
        const req = {
          requestId: 'q1',
          environment: 'prod',
          component: 'net',
          receivedAt: 1,
          state: 'accepted' as const,
          detail: null,
        };
        s.commit({ planRequests: [req] });
        s.commit({ planRequests: [{ ...req, state: 'expired' }] });
        expect(s.planRequest('q1')).toEqual(req);
        expect(s.planRequest('q2')).toBeUndefined();
        s.commit({
          applies: [
            { record: apply('r2', 'applying'), updatedAt: 1 },
            { record: apply('r1', 'applying'), updatedAt: 1 },
          ],
        });
        s.commit({ applies: [{ record: apply('r2', 'applied'), updatedAt: 2 }] });
        expect(s.apply('r2')?.apply.state).toBe('applied');
        expect(s.apply('r3')).toBeUndefined();
        expect(s.appliesIn('applying').map((a) => a.apply.runId)).toEqual(['r1']);
      }),
    );
  });
}

const bytes = (...b: number[]) => new Uint8Array(b);
const chunk = (epoch: number, b: number) => ({ epoch, data: bytes(b) });

function epoch(n: number): EpochRow {
  return {
    epoch: n,
    createdAt: n * 100,
    sealedAt: null,
    ackedHeads: [],
    ackedAt: null,
    receiptedHeads: [],
    receiptedAt: null,
    rejectedAt: null,
    prunedAt: null,
    bytes: 10,
    changes: 0,
  };
}

function run(runId: string, over: Partial<RunRow> = {}): RunRow {
  return {
    runId,
    epoch: 1,
    environment: 'prod',
    component: 'net',
    cellRef: null,
    status: 'changes',
    planHash: 'a'.repeat(64),
    finishedAt: 1,
    recordedAt: 2,
    unchanged: false,
    detailBlob: null,
    ackedAt: null,
    ...over,
  };
}

function blob(sha256: string, over: Partial<BlobRow> = {}): BlobRow {
  return {
    sha256,
    size: 3,
    contentType: 'application/octet-stream',
    data: bytes(1, 2, 3),
    runId: null,
    status: 'clean',
    createdAt: 1,
    announcedAt: null,
    uploadedAt: null,
    uploadUpstream: null,
    ackedAt: null,
    droppedAt: null,
    ...over,
  };
}

function apply(runId: string, state: ApplyRecord['apply']['state']): ApplyRecord {
  return {
    apply: { runId, state, approvalIds: [], approvers: [], receivedAt: 1, updatedAt: 1 } as never,
    counted: [],
  };
}
