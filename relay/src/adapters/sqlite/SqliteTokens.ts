import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Peer } from '@driftline/hop';
import type Database from 'better-sqlite3';

const hash = (salt: Buffer, secret: string) => createHash('sha256').update(salt).update(secret).digest();

/**
 * Bearer tokens of downstream peers (DESIGN S4): `dlr_<id>_<secret>`. Only a salted SHA-256 of the
 * secret is stored; the 256-bit random secret makes a slow KDF unnecessary. The id finds the row
 * without comparing every hash; the comparison is constant-time.
 */
export class SqliteTokens {
  constructor(
    private readonly db: Database.Database,
    private readonly now: () => number,
  ) {}

  /** Issues a token for `name` (a site or a downstream relay) able to pull downlink for `sites`. */
  add(name: string, sites: readonly string[]): string {
    const id = randomBytes(6).toString('hex');
    const secret = randomBytes(32).toString('base64url');
    const salt = randomBytes(16);
    this.db
      .prepare('INSERT INTO tokens (id, name, sites, salt, hash, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(id, name, JSON.stringify(sites), salt, hash(salt, secret), this.now());
    return `dlr_${id}_${secret}`;
  }

  /** Revokes every live token of `name`; returns how many. */
  revoke(name: string): number {
    return this.db
      .prepare('UPDATE tokens SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL')
      .run(this.now(), name).changes;
  }

  list(): { id: string; name: string; sites: string[]; createdAt: number; revokedAt: number | null }[] {
    return (
      this.db
        .prepare('SELECT id, name, sites, created_at, revoked_at FROM tokens ORDER BY created_at')
        .all() as {
        id: string;
        name: string;
        sites: string;
        created_at: number;
        revoked_at: number | null;
      }[]
    ).map((r) => ({
      id: r.id,
      name: r.name,
      sites: JSON.parse(r.sites),
      createdAt: r.created_at,
      revokedAt: r.revoked_at,
    }));
  }

  authenticate(token: string): Peer | null {
    const m = /^dlr_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/.exec(token);
    if (!m) return null;
    const row = this.db
      .prepare('SELECT name, sites, salt, hash FROM tokens WHERE id = ? AND revoked_at IS NULL')
      .get(m[1]) as { name: string; sites: string; salt: Buffer; hash: Buffer } | undefined;
    if (!row) return null;
    if (!timingSafeEqual(hash(row.salt, m[2] as string), row.hash)) return null;
    return { name: row.name, sites: JSON.parse(row.sites) };
  }
}
