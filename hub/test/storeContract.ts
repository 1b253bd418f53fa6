import { describe, expect, it } from 'vitest';
import type { HubStore } from '../src/ports/HubStore.js';
import { runApprovalStoreContract } from './approvalStoreContract.js';
import { runAuthStoreContract } from './authStoreContract.js';
import { runPeerStoreContract } from './peerStoreContract.js';
import { runReadModelContract } from './readModelContract.js';
import { runRefKeysContract } from './refKeysContract.js';
import { runSharedStoreContract } from './sharedStoreContract.js';
import { cell, hist, hook, run } from './storeFixtures.js';

/** One contract every HubStore adapter passes (STYLE.md, Ports and adapters). */
export function runHubStoreContract(
  name: string,
  setup: () => Promise<{ store: HubStore; done: () => Promise<void> }>,
) {
  const withStore = (fn: (s: HubStore) => Promise<void>) => async () => {
    const { store, done } = await setup();
    try {
      await fn(store);
    } finally {
      await done();
    }
  };

  describe(`HubStore contract: ${name}`, () => {
    it(
      'keeps one run per RunId however often it is committed',
      withStore(async (s) => {
        await s.commit({ runs: [run('01J00000000000000000000001', 10)] });
        await s.commit({ runs: [{ ...run('01J00000000000000000000001', 10), status: 'failed' }] });
        expect(await s.getRun('01J00000000000000000000001')).toMatchObject({ status: 'clean' });
        expect(
          await s.listRuns({ site: 'ship-7', environment: 'prod', component: 'net', limit: 10 }),
        ).toHaveLength(1);
      }),
    );

    it(
      'lists runs newest first and pages with before',
      withStore(async (s) => {
        await s.commit({
          runs: [
            run('01J00000000000000000000001', 1),
            run('01J00000000000000000000003', 3),
            run('01J00000000000000000000002', 2),
          ],
        });
        const all = await s.listRuns({ site: 'ship-7', environment: 'prod', component: 'net', limit: 2 });
        expect(all.map((r) => r.runId.slice(-1))).toEqual(['3', '2']);
        const next = await s.listRuns({
          site: 'ship-7',
          environment: 'prod',
          component: 'net',
          before: '01J00000000000000000000002',
          limit: 2,
        });
        expect(next.map((r) => r.runId.slice(-1))).toEqual(['1']);
      }),
    );

    it(
      'lists only the runs of one status when asked (the cell view filter), paging the same way',
      withStore(async (s) => {
        await s.commit({
          runs: [
            run('01J00000000000000000000001', 1),
            { ...run('01J00000000000000000000002', 2), status: 'failed' },
            run('01J00000000000000000000003', 3),
            { ...run('01J00000000000000000000004', 4), status: 'failed' },
          ],
        });
        const cell = { site: 'ship-7', environment: 'prod', component: 'net' };
        const failed = await s.listRuns({ ...cell, status: 'failed', limit: 10 });
        expect(failed.map((r) => r.runId.slice(-1))).toEqual(['4', '2']);
        const older = await s.listRuns({
          ...cell,
          status: 'clean',
          before: '01J00000000000000000000003',
          limit: 10,
        });
        expect(older.map((r) => r.runId.slice(-1))).toEqual(['1']);
        expect(await s.listRuns({ ...cell, status: 'drift', limit: 10 })).toEqual([]);
      }),
    );

    it(
      'answers the matrix as it was at a past time from cell history',
      withStore(async (s) => {
        await s.commit({ cells: [cell('A', 100)], history: [hist(cell('A', 100))] });
        await s.commit({ cells: [cell('B', 200, 'drift')], history: [hist(cell('B', 200, 'drift'))] });
        expect((await s.cellsAt(150)).map((c) => c.runId)).toEqual(['A']);
        expect((await s.cellsAt(250)).map((c) => c.status)).toEqual(['drift']);
        expect(await s.cellsAt(50)).toEqual([]);
        expect((await s.listCells()).map((c) => c.runId)).toEqual(['B']);
      }),
    );

    it(
      'appends document chunks in order; a whole document replaces them',
      withStore(async (s) => {
        const chunk = (b: number) => ({
          docId: 'ship-7/a1/epoch-1',
          site: 'ship-7',
          agent: 'a1',
          epoch: 1,
          bytes: Uint8Array.of(b),
        });
        await s.commit({ docChunks: [chunk(1), chunk(2)], bundles: [{ id: 'B1', receivedAt: 1 }] });
        expect((await s.docChunks('ship-7/a1/epoch-1')).map((b) => b[0])).toEqual([1, 2]);
        await s.commit({ docChunks: [{ ...chunk(9), whole: true }] });
        expect((await s.docChunks('ship-7/a1/epoch-1')).map((b) => b[0])).toEqual([9]);
        await s.commit({ docChunks: [chunk(3)] });
        expect((await s.docChunks('ship-7/a1/epoch-1')).map((b) => b[0])).toEqual([9, 3]);
        expect(await s.hasBundle('B1')).toBe(true);
        expect(await s.hasBundle('B2')).toBe(false);
      }),
    );

    it(
      'replaces an undelivered ack for the same document and keeps control bundles in order',
      withStore(async (s) => {
        const dl = (kind: 'ack' | 'control', b: number, docId: string | null) => ({
          site: 'ship-7',
          agent: 'a1',
          kind,
          docId,
          requestId: null,
          bytes: Uint8Array.of(b),
          expiresAt: 1000,
        });
        await s.commit({ downlink: [dl('ack', 1, 'd1'), dl('control', 2, null)] });
        await s.commit({ downlink: [dl('ack', 3, 'd1'), dl('ack', 4, 'd2')] });
        const rows = await s.readDownlink('ship-7', 0, 10);
        expect(rows.map((r) => r.bytes[0])).toEqual([2, 3, 4]);
        expect(await s.readDownlink('ship-7', rows[0]!.seq, 1)).toHaveLength(1);
        expect(await s.readDownlink('other', 0, 10)).toEqual([]);
      }),
    );

    it(
      'keeps one downlink row per replace key, the latest, after the others',
      withStore(async (s) => {
        const dl = (b: number, replaceKey: string | null) => ({
          site: 'ship-7',
          agent: 'a9',
          kind: 'control' as const,
          docId: null,
          requestId: null,
          replaceKey,
          bytes: Uint8Array.of(b),
          expiresAt: 1000,
        });
        await s.commit({ downlink: [dl(1, 'k'), dl(2, null), dl(3, 'other')] });
        for (let b = 4; b < 40; b++) await s.commit({ downlink: [dl(b, 'k')] });
        const rows = await s.readDownlink('ship-7', 0, 100);
        expect(rows.map((r) => r.bytes[0])).toEqual([2, 3, 39]);
        expect(rows.map((r) => r.replaceKey)).toEqual([null, 'other', 'k']);
      }),
    );

    it(
      'inserts a webhook once per id and returns due ones',
      withStore(async (s) => {
        await s.commit({ webhooks: [hook('drift:x', 10)] });
        await s.commit({ webhooks: [{ ...hook('drift:x', 10), body: 'second' }] });
        expect((await s.getWebhook('drift:x'))?.body).toBe('{}');
        expect(await s.dueWebhooks(5, 10)).toEqual([]);
        expect((await s.dueWebhooks(10, 10)).map((h) => h.id)).toEqual(['drift:x']);
        await s.commit({ webhookUpdates: [{ ...hook('drift:x', 10), state: 'sent' }] });
        expect(await s.dueWebhooks(10, 10)).toEqual([]);
      }),
    );

    it(
      'tells which announced blobs it holds',
      withStore(async (s) => {
        const sha = 'a'.repeat(64);
        await s.commit({ announcements: [{ sha256: sha, docId: 'd1', runId: null }] });
        expect(await s.heldBlobsFor('d1')).toEqual([]);
        await s.commit({ blobs: [{ sha256: sha, size: 3, contentType: 'x', path: '/p', receivedAt: 1 }] });
        expect(await s.heldBlobsFor('d1')).toEqual([sha]);
        expect(await s.docsAnnouncing(sha)).toEqual(['d1']);
      }),
    );

    it(
      'upserts agents, sites, peers and plan requests',
      withStore(async (s) => {
        const agent = {
          site: 'ship-7',
          agent: 'a1',
          publicKey: 'ed25519:x',
          enrolledAt: 1,
          revokedAt: null,
          version: null,
          lastContactAt: null,
          queueDepth: null,
          oldestUnsentAt: null,
          clockOffsetMs: null,
          offsetSampledAt: null,
          upstream: null,
          cadenceS: {},
          contactIntervalS: null,
          contactWindows: [],
        };
        await s.commit({
          agents: [agent],
          sites: [{ site: 'ship-7', lastContactAt: 5, upstream: null, unreachableNotifiedFor: null }],
        });
        await s.commit({
          agents: [{ ...agent, revokedAt: 9 }],
          peers: [{ tokenSha256: 't', name: 'r1', sites: ['*'] }],
        });
        expect((await s.getAgent('ship-7', 'a1'))?.revokedAt).toBe(9);
        expect(await s.listAgents('other')).toEqual([]);
        expect((await s.listSites()).map((x) => x.site)).toEqual(['ship-7']);
        expect((await s.peerByToken('t'))?.name).toBe('r1');
        const req = {
          requestId: 'R1',
          site: 'ship-7',
          agent: 'a1',
          environment: 'prod',
          component: 'net',
          state: 'pending' as const,
          requestedAt: 1,
          expiresAt: 2,
          deliveredAt: null,
          doneAt: null,
          runId: null,
        };
        await s.commit({ planRequests: [req] });
        expect(await s.listPlanRequests({ open: true })).toHaveLength(1);
        await s.commit({ planRequests: [{ ...req, state: 'done' }] });
        expect(await s.listPlanRequests({ open: true })).toHaveLength(0);
        expect((await s.getPlanRequest('R1'))?.state).toBe('done');
        // newest first, capped (GET /api/plan-requests?limit=): closed requests are kept for good
        await s.commit({
          planRequests: ['R2', 'R3', 'R4'].map((requestId) => ({ ...req, requestId, site: 'mine-3' })),
        });
        expect((await s.listPlanRequests({ limit: 2 })).map((r) => r.requestId)).toEqual(['R4', 'R3']);
        expect((await s.listPlanRequests({ site: 'ship-7', limit: 2 })).map((r) => r.requestId)).toEqual([
          'R1',
        ]);
        expect(await s.listPlanRequests()).toHaveLength(4);
      }),
    );

    it(
      'prunes runs past count or age, keeps failures longer and never the run a cell shows',
      withStore(async (s) => {
        const day = 86_400_000;
        const now = 100 * day;
        await s.commit({
          runs: [
            run('01J00000000000000000000001', now - 50 * day, 'failed'),
            run('01J00000000000000000000002', now - 40 * day),
            run('01J00000000000000000000003', now - 3 * day),
            run('01J00000000000000000000004', now - 2 * day),
            run('01J00000000000000000000005', now - 1 * day),
          ],
          cells: [{ ...cell('01J00000000000000000000002', now - 40 * day) }],
        });
        const r = await s.prune({ maxRunsPerCell: 2, maxAgeMs: 30 * day, failureMaxAgeMs: 90 * day }, now);
        const left = (
          await s.listRuns({ site: 'ship-7', environment: 'prod', component: 'net', limit: 10 })
        ).map((x) => x.runId.slice(-1));
        expect(left).toEqual(['5', '4', '2', '1']);
        expect(r.runs).toBe(1);
      }),
    );

    it(
      'keeps @ref cells apart from the default cells, and lists runs per ref',
      withStore(async (s) => {
        const main = { ...cell('01J00000000000000000000001', 10), ref: 'main', commit: 'a'.repeat(40) };
        const pr = {
          ...cell('01J00000000000000000000002', 20, 'blocked'),
          ref: 'pr/42',
          atRef: 'pr/42',
          needs: ['registry.terraform.io/hashicorp/aws 5.31.0 linux_amd64'],
        };
        const other = { ...pr, component: 'dns', atRef: 'pr/7', ref: 'pr/7', status: 'changes' as const };
        await s.commit({
          cells: [main, pr, other],
          runs: [
            { ...run('01J00000000000000000000001', 10), ref: 'main' },
            {
              ...run('01J00000000000000000000002', 20, 'blocked'),
              ref: 'pr/42',
              atRef: 'pr/42',
              commit: 'b'.repeat(40),
            },
            run('01J00000000000000000000003', 30),
            {
              ...run('01J00000000000000000000004', 40),
              component: 'dns',
              ref: 'pr/42',
              commit: 'b'.repeat(40),
            },
          ],
        });
        expect((await s.getCell('ship-7', 'prod', 'net'))?.runId).toBe(main.runId);
        expect(await s.getRefCell('ship-7', 'prod', 'net', 'pr/42')).toMatchObject({
          status: 'blocked',
          needs: pr.needs,
        });
        expect(await s.getRefCell('ship-7', 'prod', 'net', 'pr/7')).toBeNull();
        expect((await s.listCells()).map((c) => c.runId)).toEqual([main.runId]);
        expect((await s.cellsAt(100)).length).toBe(0);
        const all = await s.listRefCells({ limit: 10 });
        expect(all.map((c) => `${c.component}@${c.atRef}`)).toEqual(['dns@pr/7', 'net@pr/42']);
        expect((await s.listRefCells({ ref: 'pr/42', limit: 10 })).map((c) => c.component)).toEqual(['net']);
        expect((await s.listRefCells({ status: 'blocked', limit: 10 })).map((c) => c.atRef)).toEqual([
          'pr/42',
        ]);
        expect(await s.listRefCells({ site: 'other', limit: 10 })).toEqual([]);
        expect(await s.listRefCells({ limit: 1 })).toHaveLength(1);
        const q = { site: 'ship-7', environment: 'prod', component: 'net', limit: 10 };
        expect((await s.listRuns(q)).map((r) => r.runId.slice(-1))).toEqual(['3', '1']);
        expect((await s.listRuns({ ...q, ref: 'pr/42' })).map((r) => r.runId.slice(-1))).toEqual(['2']);
        expect((await s.listRuns({ ...q, ref: 'main' })).map((r) => r.runId.slice(-1))).toEqual(['1']);
        expect((await s.runsAt('pr/42', 'b'.repeat(40), 10)).map((r) => r.runId.slice(-1))).toEqual([
          '4',
          '2',
        ]);
        expect(await s.runsAt('pr/42', 'b'.repeat(40), 1)).toHaveLength(1);
        expect(await s.runsAt('pr/42', 'c'.repeat(40), 10)).toEqual([]);
      }),
    );

    it(
      'expires @ref cells past refMaxAgeMs with all their runs, counted, and never a default cell',
      withStore(async (s) => {
        const day = 86_400_000;
        const now = 100 * day;
        const refCell = (runId: string, ref: string, at: number) => ({
          ...cell(runId, at),
          ref,
          atRef: ref,
        });
        const refRun = (runId: string, ref: string, at: number) => ({ ...run(runId, at), ref, atRef: ref });
        await s.commit({
          cells: [
            { ...cell('01J00000000000000000000001', now - 60 * day), ref: 'main' },
            refCell('01J00000000000000000000003', 'pr/1', now - 40 * day),
            refCell('01J00000000000000000000005', 'pr/2', now - 1 * day),
          ],
          runs: [
            { ...run('01J00000000000000000000001', now - 60 * day), ref: 'main' },
            refRun('01J00000000000000000000002', 'pr/1', now - 45 * day),
            refRun('01J00000000000000000000003', 'pr/1', now - 40 * day),
            refRun('01J00000000000000000000004', 'pr/2', now - 2 * day),
            refRun('01J00000000000000000000005', 'pr/2', now - 1 * day),
          ],
        });
        const policy = {
          maxRunsPerCell: 1,
          maxAgeMs: 90 * day,
          failureMaxAgeMs: 90 * day,
          refMaxAgeMs: 30 * day,
        };
        const r = await s.prune(policy, now);
        expect(r).toMatchObject({ refCells: 1, refRuns: 2, runs: 1 });
        expect(await s.getRefCell('ship-7', 'prod', 'net', 'pr/1')).toBeNull();
        expect(await s.getRefCell('ship-7', 'prod', 'net', 'pr/2')).not.toBeNull();
        const q = { site: 'ship-7', environment: 'prod', component: 'net', limit: 10 };
        expect(await s.listRuns({ ...q, ref: 'pr/1' })).toEqual([]);
        // Count retention per cell: pr/2's older run goes, the one its cell shows stays; main's stays.
        expect((await s.listRuns({ ...q, ref: 'pr/2' })).map((x) => x.runId.slice(-1))).toEqual(['5']);
        expect((await s.listRuns(q)).map((x) => x.runId.slice(-1))).toEqual(['1']);
        expect(await s.getCell('ship-7', 'prod', 'net')).not.toBeNull();
        const without = await s.prune({ ...policy, refMaxAgeMs: undefined }, now + 365 * day);
        expect(without).toMatchObject({ refCells: 0, refRuns: 0 });
      }),
    );

    runAuthStoreContract(withStore);
    runPeerStoreContract(withStore);
    runApprovalStoreContract(withStore);
    runSharedStoreContract(withStore);
    runReadModelContract(withStore);
    runRefKeysContract(withStore);
  });
}
