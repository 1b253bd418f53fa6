/**
 * Version 6: the fleet read model (docs/decisions/400-fleet-read-model.md). Default cells gain the
 * columns the fleet views filter and sort by (status, base attention kind, plan time, stale deadline,
 * stale flag), and `cell_counts` keeps how many cells each site, environment, component and
 * site/environment has by (status, kind, stale), moved by triggers in the same transaction as the cell.
 * Rows written before version 6 have no status; `SqliteReadModel.backfill` fills them once at open.
 */
const SCOPES: [scope: string, key: (row: 'new' | 'old') => string][] = [
  ['site', (r) => `${r}.site`],
  ['environment', (r) => `${r}.environment`],
  ['component', (r) => `${r}.component`],
  ['siteEnvironment', (r) => `${r}.site || '/' || ${r}.environment`],
];

const inc = (r: 'new' | 'old') =>
  SCOPES.map(
    ([scope, key]) =>
      `INSERT INTO cell_counts (scope, key, status, kind, stale, n) VALUES ('${scope}', ${key(r)}, ${r}.status, ${r}.kind, ${r}.stale, 1)
       ON CONFLICT (scope, key, status, kind, stale) DO UPDATE SET n = n + 1;`,
  ).join('\n');
const dec = (r: 'new' | 'old') =>
  SCOPES.map(
    ([scope, key]) =>
      `UPDATE cell_counts SET n = n - 1 WHERE scope = '${scope}' AND key = ${key(r)} AND status = ${r}.status AND kind = ${r}.kind AND stale = ${r}.stale;`,
  ).join('\n');

export const SCHEMA_V6 = `
ALTER TABLE cells ADD COLUMN status TEXT;
ALTER TABLE cells ADD COLUMN kind TEXT NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN planned_at INTEGER;
ALTER TABLE cells ADD COLUMN stale_at INTEGER;
ALTER TABLE cells ADD COLUMN stale INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS cells_deadline ON cells (stale_at) WHERE stale = 0 AND stale_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS cells_kind ON cells (kind, planned_at) WHERE kind <> '';
CREATE INDEX IF NOT EXISTS cells_stale ON cells (planned_at) WHERE stale = 1;
-- Most cells are clean: the status index holds the others (a query names its status as a literal).
CREATE INDEX IF NOT EXISTS cells_status ON cells (status, site, environment, component) WHERE status <> 'clean';
CREATE INDEX IF NOT EXISTS cells_environment ON cells (environment, site, component);
CREATE TABLE IF NOT EXISTS cell_counts (
  scope TEXT NOT NULL, key TEXT NOT NULL, status TEXT NOT NULL, kind TEXT NOT NULL, stale INTEGER NOT NULL,
  n INTEGER NOT NULL, PRIMARY KEY (scope, key, status, kind, stale)
);
CREATE TRIGGER IF NOT EXISTS cells_count_insert AFTER INSERT ON cells WHEN new.status IS NOT NULL BEGIN
${inc('new')}
END;
CREATE TRIGGER IF NOT EXISTS cells_count_delete AFTER DELETE ON cells WHEN old.status IS NOT NULL BEGIN
${dec('old')}
END;
CREATE TRIGGER IF NOT EXISTS cells_count_update_old AFTER UPDATE OF status, kind, stale ON cells
WHEN old.status IS NOT NULL AND (old.status IS NOT new.status OR old.kind IS NOT new.kind OR old.stale IS NOT new.stale) BEGIN
${dec('old')}
END;
CREATE TRIGGER IF NOT EXISTS cells_count_update_new AFTER UPDATE OF status, kind, stale ON cells
WHEN new.status IS NOT NULL AND (old.status IS NOT new.status OR old.kind IS NOT new.kind OR old.stale IS NOT new.stale) BEGIN
${inc('new')}
END;
`;

/**
 * Version 7: each agent row keeps its brief beside it (`core/fleet/agentBrief.ts`, decision 465), written
 * with the row; a row written before has none and is briefed when read.
 */
export const SCHEMA_V7 = `
ALTER TABLE agents ADD COLUMN brief TEXT;
`;

/**
 * Version 8: the cells the read model's backfill still has to fill, indexed (none once it ran): without
 * it the check at every open walked every cell's row.
 */
export const SCHEMA_V8 = `
CREATE INDEX IF NOT EXISTS cells_unfilled ON cells (site, environment, component) WHERE status IS NULL;
`;

/** The `ref_counts` step of a trigger: one cell of `ref` more or fewer; a ref counted to 0 goes. */
const refCount = (ref: string, by: 1 | -1) =>
  by === 1
    ? `INSERT INTO ref_counts (ref, n) VALUES (${ref}, 1) ON CONFLICT (ref) DO UPDATE SET n = n + 1;`
    : `UPDATE ref_counts SET n = n - 1 WHERE ref = ${ref}; DELETE FROM ref_counts WHERE ref = ${ref} AND n <= 0;`;

/**
 * Version 9: refs from the read model (docs/decisions/565-ref-and-needs-reads-from-the-read-model.md).
 * Default cells keep their ref and result time as columns and `@ref` cells their plan time; `ref_counts`
 * keeps how many cells (of both kinds) each ref has, moved by triggers in the cell's transaction, and
 * each ref's newest plan and result are one index seek away: `/api/refs` reads no cell row.
 */
export const SCHEMA_V9 = `
ALTER TABLE cells ADD COLUMN ref TEXT;
ALTER TABLE cells ADD COLUMN received_at INTEGER;
ALTER TABLE ref_cells ADD COLUMN planned_at INTEGER;
UPDATE cells SET ref = NULLIF(json_extract(row, '$.ref'), ''), received_at = json_extract(row, '$.receivedAt');
UPDATE ref_cells SET planned_at = json_extract(row, '$.plannedAt');
CREATE INDEX IF NOT EXISTS cells_ref_planned ON cells (ref, planned_at);
CREATE INDEX IF NOT EXISTS cells_ref_received ON cells (ref, received_at);
CREATE INDEX IF NOT EXISTS ref_cells_ref_planned ON ref_cells (ref, planned_at);
CREATE INDEX IF NOT EXISTS ref_cells_ref_received ON ref_cells (ref, received_at);
CREATE TABLE IF NOT EXISTS ref_counts (ref TEXT PRIMARY KEY, n INTEGER NOT NULL);
INSERT INTO ref_counts (ref, n) SELECT ref, count(*) FROM (
  SELECT ref FROM cells WHERE ref IS NOT NULL UNION ALL SELECT ref FROM ref_cells
) GROUP BY ref;
CREATE TRIGGER IF NOT EXISTS cells_ref_insert AFTER INSERT ON cells WHEN new.ref IS NOT NULL BEGIN
${refCount('new.ref', 1)}
END;
CREATE TRIGGER IF NOT EXISTS cells_ref_delete AFTER DELETE ON cells WHEN old.ref IS NOT NULL BEGIN
${refCount('old.ref', -1)}
END;
CREATE TRIGGER IF NOT EXISTS cells_ref_update_old AFTER UPDATE OF ref ON cells
WHEN old.ref IS NOT NULL AND old.ref IS NOT new.ref BEGIN
${refCount('old.ref', -1)}
END;
CREATE TRIGGER IF NOT EXISTS cells_ref_update_new AFTER UPDATE OF ref ON cells
WHEN new.ref IS NOT NULL AND old.ref IS NOT new.ref BEGIN
${refCount('new.ref', 1)}
END;
CREATE TRIGGER IF NOT EXISTS ref_cells_ref_insert AFTER INSERT ON ref_cells BEGIN
${refCount('new.ref', 1)}
END;
CREATE TRIGGER IF NOT EXISTS ref_cells_ref_delete AFTER DELETE ON ref_cells BEGIN
${refCount('old.ref', -1)}
END;
`;

/**
 * Version 10: a ref's default cells in cell order (the ref gate, the ref's matrix; decision 565). The
 * `(ref, planned_at)` index found them but left every one to sort: 3 s for a fleet's default ref at
 * 1,000 sites × 200 cells, slower than reading every cell.
 */
export const SCHEMA_V10 = `
CREATE INDEX IF NOT EXISTS cells_ref_cell ON cells (ref, site, environment, component);
`;

/**
 * Version 12: the ref gate's counts in SQL (docs/decisions/615-gate-counts-in-sql.md). Default cells keep
 * the commit planned as a column, and the ref index carries it and the status after the cell's key, so
 * a ref's counts per status at a commit and its cells not complete are read from the index alone.
 */
export const SCHEMA_V12 = `
ALTER TABLE cells ADD COLUMN git_commit TEXT;
UPDATE cells SET git_commit = json_extract(row, '$.commit') WHERE ref IS NOT NULL;
CREATE INDEX IF NOT EXISTS cells_ref_gate ON cells (ref, site, environment, component, git_commit, status);
DROP INDEX IF EXISTS cells_ref_cell;
`;
