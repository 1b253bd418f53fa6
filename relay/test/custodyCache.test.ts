import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CUSTODY_CACHE_KIB, SqliteCustody } from '../src/adapters/sqlite/SqliteCustody.js';

it("custody's SQLite page cache is CUSTODY_CACHE_KIB, not better-sqlite3's 16 MB", () => {
  const dir = mkdtempSync(join(tmpdir(), 'relay-cache-'));
  try {
    const c = new SqliteCustody(join(dir, 'relay.sqlite'));
    expect(c.db.pragma('cache_size', { simple: true })).toBe(-CUSTODY_CACHE_KIB);
    c.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
