import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Peer } from '@driftline/hop';
import type Database from 'better-sqlite3';

const hash = (salt: Buffer, secret: string) => createHash('sha256').update(salt).update(secret).digest();

/** What a token is for: a downstream `peer` (hop API and `/metrics`), or `metrics` only (a Prometheus scraper). */
export type TokenScope = 'peer' | 'metrics';

/**
 * Bearer tokens of downstream peers (S4 in docs/architecture.md#invariants): `dlr_<id>_<secret>`. Only a salted SHA-256 of the
 * secret is stored; the 256-bit random secret makes a slow KDF unnecessary. The id finds the row
 * without comparing every hash; the comparison is constant-time.
 */
export class SqliteTokens {
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {}

  /**
   * Issues a token for `name` (a site or a downstream relay) acting for `sites`, or with scope
   * `metrics` one that may only read `/metrics`.
   */
  add(name: string, sites: readonly string[], scope: TokenScope = 'peer'): string {
    const id = randomBytes(6).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const salt = randomBytes(16);
    this.db
      .prepare(
        'INSERT INTO tokens (id, name, sites, salt, hash, created_at, scope) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(
        id,
        name,
        JSON.stringify(scope === 'peer' ? sites : []),
        salt,
        hash(salt, secret),
        this.now(),
        scope,
      );
    return `dlr_${id}_${secret}`;
  }

  /**
   * Revokes every live token of `name`; returns how many. The hop v2 keys they registered go with them: a
   * new token of the same name does not bring a stolen key back; the agent registers again with it.
   */
  revoke(name: string): number {
    return this.db.transaction(() => {
      const n = this.db
        .prepare('UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL')
        .run(this.now(), name).changes;
      this.db.prepare('DELETE FROM wire2_keys WHERE peer = ?').run(name);
      return n;
    })();
  }

  list(): {
    id: string;
    name: string;
    sites: string[];
    scope: TokenScope;
    createdAt: number;
    revokedAt: number | null;
  }[] {
    return (
      this.db
        .prepare('SELECT id, name, sites, scope, created_at, revoked_at FROM tokens ORDER BY created_at')
        .all() as {
        id: string;
        name: string;
        sites: string;
        scope: TokenScope;
        created_at: number;
        revoked_at: number | null;
      }[]
    ).map((r) => ({
      id: r.id,
      name: r.name,
      sites: JSON.parse(r.sites),
      scope: r.scope,
      createdAt: r.created_at,
      revokedAt: r.revoked_at,
    }));
  }

  /** The peer of a live `peer` token, or null (a `metrics` token is no peer). */
  authenticate(token: string): Peer | null {
    const row = this.find(token);
    return row && row.scope === 'peer' ? { name: row.name, sites: JSON.parse(row.sites) } : null;
  }

  /** The peer `name` is while it has a live `peer` token (the sites of its newest), or null. */
  peerNamed(name: string): Peer | null {
    // every v2 push and pull asks (the sender's peer): prepared once
    this.peerByName ??= this.db.prepare(
      "SELECT sites FROM tokens WHERE name = ? AND scope = 'peer' AND revoked_at IS NULL ORDER BY created_at DESC LIMIT 1",
    );
    const row = this.peerByName.get(name) as { sites: string } | undefined;
    return row ? { name, sites: JSON.parse(row.sites) } : null;
  }
  private peerByName: Database.Statement | undefined;

  /**
   * Pins a hop v2 agent key under `peer` by its short id (decision 495). Refused (false): the same id with
   * another key (two keys sharing 32 bits of hash at one relay), or a key another live peer registered (a
   * token of one site cannot take over another site's agent by naming its public key).
   */
  pinWire2(id: number, k: { publicKey: string; peer: string; site: string; agent: string }): boolean {
    const had = this.db.prepare('SELECT public_key, peer FROM wire2_keys WHERE id = ?').get(id) as
      | { public_key: string; peer: string }
      | undefined;
    if (had && had.public_key !== k.publicKey) return false;
    if (had && had.peer !== k.peer && this.peerNamed(had.peer)) return false;
    this.db
      .prepare(
        'INSERT OR REPLACE INTO wire2_keys (id, public_key, peer, site, agent, registered_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(id, k.publicKey, k.peer, k.site, k.agent, this.now());
    return true;
  }

  /** The hop v2 key pinned under a short id, or null. */
  wire2Key(id: number): { publicKey: string; peer: string; site: string; agent: string } | null {
    // every v2 push and pull asks: prepared once
    this.keyById ??= this.db.prepare(
      'SELECT public_key AS publicKey, peer, site, agent FROM wire2_keys WHERE id = ?',
    );
    const row = this.keyById.get(id) as
      | { publicKey: string; peer: string; site: string; agent: string }
      | undefined;
    return row ?? null;
  }
  private keyById: Database.Statement | undefined;

  /** Whether a live token (of a peer, or a `metrics` one) may read `/metrics`. */
  mayReadMetrics(token: string): boolean {
    return this.find(token) !== null;
  }

  private find(token: string): { name: string; sites: string; scope: TokenScope } | null {
    const m = /^dlr_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return null;
    const row = this.db
      .prepare('SELECT name, sites, salt, hash, scope FROM tokens WHERE id = ? AND revoked_at IS NULL')
      .get(m[1]) as
      | { name: string; sites: string; salt: Buffer; hash: Buffer; scope: TokenScope }
      | undefined;
    if (!row) return null;
    if (!timingSafeEqual(hash(row.salt, m[2] as string), row.hash)) return null;
    return row;
  }
}
