import { createHash } from 'node:crypto';
import { migrateLocked, userVersion } from '@driftline/hop/sqlite';
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
  // Publications (named before decision 170): blobs announced on the downlink this relay fetches once for all its sites.
  `CREATE TABLE bundle_cache (
     sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, name TEXT NOT NULL, sites TEXT NOT NULL,
     state TEXT NOT NULL, fetched INTEGER NOT NULL DEFAULT 0, expires_at INTEGER NOT NULL,
     created_at INTEGER NOT NULL, reason TEXT);`,
  // Trust: a bundle is known by (id, content hash), so an altered copy posted first cannot make the genuine
  // one a duplicate (both are held and forwarded; the hub's signature check tells them apart). Uplink rows
  // are removed by seq. Blobs and tokens record who they belong to.
  `CREATE TABLE seen_v3 (
     id TEXT NOT NULL, sha256 TEXT NOT NULL, expires_at INTEGER NOT NULL, PRIMARY KEY (id, sha256)) WITHOUT ROWID;
   INSERT INTO seen_v3 (id, sha256, expires_at)
     SELECT s.id, COALESCE((SELECT sha256(u.bytes) FROM uplink u WHERE u.id = s.id), ''), s.expires_at FROM seen s;
   DROP TABLE seen;
   ALTER TABLE seen_v3 RENAME TO seen;
   CREATE INDEX seen_expiry ON seen (expires_at);
   CREATE TABLE uplink_v3 (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, sha256 TEXT NOT NULL, rank INTEGER NOT NULL,
     dest TEXT NOT NULL, kind TEXT NOT NULL, size INTEGER NOT NULL, received_at INTEGER NOT NULL,
     expires_at INTEGER NOT NULL, from_peer TEXT NOT NULL, bytes BLOB NOT NULL, UNIQUE (id, sha256));
   INSERT INTO uplink_v3 (seq, id, sha256, rank, dest, kind, size, received_at, expires_at, from_peer, bytes)
     SELECT seq, id, sha256(bytes), rank, dest, kind, size, received_at, expires_at, from_peer, bytes FROM uplink;
   DROP TABLE uplink;
   ALTER TABLE uplink_v3 RENAME TO uplink;
   CREATE INDEX uplink_order ON uplink (rank, seq);
   CREATE INDEX uplink_peer ON uplink (from_peer);
   ALTER TABLE blobs ADD COLUMN from_peer TEXT NOT NULL DEFAULT '';
   ALTER TABLE tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'peer';`,
  // Clock offsets per hop: each uplink bundle keeps its source and that source's clock minus this
  // relay's (docs/decisions/070-clock-offsets.md), NULL when the path gave none.
  `ALTER TABLE uplink ADD COLUMN source TEXT;
   ALTER TABLE uplink ADD COLUMN clock TEXT;`,
  // A blob an upstream refused for good (too large, bad metadata) is set aside for that upstream until a
  // time, so the blobs behind it still go.
  `ALTER TABLE blob_uploads ADD COLUMN aside_until INTEGER;
   ALTER TABLE blob_uploads ADD COLUMN aside_reason TEXT;`,
  // Downlink known by (site, id, sha256), as the uplink: an altered copy pulled first through one upstream
  // cannot shadow the genuine one pulled through another (both are served; the agent's signature check
  // keeps the genuine one). `downlink_seen` remembers copies after the site pulled them, so the same bytes
  // from a second upstream are not served twice. The seq sequence carries on: cursors downstream hold it.
  `CREATE TABLE downlink_v6 (
     seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL, sha256 TEXT NOT NULL, site TEXT NOT NULL,
     rank INTEGER NOT NULL, size INTEGER NOT NULL, received_at INTEGER NOT NULL, expires_at INTEGER NOT NULL,
     bytes BLOB NOT NULL, UNIQUE (site, id, sha256));
   INSERT INTO downlink_v6 (seq, id, sha256, site, rank, size, received_at, expires_at, bytes)
     SELECT seq, id, sha256(bytes), site, rank, size, received_at, expires_at, bytes FROM downlink;
   UPDATE sqlite_sequence SET seq = MAX(seq, (SELECT seq FROM sqlite_sequence WHERE name = 'downlink'))
     WHERE name = 'downlink_v6' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'downlink');
   INSERT INTO sqlite_sequence (name, seq) SELECT 'downlink_v6', seq FROM sqlite_sequence WHERE name = 'downlink'
     AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'downlink_v6');
   DROP TABLE downlink;
   ALTER TABLE downlink_v6 RENAME TO downlink;
   CREATE INDEX downlink_site ON downlink (site, seq);
   CREATE TABLE downlink_seen (
     site TEXT NOT NULL, id TEXT NOT NULL, sha256 TEXT NOT NULL, expires_at INTEGER NOT NULL,
     PRIMARY KEY (site, id, sha256)) WITHOUT ROWID;
   INSERT INTO downlink_seen (site, id, sha256, expires_at) SELECT site, id, sha256, expires_at FROM downlink;
   CREATE INDEX downlink_seen_expiry ON downlink_seen (expires_at);`,
  // hop v2 (docs/decisions/495-hop-v2-on-the-agent-link.md): an agent's key, registered with its peer's
  // token, by the short id its messages name; it acts as that peer while the peer has a live token.
  `CREATE TABLE wire2_keys (
     id INTEGER PRIMARY KEY, public_key TEXT NOT NULL, peer TEXT NOT NULL, site TEXT NOT NULL,
     agent TEXT NOT NULL, registered_at INTEGER NOT NULL);`,
];

/** The content hash bundles are told apart by (hex SHA-256 of the encoded bundle). */
export const bundleHash = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** Runs the migrations not yet run, up to `upTo` (all by default; tests stop earlier to build old stores). */
export function migrate(db: Database.Database, upTo = MIGRATIONS.length): void {
  db.function('sha256', { deterministic: true }, (b: unknown) => bundleHash(b as Uint8Array));
  // Three `relay token add` in a set-up step may open a fresh store at once: see migrateLocked.
  migrateLocked(db, MIGRATIONS, userVersion(db), upTo);
}
