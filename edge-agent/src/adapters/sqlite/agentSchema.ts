/** The agent's SQLite schema. Migrations append; never edit a shipped step. */
export const AGENT_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  CREATE TABLE epochs (
    epoch INTEGER PRIMARY KEY,
    created_at INTEGER NOT NULL,
    sealed_at INTEGER,
    acked_heads TEXT NOT NULL DEFAULT '[]',
    receipted_heads TEXT NOT NULL DEFAULT '[]',
    receipted_at INTEGER,
    acked_at INTEGER,
    pruned_at INTEGER,
    bytes INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, epoch INTEGER NOT NULL, data BLOB NOT NULL);
  CREATE INDEX chunks_epoch ON chunks (epoch, id);
  CREATE TABLE runs (
    run_id TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL,
    environment TEXT NOT NULL,
    component TEXT NOT NULL,
    status TEXT NOT NULL,
    plan_hash TEXT,
    finished_at INTEGER NOT NULL,
    recorded_at INTEGER NOT NULL,
    unchanged INTEGER NOT NULL,
    detail_blob TEXT,
    acked_at INTEGER
  );
  CREATE INDEX runs_unacked ON runs (acked_at, finished_at);
  CREATE TABLE blobs (
    sha256 TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    content_type TEXT NOT NULL,
    data BLOB,
    run_id TEXT,
    status TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    announced_at INTEGER,
    uploaded_at INTEGER,
    acked_at INTEGER,
    dropped_at INTEGER,
    upload_url TEXT,
    upload_upstream TEXT
  );
  CREATE TABLE pushes (
    bundle_id TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL,
    heads TEXT NOT NULL,
    bytes INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    upstream TEXT,
    receipt TEXT,
    receipt_at INTEGER
  );
  CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
  CREATE TABLE upstreams (
    url TEXT PRIMARY KEY,
    cursor TEXT,
    last_ok_at INTEGER,
    last_error_at INTEGER,
    last_error TEXT,
    consecutive_failures INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE plan_requests (
    request_id TEXT PRIMARY KEY,
    environment TEXT NOT NULL,
    component TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    state TEXT NOT NULL,
    detail TEXT
  );
  `,
  `
  CREATE TABLE tus_uploads (
    storage_key TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    upload TEXT NOT NULL
  );
  CREATE INDEX tus_uploads_fingerprint ON tus_uploads (fingerprint);
  `,
  `
  CREATE INDEX runs_cell ON runs (environment, component, run_id);
  CREATE INDEX blobs_held ON blobs (created_at) WHERE data IS NOT NULL;
  `,
  `
  ALTER TABLE epochs ADD COLUMN changes INTEGER NOT NULL DEFAULT 0;
  `,
  // pending() asks per epoch for its blobs and failures: without this, each question scanned every
  // unacknowledged run (hundreds of thousands after weeks offline) once per epoch.
  `
  CREATE INDEX runs_epoch ON runs (epoch, acked_at);
  `,
  // Hub rejections (one per code) until an ack outdates them; an epoch's `rejected_at` keeps a receipt
  // for a bundle built before the rejection from counting (its changes are asked for again).
  `
  ALTER TABLE epochs ADD COLUMN rejected_at INTEGER;
  CREATE TABLE rejections (
    code TEXT PRIMARY KEY,
    bundle_ids TEXT NOT NULL,
    count INTEGER NOT NULL,
    first_at INTEGER NOT NULL,
    last_at INTEGER NOT NULL,
    received_at INTEGER NOT NULL
  );
  `,
  // Plans of a ref other than the component's default are cells of their own (`environment/component@ref`).
  `
  ALTER TABLE runs ADD COLUMN cell_ref TEXT;
  `,
  // Approvals received per approved run and what became of them (the document's `applies` travels to
  // the hub; this table is the agent's own memory of them, across epochs: a replay changes nothing).
  `
  CREATE TABLE applies (
    run_id TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    record TEXT NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX applies_state ON applies (state);
  `,
  // Results held out of the document until their round ends or the next push: a row per cell and per
  // changed plan's run entry (docs/decisions/370-one-change-per-push.md).
  `
  CREATE TABLE held_cells (
    cell_key TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL,
    cell TEXT NOT NULL,
    held_at INTEGER NOT NULL
  );
  CREATE TABLE held_runs (
    run_id TEXT PRIMARY KEY,
    epoch INTEGER NOT NULL,
    run TEXT NOT NULL,
    held_at INTEGER NOT NULL
  );
  `,
  // Until when a held changed plan may wait for its round (decision 485): kept so a restart keeps it
  // waiting until then and no longer. Rows held before this step have none: they go with the next push.
  `
  ALTER TABLE held_runs ADD COLUMN wait_until INTEGER;
  `,
];
