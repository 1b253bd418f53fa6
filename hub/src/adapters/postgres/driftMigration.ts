/**
 * Migration 5: drift episodes, the cells' marks and waivers (docs/decisions/421-drift-as-objects.md,
 * docs/decisions/470-drift-in-the-shared-database.md), as SQLite's `drift.db` keeps them, in the
 * database every hub shares. `drift_meta.changes` moves in each write's transaction: a hub whose cached
 * open episodes and waivers were read at another count reads them again.
 */
const K = 'text COLLATE "C"';

export const DRIFT = `
CREATE TABLE drift_episodes (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, id ${K} NOT NULL UNIQUE, kind text NOT NULL,
  site ${K} NOT NULL, environment ${K} NOT NULL, component ${K} NOT NULL, address ${K} NOT NULL,
  type ${K} NOT NULL, signature ${K} NOT NULL, state text NOT NULL, row json NOT NULL
);
CREATE INDEX drift_episodes_cell ON drift_episodes (site, environment, component, state);
CREATE INDEX drift_episodes_open ON drift_episodes (state, seq);
CREATE INDEX drift_episodes_signature ON drift_episodes (signature, seq);
CREATE TABLE drift_marks (
  site ${K} NOT NULL, environment ${K} NOT NULL, component ${K} NOT NULL, planned_at bigint NOT NULL,
  PRIMARY KEY (site, environment, component)
);
CREATE TABLE drift_waivers (id ${K} PRIMARY KEY, created_at bigint NOT NULL, row json NOT NULL);
CREATE TABLE drift_meta (key text PRIMARY KEY, value bigint NOT NULL);
INSERT INTO drift_meta (key, value) VALUES ('changes', 0);
`;
