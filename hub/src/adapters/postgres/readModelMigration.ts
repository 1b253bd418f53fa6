/**
 * Migration 4: the fleet read model (docs/decisions/400-fleet-read-model.md), as on SQLite (version 6):
 * default cells gain the columns fleet views filter and sort by, and `cell_counts` keeps how many cells
 * each site, environment, component and site/environment has by (status, kind, stale), moved by a
 * trigger in the same transaction as the cell. Cells stored before it have no status; the store fills
 * them (`PostgresReadModel.backfill`) before its first read-model answer, so the stale rule stays in one
 * function (hub/src/core/staleness.ts).
 */
const K = 'text COLLATE "C"';

const SCOPES: [scope: string, key: (r: 'NEW' | 'OLD') => string][] = [
  ['site', (r) => `${r}.site`],
  ['environment', (r) => `${r}.environment`],
  ['component', (r) => `${r}.component`],
  ['siteEnvironment', (r) => `${r}.site || '/' || ${r}.environment`],
];
const move = (r: 'NEW' | 'OLD', by: 1 | -1) =>
  SCOPES.map(
    ([scope, key]) =>
      `INSERT INTO cell_counts (scope, key, status, kind, stale, n) VALUES ('${scope}', ${key(r)}, ${r}.status, ${r}.kind, ${r}.stale, ${by})
       ON CONFLICT (scope, key, status, kind, stale) DO UPDATE SET n = cell_counts.n + (${by});`,
  ).join('\n    ');

export const READ_MODEL = `
ALTER TABLE cells ADD COLUMN status text;
ALTER TABLE cells ADD COLUMN kind text NOT NULL DEFAULT '';
ALTER TABLE cells ADD COLUMN planned_at bigint;
ALTER TABLE cells ADD COLUMN stale_at bigint;
ALTER TABLE cells ADD COLUMN stale integer NOT NULL DEFAULT 0;
CREATE INDEX cells_deadline ON cells (stale_at) WHERE stale = 0 AND stale_at IS NOT NULL;
CREATE INDEX cells_kind ON cells (kind, planned_at) WHERE kind <> '';
CREATE INDEX cells_stale ON cells (planned_at) WHERE stale = 1;
CREATE INDEX cells_status ON cells (status, site, environment, component);
CREATE INDEX cells_environment ON cells (environment, site, component);
CREATE TABLE cell_counts (
  scope text NOT NULL, key ${K} NOT NULL, status text NOT NULL, kind text NOT NULL, stale integer NOT NULL,
  n integer NOT NULL, PRIMARY KEY (scope, key, status, kind, stale)
);
CREATE FUNCTION cells_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.status IS NOT NULL THEN
    IF TG_OP = 'UPDATE' AND OLD.status IS NOT DISTINCT FROM NEW.status AND OLD.kind = NEW.kind
       AND OLD.stale = NEW.stale THEN
      RETURN NULL;
    END IF;
    ${move('OLD', -1)}
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.status IS NOT NULL THEN
    ${move('NEW', 1)}
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER cells_count AFTER INSERT OR UPDATE OR DELETE ON cells FOR EACH ROW EXECUTE FUNCTION cells_count();
`;

/**
 * Migration 7: refs from the read model (docs/decisions/565-ref-and-needs-reads-from-the-read-model.md),
 * as on SQLite (version 9): default cells keep their ref and result time, `@ref` cells their plan time,
 * and `ref_counts` how many cells of both kinds each ref has (a trigger, in the cell's transaction).
 */
export const REF_TOTALS = `
ALTER TABLE cells ADD COLUMN ref ${K};
ALTER TABLE cells ADD COLUMN received_at bigint;
ALTER TABLE ref_cells ADD COLUMN planned_at bigint;
UPDATE cells SET ref = NULLIF(row->>'ref', ''), received_at = (row->>'receivedAt')::bigint;
UPDATE ref_cells SET planned_at = (row->>'plannedAt')::bigint;
CREATE INDEX cells_ref_planned ON cells (ref, planned_at);
CREATE INDEX cells_ref_received ON cells (ref, received_at);
CREATE INDEX ref_cells_ref_planned ON ref_cells (ref, planned_at);
CREATE INDEX ref_cells_ref_received ON ref_cells (ref, received_at);
CREATE TABLE ref_counts (ref ${K} PRIMARY KEY, n integer NOT NULL);
INSERT INTO ref_counts (ref, n) SELECT ref, count(*) FROM (
  SELECT ref FROM cells WHERE ref IS NOT NULL UNION ALL SELECT ref FROM ref_cells
) x GROUP BY ref;
CREATE FUNCTION ref_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.ref IS NOT DISTINCT FROM NEW.ref THEN
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.ref IS NOT NULL THEN
    UPDATE ref_counts SET n = n - 1 WHERE ref = OLD.ref;
    DELETE FROM ref_counts WHERE ref = OLD.ref AND n <= 0;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.ref IS NOT NULL THEN
    INSERT INTO ref_counts (ref, n) VALUES (NEW.ref, 1) ON CONFLICT (ref) DO UPDATE SET n = ref_counts.n + 1;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER cells_ref_count AFTER INSERT OR DELETE OR UPDATE OF ref ON cells
  FOR EACH ROW EXECUTE FUNCTION ref_count();
CREATE TRIGGER ref_cells_ref_count AFTER INSERT OR DELETE ON ref_cells FOR EACH ROW EXECUTE FUNCTION ref_count();
`;

/**
 * Migration 8: a ref's default cells in cell order (the ref gate, the ref's matrix; decision 565), as on
 * SQLite (version 10): read by the index, not found by `(ref, planned_at)` and then sorted.
 */
export const REF_CELLS = `
CREATE INDEX cells_ref_cell ON cells (ref, site, environment, component);
`;

/**
 * Migration 10: the ref gate's counts in SQL (docs/decisions/615-gate-counts-in-sql.md): default cells
 * keep the commit planned, and the ref index carries it and the status after the key.
 */
export const REF_GATE = `
ALTER TABLE cells ADD COLUMN git_commit text COLLATE "C";
UPDATE cells SET git_commit = row->>'commit' WHERE ref IS NOT NULL;
CREATE INDEX cells_ref_gate ON cells (ref, site, environment, component, git_commit, status);
DROP INDEX cells_ref_cell;
`;
