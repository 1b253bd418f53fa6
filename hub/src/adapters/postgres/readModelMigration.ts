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
