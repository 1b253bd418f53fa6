import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { SEEN_MAX_MS, SqliteCustody } from '../src/adapters/sqlite/SqliteCustody.js';
import { tmp } from './helpers.js';

describe("the relay's memory of bundles it took", () => {
  it('keeps a bundle for deduplication at most SEEN_MAX_MS, whatever lifetime its sender claims', () => {
    const path = join(tmp(), 'r.sqlite');
    const custody = new SqliteCustody(path);
    const now = 1_800_000_000_000;
    const tenYears = now + 10 * 365 * 86_400_000;
    const out = custody.accept(
      'ship-7',
      [
        {
          id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
          dest: 'hub',
          priority: 'status',
          kind: 'doc-delta',
          expiresAt: tenYears,
          bytes: new Uint8Array([1, 2, 3]),
        },
      ],
      now,
    );
    expect(out).toEqual(['stored']);
    custody.close();
    const db = new Database(path, { readonly: true });
    const row = db.prepare('SELECT expires_at AS e FROM seen').get() as { e: number };
    db.close();
    expect(row.e).toBe(now + SEEN_MAX_MS);
  });
});
