import { FAILURE_STATUSES } from '@driftline/protocol';
import type pg from 'pg';
import { pruneRuns } from '../../core/retention.js';
import type { RetentionPolicy, RunRow } from '../../ports/HubStore.js';
import type { PgDatabase, Stmt } from './PgDatabase.js';

/** Cells whose runs one prune step reads (then the next transaction takes the next cells), as on SQLite. */
export const PG_PRUNE_STEP_CELLS = 200;

const st = (name: string, text: string): Stmt => ({ name: `hub_prune_${name}`, text });
const FAILURES = `(${FAILURE_STATUSES.map((f) => `'${f}'`).join(', ')})`;
/** Row comparisons in the key columns' byte order ("C"), whatever the parameters' collation. */
const KEY = (a: number) =>
  `($${a}::text COLLATE "C", $${a + 1}::text COLLATE "C", $${a + 2}::text COLLATE "C")`;
const AFTER = `(site, environment, component) > ${KEY(1)}`;
const UPTO = `(site, environment, component) <= ${KEY(4)}`;
const AGED = `((status IN ${FAILURES} AND received_at < $7) OR (status NOT IN ${FAILURES} AND received_at < $8))`;

const S = {
  cells: st(
    'cells',
    `SELECT DISTINCT site, environment, component FROM runs WHERE ${AFTER}
     ORDER BY site, environment, component LIMIT $4`,
  ),
  shown: st(
    'shown',
    `SELECT run_id FROM cells WHERE ${AFTER} AND ${UPTO}
     UNION SELECT run_id FROM ref_cells WHERE ${AFTER} AND ${UPTO}`,
  ),
  runs: st(
    'runs',
    `SELECT run_id, site, environment, component, status, received_at, at_ref FROM runs WHERE ${AFTER} AND ${UPTO}`,
  ),
  delRuns: st('del_runs', 'DELETE FROM runs WHERE run_id = ANY($1::text[])'),
  /** History of the step's cells past its age, the newest row of each cell kept. */
  history: st(
    'history',
    `DELETE FROM cell_history WHERE ${AFTER} AND ${UPTO} AND ${AGED} AND seq NOT IN (
       SELECT MAX(seq) FROM cell_history WHERE ${AFTER} AND ${UPTO} GROUP BY site, environment, component)`,
  ),
  /** History of the cells after the last one with runs (in one step: cells with no run left are few). */
  historyRest: st(
    'history_rest',
    `DELETE FROM cell_history WHERE ${AFTER} AND ${AGED.replace('$7', '$4').replace('$8', '$5')} AND seq NOT IN (
       SELECT MAX(seq) FROM cell_history WHERE ${AFTER} GROUP BY site, environment, component)`,
  ),
};

type Key = [string, string, string];
type RunKey = {
  run_id: string;
  site: string;
  environment: string;
  component: string;
  status: string;
  received_at: number | string;
  at_ref: string | null;
};

/** One step's removals and the key it reached (null: the last step). */
export interface PruneStep {
  runs: number;
  history: number;
  next: Key | null;
}

/**
 * One bounded prune step (decision 466): in one transaction, the runs and history of at most
 * {@link PG_PRUNE_STEP_CELLS} cells after `after` in key order, never every run key of the store.
 */
export function pruneStep(
  db: PgDatabase,
  after: Key,
  policy: RetentionPolicy,
  now: number,
  stepCells = PG_PRUNE_STEP_CELLS,
): Promise<PruneStep> {
  const ages = [now - policy.failureMaxAgeMs, now - policy.maxAgeMs];
  return db.tx(async (c: pg.PoolClient) => {
    const q = async <T>(s: Stmt, values: unknown[]) => (await c.query({ ...s, values })).rows as T[];
    const cells = await q<{ site: string; environment: string; component: string }>(S.cells, [
      ...after,
      stepCells,
    ]);
    const last = cells.at(-1);
    if (!last) {
      const history = (await c.query({ ...S.historyRest, values: [...after, ...ages] })).rowCount ?? 0;
      return { runs: 0, history, next: null };
    }
    const upto: Key = [last.site, last.environment, last.component];
    const keep = new Set((await q<{ run_id: string }>(S.shown, [...after, ...upto])).map((r) => r.run_id));
    const runs = (await q<RunKey>(S.runs, [...after, ...upto])).map((r) => ({
      runId: r.run_id,
      site: r.site,
      environment: r.environment,
      component: r.component,
      status: r.status as RunRow['status'],
      receivedAt: Number(r.received_at),
      atRef: r.at_ref,
    }));
    const doomed = pruneRuns(runs, keep, policy, now);
    if (doomed.length > 0) await q(S.delRuns, [doomed]);
    const history = (await c.query({ ...S.history, values: [...after, ...upto, ...ages] })).rowCount ?? 0;
    return { runs: doomed.length, history, next: upto };
  });
}

/** Every step from the first cell to the last; answers what was removed. */
export async function pruneInSteps(
  db: PgDatabase,
  policy: RetentionPolicy,
  now: number,
): Promise<{ runs: number; history: number }> {
  let runs = 0;
  let history = 0;
  for (let after: Key | null = ['', '', '']; after; ) {
    const r: PruneStep = await pruneStep(db, after, policy, now);
    runs += r.runs;
    history += r.history;
    after = r.next;
  }
  return { runs, history };
}
