import type Database from 'better-sqlite3';
import type { ApplyRecord } from '../../ports/ApplyStore.js';

/** The `applies` table: one row per approved run, its record as JSON. */

export function readApply(db: Database.Database, runId: string): ApplyRecord | undefined {
  const row = db.prepare('SELECT record FROM applies WHERE run_id = ?').get(runId) as
    | { record: string }
    | undefined;
  return row ? (JSON.parse(row.record) as ApplyRecord) : undefined;
}

export function saveApply(db: Database.Database, rec: ApplyRecord, now: number): void {
  db.prepare(
    `INSERT INTO applies (run_id, state, record, updated_at) VALUES (?, ?, ?, ?)
     ON CONFLICT(run_id) DO UPDATE SET state = excluded.state, record = excluded.record, updated_at = excluded.updated_at`,
  ).run(rec.apply.runId, rec.apply.state, JSON.stringify(rec), now);
}

export function appliesIn(db: Database.Database, state: string): ApplyRecord[] {
  const rows = db
    .prepare('SELECT record FROM applies WHERE state = ? ORDER BY run_id LIMIT 1000')
    .all(state) as Array<{ record: string }>;
  return rows.map((r) => JSON.parse(r.record) as ApplyRecord);
}

/** A run recorded after `runId` in the cell whose plan differed (`unchanged` runs only confirm one). */
export function laterRun(
  db: Database.Database,
  environment: string,
  component: string,
  cellRef: string | undefined,
  runId: string,
): string | undefined {
  const row = db
    .prepare(
      `SELECT run_id FROM runs WHERE environment = ? AND component = ? AND coalesce(cell_ref, '') = ?
       AND run_id > ? AND unchanged = 0 ORDER BY run_id DESC LIMIT 1`,
    )
    .get(environment, component, cellRef ?? '', runId) as { run_id: string } | undefined;
  return row?.run_id;
}
