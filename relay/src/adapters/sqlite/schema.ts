import type Database from 'better-sqlite3';

/** The relay's tables. Migrations are additive; `user_version` says which have run. */
const MIGRATIONS = [
  `CREATE TABLE seen (id TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID;
   CREATE INDEX seen_expiry ON seen (expires_at);
   CREATE TABLE uplink (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, rank INTEGER NOT NULL,
     dest TEXT NOT NULL, kind TEXT NOT NULL, size INTEGER NOT NULL, received_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL, from_peer TEXT NOT NULL, bytes BLOB NOT NULL);
   CREATE INDEX uplink_order ON uplink (rank, seq);
   CREATE TABLE downlink (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, site TEXT NOT NULL, rank INTEGER NOT NULL,
     size INTEGER NOT NULL, received_at INTEGER NOT NULL, expires_at INTEGER NOT NULL, bytes BLOB NOT NULL,
     UNIQUE (site, id));
   CREATE INDEX downlink_site ON downlink (site, seq);
   CREATE TABLE cursors (upstream TEXT NOT NULL, site TEXT NOT NULL, cursor TEXT NOT NULL, PRIMARY KEY (upstream, site));
   CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
   CREATE TABLE sent (key TEXT PRIMARY KEY, bytes INTEGER NOT NULL);
   CREATE TABLE tokens (
     id TEXT PRIMARY KEY, name TEXT NOT NULL, sites TEXT NOT NULL, salt BLOB NOT NULL, hash BLOB NOT NULL,
     created_at INTEGER NOT NULL, revoked_at INTEGER);
   CREATE TABLE blobs (
     sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, path TEXT NOT NULL, metadata TEXT NOT NULL,
     received_at INTEGER NOT NULL);
   CREATE TABLE blob_uploads (
     sha256 TEXT NOT NULL, upstream TEXT NOT NULL, url TEXT, done INTEGER NOT NULL DEFAULT 0,
     PRIMARY KEY (sha256, upstream));`,
  // Bundles to outposts: blobs announced on the downlink this relay fetches once for all its sites.
  `CREATE TABLE bundle_cache (
     sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, name TEXT NOT NULL, sites TEXT NOT NULL,
     state TEXT NOT NULL, fetched INTEGER NOT NULL DEFAULT 0, expires_at INTEGER NOT NULL,
     created_at INTEGER NOT NULL, reason TEXT);`,
];

export function migrate(db: Database.Database): void {
  const at = db.pragma('user_version', { simple: true }) as number;
  for (let v = at; v < MIGRATIONS.length; v++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
