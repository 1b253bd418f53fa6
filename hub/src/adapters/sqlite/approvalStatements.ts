import type Database from 'better-sqlite3';
import type { ApplyRow, ApprovalRow, ApproverRow, WriteSet } from '../../ports/HubStore.js';
import { UNCONFIRMED_APPROVAL } from './schema.js';

type Row = { row: string };
const parseAll = <T>(rs: Row[]): T[] => rs.map((r) => JSON.parse(r.row) as T);

/** Statements and row mapping for approvers, approvals and the agents' apply records. */
export function approvalStatements(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    upApprover: p(
      'INSERT INTO approvers (name, row) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET row = excluded.row',
    ),
    delApprover: p('DELETE FROM approvers WHERE name = ?'),
    approvers: p('SELECT row FROM approvers ORDER BY name'),
    upApproval: p(
      'INSERT INTO approvals (approval_id, site, run_id, row) VALUES (?, ?, ?, ?) ON CONFLICT (approval_id) DO UPDATE SET row = excluded.row',
    ),
    getApproval: p('SELECT row FROM approvals WHERE approval_id = ?'),
    approvalsOfRun: p('SELECT row FROM approvals WHERE site = ? AND run_id = ? ORDER BY approval_id LIMIT ?'),
    approvalsOfSite: p('SELECT row FROM approvals WHERE site = ? ORDER BY approval_id LIMIT ?'),
    // the partial index approvals_unconfirmed (schema 11): its WHERE, word for word
    unconfirmed: p(
      `SELECT row FROM approvals WHERE ${UNCONFIRMED_APPROVAL} ORDER BY site, approval_id LIMIT ?`,
    ),
    upApply: p(
      'INSERT INTO applies (site, run_id, row) VALUES (?, ?, ?) ON CONFLICT (site, run_id) DO UPDATE SET row = excluded.row',
    ),
    getApply: p('SELECT row FROM applies WHERE site = ? AND run_id = ?'),
    applies: p('SELECT row FROM applies WHERE site = ? ORDER BY run_id'),
  };
  return {
    /** The part of a commit that touches approvers, approvals and applies (inside its transaction). */
    write(w: WriteSet): void {
      for (const a of w.approvers ?? []) s.upApprover.run(a.name, JSON.stringify(a));
      for (const n of w.approverDeletes ?? []) s.delApprover.run(n);
      for (const a of w.approvals ?? []) s.upApproval.run(a.approvalId, a.site, a.runId, JSON.stringify(a));
      for (const a of w.applies ?? []) s.upApply.run(a.site, a.runId, JSON.stringify(a));
    },
    listApprovers: () => parseAll<ApproverRow>(s.approvers.all() as Row[]),
    getApproval: (id: string) => {
      const r = s.getApproval.get(id) as Row | undefined;
      return r ? (JSON.parse(r.row) as ApprovalRow) : null;
    },
    listApprovals: (q: { site: string; runId?: string; limit: number }) =>
      parseAll<ApprovalRow>(
        (q.runId !== undefined
          ? s.approvalsOfRun.all(q.site, q.runId, q.limit)
          : s.approvalsOfSite.all(q.site, q.limit)) as Row[],
      ),
    listUnconfirmedApprovals: (limit: number) => parseAll<ApprovalRow>(s.unconfirmed.all(limit) as Row[]),
    listApplies: (site: string, runIds?: readonly string[]): ApplyRow[] => {
      if (!runIds) return parseAll<ApplyRow>(s.applies.all(site) as Row[]);
      return runIds.flatMap((id) => {
        const r = s.getApply.get(site, id) as Row | undefined;
        return r ? [JSON.parse(r.row) as ApplyRow] : [];
      });
    },
  };
}
