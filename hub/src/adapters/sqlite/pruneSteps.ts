import { FAILURE_STATUSES } from '@driftline/protocol';
import type Database from 'better-sqlite3';
import { pruneRuns } from '../../core/retention.js';
import type { RetentionPolicy, RunRow } from '../../ports/HubStore.js';

/** Cells whose runs one prune step reads (then the next transaction takes the next cells). */
export const PRUNE_STEP_CELLS = 200;

const FAILURES_SQL = `(${FAILURE_STATUSES.map((f) => `'${f}'`).join(', ')})`;
const AFTER = '(site, environment, component) > (?, ?, ?)';
const UPTO = '(site, environment, component) <= (?, ?, ?)';
type Key = [string, string, string];
type RunKey = {
  run_id: string;
  site: string;
  environment: string;
  component: string;
  status: string;
  received_at: number;
  at_ref: string | null;
};

/**
 * Retention in bounded steps (decision 402): each step is one transaction over the runs and history of
 * at most {@link PRUNE_STEP_CELLS} cells in key order, so no step reads every run key of the store and
 * the hub's thread is given back between steps.
 */
export function pruneStatements(db: Database.Database) {
  const p = (sql: string) => db.prepare(sql);
  const s = {
    cells: p(
      `SELECT DISTINCT site, environment, component FROM runs WHERE ${AFTER} ORDER BY site, environment, component LIMIT ?`,
    ),
    runs: p(
      `SELECT run_id, site, environment, component, status, received_at, at_ref FROM runs WHERE ${AFTER} AND ${UPTO}`,
    ),
    shown: p(
      `SELECT run_id FROM cells WHERE ${AFTER} AND ${UPTO} UNION SELECT run_id FROM ref_cells WHERE ${AFTER} AND ${UPTO}`,
    ),
    delRun: p('DELETE FROM runs WHERE run_id = ?'),
    history: p(
      `DELETE FROM cell_history WHERE ${AFTER} AND ${UPTO} AND seq NOT IN (
         SELECT MAX(seq) FROM cell_history WHERE ${AFTER} AND ${UPTO} GROUP BY site, environment, component)
       AND ((status IN ${FAILURES_SQL} AND received_at < ?) OR (status NOT IN ${FAILURES_SQL} AND received_at < ?))`,
    ),
    historyRest: p(
      `DELETE FROM cell_history WHERE ${AFTER} AND seq NOT IN (
         SELECT MAX(seq) FROM cell_history WHERE ${AFTER} GROUP BY site, environment, component)
       AND ((status IN ${FAILURES_SQL} AND received_at < ?) OR (status NOT IN ${FAILURES_SQL} AND received_at < ?))`,
    ),
  };
  type Step = { runs: number; history: number; next: Key | null };
  const step = db.transaction((after: Key, policy: RetentionPolicy, now: number): Step => {
    const cells = s.cells.all(...after, PRUNE_STEP_CELLS) as {
      site: string;
      environment: string;
      component: string;
    }[];
    const last = cells.at(-1);
    const ages = [now - policy.failureMaxAgeMs, now - policy.maxAgeMs];
    if (!last) {
      const history = s.historyRest.run(...after, ...after, ...ages).changes;
      return { runs: 0, history, next: null };
    }
    const upto: Key = [last.site, last.environment, last.component];
    const keep = new Set(
      (s.shown.all(...after, ...upto, ...after, ...upto) as { run_id: string }[]).map((r) => r.run_id),
    );
    const runs = (s.runs.all(...after, ...upto) as RunKey[]).map((r) => ({
      runId: r.run_id,
      site: r.site,
      environment: r.environment,
      component: r.component,
      status: r.status as RunRow['status'],
      receivedAt: r.received_at,
      atRef: r.at_ref,
    }));
    const doomed = pruneRuns(runs, keep, policy, now);
    for (const id of doomed) s.delRun.run(id);
    const history = s.history.run(...after, ...upto, ...after, ...upto, ...ages).changes;
    return { runs: doomed.length, history, next: upto };
  });
  return {
    /** Every step from the first cell to the last; answers what was removed. */
    async pruneRunsAndHistory(
      policy: RetentionPolicy,
      now: number,
    ): Promise<{ runs: number; history: number }> {
      let runs = 0;
      let history = 0;
      for (let after: Key | null = ['', '', '']; after; ) {
        const r: Step = step(after, policy, now);
        runs += r.runs;
        history += r.history;
        after = r.next;
        // The hub's one thread answers requests and ingests between steps.
        await new Promise((resolve) => setImmediate(resolve));
      }
      return { runs, history };
    },
  };
}
