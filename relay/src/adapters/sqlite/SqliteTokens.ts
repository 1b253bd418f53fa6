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

  /** Revokes every live token of `name`; returns how many. */
  revoke(name: string): number {
    return this.db
      .prepare('UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL')
      .run(this.now(), name).changes;
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
