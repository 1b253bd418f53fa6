import type Database from 'better-sqlite3';
import type {
  CellRow,
  RefCellQuery,
  RetentionPolicy,
  RunQuery,
  RunRow,
  WriteSet,
} from '../../ports/HubStore.js';

type Row = { row: string };

/**
 * Statements for plans of refs: `@ref` cells (table `ref_cells`, apart from the default cells) and the
 * ref columns of runs. Part of `SqliteHubStore`; every write runs inside its commit's transaction.
 */
export function refStatements(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    upCell: p(
      `INSERT INTO ref_cells (site, environment, component, ref, run_id, status, received_at, planned_at, row) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (site, environment, component, ref) DO UPDATE SET run_id = excluded.run_id, status = excluded.status, received_at = excluded.received_at, planned_at = excluded.planned_at, row = excluded.row`,
    ),
    getCell: p('SELECT row FROM ref_cells WHERE site = ? AND environment = ? AND component = ? AND ref = ?'),
    cells: p(
      `SELECT row FROM ref_cells WHERE (@ref IS NULL OR ref = @ref) AND (@site IS NULL OR site = @site)
       AND (@status IS NULL OR status = @status) ORDER BY site, environment, component, ref LIMIT @limit`,
    ),
    runIds: p('SELECT run_id FROM ref_cells'),
    expired: p('SELECT site, environment, component, ref FROM ref_cells WHERE received_at < ?'),
    delCell: p('DELETE FROM ref_cells WHERE site = ? AND environment = ? AND component = ? AND ref = ?'),
    delRuns: p('DELETE FROM runs WHERE site = ? AND environment = ? AND component = ? AND at_ref = ?'),
    runsOfRef: p(
      'SELECT row FROM runs WHERE site = @site AND environment = @environment AND component = @component AND ref = @ref AND (@status IS NULL OR status = @status) AND run_id < @before ORDER BY run_id DESC LIMIT @limit',
    ),
    runsDefault: p(
      'SELECT row FROM runs WHERE site = @site AND environment = @environment AND component = @component AND at_ref IS NULL AND (@status IS NULL OR status = @status) AND run_id < @before ORDER BY run_id DESC LIMIT @limit',
    ),
    insRun: p(
      'INSERT OR IGNORE INTO runs (run_id, site, environment, component, status, received_at, ref, at_ref, git_commit, row) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    ),
    runsAt: p('SELECT row FROM runs WHERE ref = ? AND git_commit = ? ORDER BY run_id DESC LIMIT ?'),
  };
  return {
    /** Runs (with their ref columns) and `@ref` cells of a commit; returns the default cells to store as before. */
    write(w: WriteSet): CellRow[] {
      for (const r of w.runs ?? [])
        s.insRun.run(
          r.runId,
          r.site,
          r.environment,
          r.component,
          r.status,
          r.receivedAt,
          r.ref ?? null,
          r.atRef ?? null,
          r.commit ?? null,
          JSON.stringify(r),
        );
      const plain: CellRow[] = [];
      for (const c of w.cells ?? []) {
        if (!c.atRef) {
          plain.push(c);
          continue;
        }
        s.upCell.run(
          c.site,
          c.environment,
          c.component,
          c.atRef,
          c.runId,
          c.status,
          c.receivedAt,
          c.plannedAt,
          JSON.stringify(c),
        );
      }
      return plain;
    },
    getCell(site: string, environment: string, component: string, ref: string): CellRow | null {
      const r = s.getCell.get(site, environment, component, ref) as Row | undefined;
      return r ? (JSON.parse(r.row) as CellRow) : null;
    },
    listCells(q: RefCellQuery): CellRow[] {
      const rows = s.cells.all({
        ref: q.ref ?? null,
        site: q.site ?? null,
        status: q.status ?? null,
        limit: q.limit,
      }) as Row[];
      return rows.map((r) => JSON.parse(r.row) as CellRow);
    },
    listRuns(q: RunQuery): RunRow[] {
      const args = {
        site: q.site,
        environment: q.environment,
        component: q.component,
        status: q.status ?? null,
        before: q.before ?? '\uffff',
        limit: q.limit,
      };
      const rows = (
        q.ref === undefined ? s.runsDefault.all(args) : s.runsOfRef.all({ ...args, ref: q.ref })
      ) as Row[];
      return rows.map((r) => JSON.parse(r.row) as RunRow);
    },
    /** Runs of `ref` at `commit`, newest first. */
    runsAt(ref: string, commit: string, limit: number): RunRow[] {
      return (s.runsAt.all(ref, commit, limit) as Row[]).map((r) => JSON.parse(r.row) as RunRow);
    },
    /** Run ids the `@ref` cells show (kept by count and age retention). */
    cellRunIds(): string[] {
      return (s.runIds.all() as { run_id: string }[]).map((r) => r.run_id);
    },
    /** Removes `@ref` cells last updated before `refMaxAgeMs` ago, with their runs (inside prune's transaction). */
    expire(policy: RetentionPolicy, now: number): { refCells: number; refRuns: number } {
      if (policy.refMaxAgeMs === undefined) return { refCells: 0, refRuns: 0 };
      const doomed = s.expired.all(now - policy.refMaxAgeMs) as {
        site: string;
        environment: string;
        component: string;
        ref: string;
      }[];
      let refRuns = 0;
      for (const c of doomed) {
        refRuns += s.delRuns.run(c.site, c.environment, c.component, c.ref).changes;
        s.delCell.run(c.site, c.environment, c.component, c.ref);
      }
      return { refCells: doomed.length, refRuns };
    },
  };
}
