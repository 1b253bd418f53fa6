import { DRIFT } from './driftMigration.js';
import { READ_MODEL, REF_CELLS, REF_GATE, REF_TOTALS } from './readModelMigration.js';

/**
 * The PostgreSQL schema as numbered migrations, applied in order (`migrate.ts`). A released migration
 * is never edited: a change is a new entry. Times are `bigint` milliseconds on the hub clock; rows are
 * kept as `json` (the exact text, as the SQLite store keeps them) beside the columns queries need. Key
 * columns use the "C" collation so ordering and `<` compare bytes, as SQLite does, whatever the
 * database's locale.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** A text key column, compared and ordered byte-wise. */
const K = 'text COLLATE "C"';

const HUB_STORE = `
CREATE TABLE agents (site ${K} NOT NULL, agent ${K} NOT NULL, row json NOT NULL, PRIMARY KEY (site, agent));
CREATE TABLE peers (token_sha256 ${K} PRIMARY KEY, row json NOT NULL);
-- A bundle id is stored once however many times (and through however many hubs) it arrives.
CREATE TABLE bundles (id ${K} PRIMARY KEY, received_at bigint NOT NULL);
CREATE INDEX bundles_received ON bundles (received_at);
-- Chunks are read and replaced per document: the key a per-document advisory lock is taken on.
CREATE TABLE doc_chunks (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, doc_id ${K} NOT NULL, site ${K} NOT NULL,
  agent ${K} NOT NULL, epoch bigint NOT NULL, bytes bytea NOT NULL
);
CREATE INDEX doc_chunks_doc ON doc_chunks (doc_id, seq);
CREATE TABLE runs (
  run_id ${K} PRIMARY KEY, site ${K} NOT NULL, environment ${K} NOT NULL, component ${K} NOT NULL,
  status text NOT NULL, received_at bigint NOT NULL, ref ${K}, at_ref ${K}, git_commit ${K}, row json NOT NULL
);
CREATE INDEX runs_cell ON runs (site, environment, component, run_id);
CREATE INDEX runs_ref ON runs (site, environment, component, ref, run_id) WHERE ref IS NOT NULL;
CREATE INDEX runs_ref_commit ON runs (ref, git_commit, run_id) WHERE ref IS NOT NULL;
CREATE TABLE cells (
  site ${K} NOT NULL, environment ${K} NOT NULL, component ${K} NOT NULL, run_id ${K} NOT NULL,
  row json NOT NULL, PRIMARY KEY (site, environment, component)
);
CREATE TABLE cell_history (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, site ${K} NOT NULL, environment ${K} NOT NULL,
  component ${K} NOT NULL, status text NOT NULL, received_at bigint NOT NULL, row json NOT NULL
);
CREATE INDEX cell_history_at ON cell_history (site, environment, component, received_at);
CREATE INDEX cell_history_received ON cell_history (received_at);
CREATE TABLE ref_cells (
  site ${K} NOT NULL, environment ${K} NOT NULL, component ${K} NOT NULL, ref ${K} NOT NULL,
  run_id ${K} NOT NULL, status text NOT NULL, received_at bigint NOT NULL, row json NOT NULL,
  PRIMARY KEY (site, environment, component, ref)
);
CREATE INDEX ref_cells_ref ON ref_cells (ref);
CREATE INDEX ref_cells_received ON ref_cells (received_at);
CREATE TABLE sites (site ${K} PRIMARY KEY, row json NOT NULL);
CREATE TABLE blobs (sha256 ${K} PRIMARY KEY, row json NOT NULL);
CREATE TABLE announcements (
  sha256 ${K} NOT NULL, doc_id ${K} NOT NULL, run_id ${K}, PRIMARY KEY (sha256, doc_id)
);
CREATE INDEX announcements_doc ON announcements (doc_id);
CREATE TABLE downlink (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, site ${K} NOT NULL, agent ${K}, kind text NOT NULL,
  doc_id ${K}, request_id ${K}, replace_key ${K}, bytes bytea NOT NULL, expires_at bigint NOT NULL
);
CREATE INDEX downlink_site ON downlink (site, seq);
CREATE INDEX downlink_ack ON downlink (doc_id) WHERE kind = 'ack';
CREATE INDEX downlink_replace ON downlink (replace_key) WHERE replace_key IS NOT NULL;
CREATE TABLE plan_requests (
  request_id ${K} PRIMARY KEY, site ${K} NOT NULL, state text NOT NULL, row json NOT NULL
);
CREATE INDEX plan_requests_open ON plan_requests (site) WHERE state IN ('pending', 'delivered');
CREATE TABLE webhooks (id ${K} PRIMARY KEY, state text NOT NULL, next_at bigint NOT NULL, row json NOT NULL);
CREATE INDEX webhooks_due ON webhooks (state, next_at);
CREATE TABLE users (name ${K} PRIMARY KEY, token_sha256 ${K}, row json NOT NULL);
CREATE UNIQUE INDEX users_token ON users (token_sha256) WHERE token_sha256 IS NOT NULL;
CREATE TABLE sessions (
  id_sha256 ${K} PRIMARY KEY, user_name ${K} NOT NULL, expires_at bigint NOT NULL, row json NOT NULL
);
CREATE INDEX sessions_expiry ON sessions (expires_at);
CREATE TABLE audit (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at bigint NOT NULL, row json NOT NULL);
CREATE INDEX audit_at ON audit (at);
CREATE TABLE approvers (name ${K} PRIMARY KEY, row json NOT NULL);
CREATE TABLE approvals (
  approval_id ${K} PRIMARY KEY, site ${K} NOT NULL, run_id ${K} NOT NULL, row json NOT NULL
);
CREATE INDEX approvals_run ON approvals (site, run_id, approval_id);
CREATE INDEX approvals_site ON approvals (site, approval_id);
CREATE TABLE applies (site ${K} NOT NULL, run_id ${K} NOT NULL, row json NOT NULL, PRIMARY KEY (site, run_id));
`;

const BUNDLE_STORE = `
CREATE TABLE published_bundles (
  bundle_id ${K} PRIMARY KEY, name text NOT NULL, file_kind text NOT NULL, sites text[] NOT NULL,
  expires_at bigint, published_at bigint NOT NULL, row json NOT NULL
);
CREATE INDEX published_bundles_name ON published_bundles (name, file_kind);
CREATE INDEX published_bundles_newest ON published_bundles (published_at DESC, bundle_id DESC);
CREATE TABLE bundle_deliveries (
  bundle_id ${K} NOT NULL, site ${K} NOT NULL, agent ${K} NOT NULL, row json NOT NULL,
  PRIMARY KEY (bundle_id, site, agent)
);
CREATE TABLE bundle_supersessions (
  bundle_id ${K} NOT NULL, site ${K} NOT NULL, by_bundle_id ${K} NOT NULL, PRIMARY KEY (bundle_id, site)
);
`;

/**
 * Live events shared by every hub on the database: numbered by the table (ids follow commit order: they
 * are inserted under an advisory lock), so `Last-Event-ID` means the same at every hub; `epoch` names
 * this database's numbering (a new database, a new epoch: clients of the old one reset).
 */
const SHARED_EVENTS = `
CREATE TABLE hub_events (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at bigint NOT NULL, event json NOT NULL);
CREATE TABLE hub_meta (key text PRIMARY KEY, value text NOT NULL);
INSERT INTO hub_meta (key, value) VALUES ('events_epoch', 'p' || substr(md5(random()::text || clock_timestamp()::text), 1, 15));
`;

/** The predicate of the partial index below, which `approvals_unconfirmed`'s query repeats word for word. */
export const UNCONFIRMED_APPROVAL = "(row->>'deliveredAt') IS NULL AND (row->>'confirmBy') IS NOT NULL";
const UNCONFIRMED_APPROVALS = `CREATE INDEX approvals_unconfirmed ON approvals (site, approval_id) WHERE ${UNCONFIRMED_APPROVAL};`;

/** Every migration, oldest first; versions are 1, 2, 3… without gaps. */
export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: 'hub store', sql: HUB_STORE },
  { version: 2, name: 'published bundles', sql: BUNDLE_STORE },
  { version: 3, name: 'shared live events', sql: SHARED_EVENTS },
  { version: 4, name: 'fleet read model', sql: READ_MODEL },
  { version: 5, name: 'drift episodes and waivers', sql: DRIFT },
  // Each agent's brief beside its row (core/fleet/agentBrief.ts, decision 465); older rows are briefed when read.
  { version: 6, name: 'agent briefs', sql: 'ALTER TABLE agents ADD COLUMN brief json;' },
  { version: 7, name: 'ref totals', sql: REF_TOTALS },
  { version: 8, name: 'ref cells', sql: REF_CELLS },
  // The approvals the sweep sends again, in one read (docs/decisions/605-one-read-of-unconfirmed-approvals.md).
  { version: 9, name: 'unconfirmed approvals', sql: UNCONFIRMED_APPROVALS },
  // The ref gate's counts in SQL (docs/decisions/615-gate-counts-in-sql.md).
  { version: 10, name: 'ref gate', sql: REF_GATE },
];
