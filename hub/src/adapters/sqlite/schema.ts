import { SCHEMA_V6, SCHEMA_V7, SCHEMA_V8, SCHEMA_V9, SCHEMA_V10, SCHEMA_V12 } from './readModelSchema.js';

/** Schema of the hub's SQLite store, version 1. Times are integer milliseconds on the hub clock. */
export const SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS agents (
  site TEXT NOT NULL, agent TEXT NOT NULL, row TEXT NOT NULL, PRIMARY KEY (site, agent)
);
CREATE TABLE IF NOT EXISTS peers (token_sha256 TEXT PRIMARY KEY, row TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bundles (id TEXT PRIMARY KEY, received_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS doc_chunks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, doc_id TEXT NOT NULL, site TEXT NOT NULL, agent TEXT NOT NULL,
  epoch INTEGER NOT NULL, bytes BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS doc_chunks_doc ON doc_chunks (doc_id, seq);
CREATE TABLE IF NOT EXISTS runs (
  run_id TEXT PRIMARY KEY, site TEXT NOT NULL, environment TEXT NOT NULL, component TEXT NOT NULL,
  status TEXT NOT NULL, received_at INTEGER NOT NULL, row TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_cell ON runs (site, environment, component, run_id);
CREATE TABLE IF NOT EXISTS cells (
  site TEXT NOT NULL, environment TEXT NOT NULL, component TEXT NOT NULL, run_id TEXT NOT NULL, row TEXT NOT NULL,
  PRIMARY KEY (site, environment, component)
);
CREATE TABLE IF NOT EXISTS cell_history (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, site TEXT NOT NULL, environment TEXT NOT NULL, component TEXT NOT NULL,
  status TEXT NOT NULL, received_at INTEGER NOT NULL, row TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cell_history_at ON cell_history (site, environment, component, received_at);
CREATE TABLE IF NOT EXISTS sites (site TEXT PRIMARY KEY, row TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS blobs (sha256 TEXT PRIMARY KEY, row TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS announcements (
  sha256 TEXT NOT NULL, doc_id TEXT NOT NULL, run_id TEXT, PRIMARY KEY (sha256, doc_id)
);
CREATE INDEX IF NOT EXISTS announcements_doc ON announcements (doc_id);
CREATE TABLE IF NOT EXISTS downlink (
  seq INTEGER PRIMARY KEY AUTOINCREMENT, site TEXT NOT NULL, agent TEXT, kind TEXT NOT NULL, doc_id TEXT,
  request_id TEXT, bytes BLOB NOT NULL, expires_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS downlink_site ON downlink (site, seq);
CREATE INDEX IF NOT EXISTS downlink_ack ON downlink (doc_id) WHERE kind = 'ack';
CREATE TABLE IF NOT EXISTS plan_requests (request_id TEXT PRIMARY KEY, site TEXT NOT NULL, state TEXT NOT NULL, row TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS webhooks (
  id TEXT PRIMARY KEY, state TEXT NOT NULL, next_at INTEGER NOT NULL, row TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS webhooks_due ON webhooks (state, next_at);
INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', '1');
`;

/**
 * Version 2: people at the hub (S5 in docs/architecture.md#invariants): users with hashed tokens, sessions by hashed id, the audit log.
 * A version-1 file gains these tables the first time a version-2 hub opens it; nothing else changes.
 */
export const SCHEMA_V2 = `
CREATE TABLE IF NOT EXISTS users (name TEXT PRIMARY KEY, token_sha256 TEXT, row TEXT NOT NULL);
CREATE UNIQUE INDEX IF NOT EXISTS users_token ON users (token_sha256) WHERE token_sha256 IS NOT NULL;
CREATE TABLE IF NOT EXISTS sessions (
  id_sha256 TEXT PRIMARY KEY, user TEXT NOT NULL, expires_at INTEGER NOT NULL, row TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sessions_expiry ON sessions (expires_at);
CREATE TABLE IF NOT EXISTS audit (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, row TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_at ON audit (at);
`;

/**
 * Version 3: a downlink row may name a key that a later row replaces (one undelivered rejection per
 * site, agent and code), so an agent refused 10,000 times fills one row, not 10,000.
 */
export const SCHEMA_V3 = `
ALTER TABLE downlink ADD COLUMN replace_key TEXT;
CREATE INDEX IF NOT EXISTS downlink_replace ON downlink (replace_key) WHERE replace_key IS NOT NULL;
`;

/**
 * Version 4: plans of refs. Runs say which ref they planned and whether their cell is an `@ref` cell
 * (a ref other than the component's default); those cells live in `ref_cells`, apart from the default
 * cells, so the main matrix, its history and staleness stay as they were. Rows written by an earlier
 * version read as default-cell runs without a ref.
 */
export const SCHEMA_V4 = `
ALTER TABLE runs ADD COLUMN ref TEXT;
ALTER TABLE runs ADD COLUMN at_ref TEXT;
ALTER TABLE runs ADD COLUMN git_commit TEXT;
CREATE INDEX IF NOT EXISTS runs_ref ON runs (site, environment, component, ref, run_id) WHERE ref IS NOT NULL;
CREATE INDEX IF NOT EXISTS runs_ref_commit ON runs (ref, git_commit) WHERE ref IS NOT NULL;
CREATE TABLE IF NOT EXISTS ref_cells (
  site TEXT NOT NULL, environment TEXT NOT NULL, component TEXT NOT NULL, ref TEXT NOT NULL,
  run_id TEXT NOT NULL, status TEXT NOT NULL, received_at INTEGER NOT NULL, row TEXT NOT NULL,
  PRIMARY KEY (site, environment, component, ref)
);
CREATE INDEX IF NOT EXISTS ref_cells_ref ON ref_cells (ref);
CREATE INDEX IF NOT EXISTS ref_cells_received ON ref_cells (received_at);
`;

/**
 * Version 5: approve at headquarters, apply at the outpost. Approvers (who holds which key), the
 * approvals submitted and queued on a site's downlink, and the agents' apply records as last reported.
 */
export const SCHEMA_V5 = `
CREATE TABLE IF NOT EXISTS approvers (name TEXT PRIMARY KEY, row TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS approvals (
  approval_id TEXT PRIMARY KEY, site TEXT NOT NULL, run_id TEXT NOT NULL, row TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS approvals_run ON approvals (site, run_id, approval_id);
CREATE TABLE IF NOT EXISTS applies (
  site TEXT NOT NULL, run_id TEXT NOT NULL, row TEXT NOT NULL, PRIMARY KEY (site, run_id)
);
`;

/**
 * An approval not delivered that asks its agent to confirm it: the predicate of the partial index of
 * version 11, which a query repeats word for word so SQLite uses the index.
 */
export const UNCONFIRMED_APPROVAL =
  "json_extract(row, '$.deliveredAt') IS NULL AND json_extract(row, '$.confirmBy') IS NOT NULL";
/**
 * Version 11: the approvals the sweep sends again, of every site in one read, not each site's approvals
 * in turn (docs/decisions/605-one-read-of-unconfirmed-approvals.md).
 */
const SCHEMA_V11 = `
CREATE INDEX IF NOT EXISTS approvals_unconfirmed ON approvals (site, approval_id) WHERE ${UNCONFIRMED_APPROVAL};
`;

/** Each entry takes the store from the previous version to the next; index 0 builds version 1. */
export const MIGRATIONS = [
  SCHEMA_V1,
  SCHEMA_V2,
  SCHEMA_V3,
  SCHEMA_V4,
  SCHEMA_V5,
  SCHEMA_V6,
  SCHEMA_V7,
  SCHEMA_V8,
  SCHEMA_V9,
  SCHEMA_V10,
  SCHEMA_V11,
  SCHEMA_V12,
];
