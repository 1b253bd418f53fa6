import { expect, it } from 'vitest';
import type { ApplyRow, ApprovalRow, PeopleStore } from '../src/ports/HubStore.js';

type WithStore = (fn: (s: PeopleStore) => Promise<void>) => () => Promise<void>;

const KEY_A = `ed25519:${'A'.repeat(43)}`;
const KEY_B = `ed25519:${'B'.repeat(43)}`;

/** An approval of `runId` at ship-7, submitted at `at`. */
export const approvalRow = (approvalId: string, runId: string, at: number, site = 'ship-7'): ApprovalRow => ({
  approvalId,
  site,
  runId,
  environment: 'prod',
  component: 'net',
  ref: 'main',
  commit: 'a'.repeat(40),
  planFileSha256: 'f'.repeat(64),
  approver: KEY_A,
  approvedAt: at,
  expiresAt: at + 86_400_000,
  submittedBy: 'ada',
  submittedAt: at,
  deliveredAt: null,
});

const applyRow = (runId: string, state: ApplyRow['state'], site = 'ship-7'): ApplyRow => ({
  site,
  agent: 'a1',
  runId,
  environment: 'prod',
  component: 'net',
  state,
  reason: null,
  approvalIds: [],
  approvers: [],
  receivedAt: 1,
  startedAt: null,
  finishedAt: null,
  errorExcerpt: null,
  nextRunId: null,
  updatedAt: 1,
});

/** The approvers, approvals and applies part of the HubStore contract (run inside `runHubStoreContract`). */
export function runApprovalStoreContract(withStore: WithStore) {
  it(
    'keeps approvers by name, replaces a name and removes one',
    withStore(async (s) => {
      await s.commit({
        approvers: [
          { name: 'zoe', key: KEY_B, addedAt: 2 },
          { name: 'ada', key: KEY_A, addedAt: 1 },
        ],
      });
      expect((await s.listApprovers()).map((a) => a.name)).toEqual(['ada', 'zoe']);
      await s.commit({ approvers: [{ name: 'ada', key: KEY_B, addedAt: 3 }], approverDeletes: ['zoe'] });
      expect(await s.listApprovers()).toEqual([{ name: 'ada', key: KEY_B, addedAt: 3 }]);
    }),
  );

  it(
    'keeps approvals by id, lists them by site and run oldest first, and records delivery',
    withStore(async (s) => {
      await s.commit({
        approvals: [
          approvalRow('01J00000000000000000000002', 'R1', 2),
          approvalRow('01J00000000000000000000001', 'R1', 1),
          approvalRow('01J00000000000000000000003', 'R2', 3),
          approvalRow('01J00000000000000000000004', 'R1', 4, 'ship-8'),
        ],
      });
      const ofRun = await s.listApprovals({ site: 'ship-7', runId: 'R1', limit: 10 });
      expect(ofRun.map((a) => a.approvalId.slice(-1))).toEqual(['1', '2']);
      expect((await s.listApprovals({ site: 'ship-7', limit: 10 })).length).toBe(3);
      expect((await s.listApprovals({ site: 'ship-7', limit: 1 })).length).toBe(1);
      const one = await s.getApproval('01J00000000000000000000001');
      expect(one?.deliveredAt).toBeNull();
      await s.commit({ approvals: [{ ...(one as ApprovalRow), deliveredAt: 9 }] });
      expect((await s.getApproval('01J00000000000000000000001'))?.deliveredAt).toBe(9);
      expect(await s.getApproval('01J00000000000000000000009')).toBeNull();
    }),
  );

  it(
    'answers the undelivered approvals that ask for confirmation, of every site, by site and id',
    withStore(async (s) => {
      const ask = (a: ApprovalRow): ApprovalRow => ({ ...a, confirmBy: a.submittedAt + 60_000 });
      await s.commit({
        approvals: [
          ask(approvalRow('01J00000000000000000000003', 'R1', 3, 'ship-8')),
          ask(approvalRow('01J00000000000000000000002', 'R1', 2)),
          // delivered: the agent has it
          { ...ask(approvalRow('01J00000000000000000000001', 'R1', 1)), deliveredAt: 5 },
          // an approval of before decision 300 asks for no confirmation
          approvalRow('01J00000000000000000000004', 'R2', 4),
          ask(approvalRow('01J00000000000000000000005', 'R2', 5, 'ship-10')),
        ],
      });
      const ids = async (limit: number) =>
        (await s.listUnconfirmedApprovals(limit)).map((a) => `${a.site}:${a.approvalId.slice(-1)}`);
      expect(await ids(10)).toEqual(['ship-10:5', 'ship-7:2', 'ship-8:3']);
      expect(await ids(2)).toEqual(['ship-10:5', 'ship-7:2']);
      // delivered later: out of the answer
      const two = (await s.getApproval('01J00000000000000000000002')) as ApprovalRow;
      await s.commit({ approvals: [{ ...two, deliveredAt: 9 }] });
      expect(await ids(10)).toEqual(['ship-10:5', 'ship-8:3']);
    }),
  );

  it(
    'keeps the latest apply record per site and run',
    withStore(async (s) => {
      await s.commit({ applies: [applyRow('R1', 'applying'), applyRow('R1', 'refused', 'ship-8')] });
      await s.commit({
        applies: [{ ...applyRow('R1', 'applied'), nextRunId: 'R3' }, applyRow('R2', 'refused')],
      });
      const all = await s.listApplies('ship-7');
      expect(all.map((a) => [a.runId, a.state])).toEqual([
        ['R1', 'applied'],
        ['R2', 'refused'],
      ]);
      expect((await s.listApplies('ship-7', ['R1']))[0]?.nextRunId).toBe('R3');
      expect(await s.listApplies('ship-7', [])).toEqual([]);
      expect((await s.listApplies('ship-8')).map((a) => a.state)).toEqual(['refused']);
    }),
  );
}
