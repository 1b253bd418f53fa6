import { expect, it } from 'vitest';
import type { CellRow, HubStore, PlanRequestRow, SiteRow } from '../src/ports/HubStore.js';
import { approvalRow } from './approvalStoreContract.js';

/**
 * The part of the HubStore contract that several hubs on one store rely on: batched cell reads,
 * deliveries handed out once, and the per-document merge lock (a no-op for one-process stores; the
 * PostgreSQL-only test that two lockers serialise is in pgMultiHub.test.ts).
 */
export function runSharedStoreContract(
  withStore: (fn: (s: HubStore) => Promise<void>) => () => Promise<void>,
) {
  it(
    'reads several cells at once, default and @ref alike, in the order asked, null where none is stored',
    withStore(async (s) => {
      await s.commit({
        cells: [cell('net', 'R1'), cell('dns', 'R2'), { ...cell('net', 'R3'), atRef: 'pr/1' }],
      });
      const got = await s.getCells([
        { site: 'ship-7', environment: 'prod', component: 'dns' },
        { site: 'ship-7', environment: 'prod', component: 'net', atRef: 'pr/1' },
        { site: 'ship-7', environment: 'prod', component: 'gone' },
        { site: 'ship-7', environment: 'prod', component: 'net', atRef: null },
        { site: 'ship-7', environment: 'prod', component: 'net', atRef: 'pr/2' },
      ]);
      expect(got.map((c) => c?.runId ?? null)).toEqual(['R2', 'R3', null, 'R1', null]);
      expect(await s.getCells([])).toEqual([]);
    }),
  );

  it(
    'marks a plan request delivered only while it is pending, and an approval only once',
    withStore(async (s) => {
      const pending = request('R1', 'pending');
      await s.commit({
        planRequests: [pending, request('R2', 'done'), request('R3', 'pending')],
        approvals: [approvalRow('A1', 'RUN1', 5)],
      });
      const delivered = (r: PlanRequestRow): PlanRequestRow => ({ ...r, state: 'delivered', deliveredAt: 9 });
      const first = await s.markDelivered({
        requests: [
          delivered(pending),
          delivered(request('R2', 'pending')),
          delivered(request('R3', 'pending')),
        ],
        approvals: [{ ...approvalRow('A1', 'RUN1', 5), deliveredAt: 9 }],
      });
      expect(first.requests.map((r) => r.requestId)).toEqual(['R1', 'R3']);
      expect(first.approvals.map((a) => a.approvalId)).toEqual(['A1']);
      // A done request stays done: a late pull does not take it back.
      expect((await s.getPlanRequest('R2'))?.state).toBe('done');
      expect(await s.getPlanRequest('R1')).toMatchObject({ state: 'delivered', deliveredAt: 9 });
      expect((await s.getApproval('A1'))?.deliveredAt).toBe(9);
      // A second pull (another relay of the site, through another hub) delivers nothing new.
      const again = await s.markDelivered({
        requests: [{ ...delivered(pending), deliveredAt: 10 }],
        approvals: [{ ...approvalRow('A1', 'RUN1', 5), deliveredAt: 10 }],
      });
      expect(again).toEqual({ requests: [], approvals: [] });
      expect((await s.getPlanRequest('R1'))?.deliveredAt).toBe(9);
      expect((await s.getApproval('A1'))?.deliveredAt).toBe(9);
    }),
  );

  it(
    'marks a pending request held by a relay once, and still delivers it after (decision 560)',
    withStore(async (s) => {
      const pending = request('R1', 'pending');
      await s.commit({ planRequests: [pending, request('R2', 'delivered')] });
      const atRelay = (r: PlanRequestRow, at: number): PlanRequestRow => ({
        ...r,
        relayAt: at,
        relay: 'relay-1',
      });
      const first = await s.markDelivered({
        requests: [atRelay(pending, 9), atRelay(request('R2', 'delivered'), 9)],
        approvals: [],
      });
      expect(first.requests.map((r) => r.requestId)).toEqual(['R1']);
      expect(await s.getPlanRequest('R1')).toMatchObject({ state: 'pending', relayAt: 9, relay: 'relay-1' });
      expect(await s.listPlanRequests({ site: 'ship-7', open: true })).toHaveLength(2);
      // Another relay's (or hub's) later pull does not move the time it first got there.
      const again = await s.markDelivered({ requests: [atRelay(pending, 10)], approvals: [] });
      expect(again.requests).toEqual([]);
      expect((await s.getPlanRequest('R1'))?.relayAt).toBe(9);
      // The agent's word that it arrived still moves it (an older agent's pull, here).
      const delivered = await s.markDelivered({
        requests: [{ ...atRelay(pending, 9), state: 'delivered', deliveredAt: 11 }],
        approvals: [],
      });
      expect(delivered.requests).toHaveLength(1);
      expect(await s.getPlanRequest('R1')).toMatchObject({ state: 'delivered', deliveredAt: 11, relayAt: 9 });
      expect(await s.listPlanRequests({ site: 'ship-7', open: true })).toHaveLength(2);
    }),
  );

  it(
    'runs a function under the documents’ merge lock and answers what it answers, commits included',
    withStore(async (s) => {
      const got = await s.lockDocs(
        ['ship-7/a1/epoch-1', 'ship-7/a2/epoch-1', 'ship-7/a1/epoch-1'],
        async () => {
          await s.commit({ bundles: [{ id: 'B1', receivedAt: 1 }] });
          return 42;
        },
      );
      expect(got).toBe(42);
      expect(await s.hasBundle('B1')).toBe(true);
      expect(await s.lockDocs([], async () => 'none')).toBe('none');
      await expect(
        s.lockDocs(['ship-7/a1/epoch-1'], async () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      // Released after a failure: the same documents lock again.
      expect(await s.lockDocs(['ship-7/a1/epoch-1'], async () => 'again')).toBe('again');
    }),
  );

  it(
    'writes a sweep’s marks only where they still hold, each row otherwise as stored, with their webhooks',
    withStore(async (s) => {
      const site = (lastContactAt: number): SiteRow => ({
        site: 'ship-7',
        lastContactAt,
        upstream: 'relay-1',
        unreachableNotifiedFor: null,
      });
      await s.commit({
        cells: [cell('net', 'R1'), cell('dns', 'R2')],
        planRequests: [request('Q1', 'pending'), request('Q2', 'delivered')],
        sites: [site(100)],
      });
      // What the sweep read and decided…
      const marks = {
        expired: [request('Q1', 'expired'), request('Q2', 'expired')],
        staleCells: [
          { ...cell('net', 'R1'), staleNotifiedFor: 'R1' },
          { ...cell('dns', 'R2'), staleNotifiedFor: 'R2' },
        ],
        sites: [{ ...site(100), unreachableNotifiedFor: 100 }],
      };
      // …while an ingest answered Q2, replaced dns with a new run and heard from the site again.
      await s.commit({
        planRequests: [{ ...request('Q2', 'done'), runId: 'R9', doneAt: 5 }],
        cells: [{ ...cell('dns', 'R3'), expectedIntervalS: 120 }],
        sites: [site(200)],
      });
      const hooksFor: string[][] = [];
      const written = await s.markSwept(marks, (w) => {
        hooksFor.push([...w.staleCells.map((c) => c.component), ...w.sites.map((x) => x.site)]);
        return w.staleCells.map((c) => ({
          id: `stale:${c.component}`,
          url: 'http://127.0.0.1:1/',
          event: 'cell-stale',
          body: '{}',
          attempts: 0,
          nextAt: 10,
          state: 'pending' as const,
          lastError: null,
        }));
      });
      expect(written.expired.map((r) => [r.requestId, r.state])).toEqual([['Q1', 'expired']]);
      expect(written.staleCells.map((c) => c.component)).toEqual(['net']);
      expect(written.sites).toEqual([]);
      expect(hooksFor).toEqual([['net']]);
      expect((await s.getPlanRequest('Q2'))?.state).toBe('done');
      expect((await s.getPlanRequest('Q1'))?.state).toBe('expired');
      expect(await s.getCell('ship-7', 'prod', 'dns')).toMatchObject({ runId: 'R3', staleNotifiedFor: null });
      expect(await s.getCell('ship-7', 'prod', 'net')).toMatchObject({ runId: 'R1', staleNotifiedFor: 'R1' });
      expect(await s.getSite('ship-7')).toMatchObject({ lastContactAt: 200, unreachableNotifiedFor: null });
      expect((await s.getWebhook('stale:net'))?.event).toBe('cell-stale');
      expect(await s.getWebhook('stale:dns')).toBeNull();
      // Marking again changes nothing: the marks are written.
      expect(await s.markSwept(marks, () => [])).toMatchObject({ expired: [], staleCells: [], sites: [] });
    }),
  );
}

function cell(component: string, runId: string): CellRow {
  return {
    site: 'ship-7',
    environment: 'prod',
    component,
    agent: 'a1',
    status: 'clean',
    counts: null,
    reason: null,
    runId,
    plannedAt: 1,
    receivedAt: 1,
    expectedIntervalS: 60,
    planHash: null,
    staleNotifiedFor: null,
  };
}

function request(requestId: string, state: PlanRequestRow['state']): PlanRequestRow {
  return {
    requestId,
    site: 'ship-7',
    agent: 'a1',
    environment: 'prod',
    component: 'net',
    state,
    requestedAt: 1,
    expiresAt: 2,
    deliveredAt: null,
    doneAt: null,
    runId: null,
  };
}
