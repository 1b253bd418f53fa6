import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateSecret } from './secretFile.js';

const dir = mkdtempSync(join(tmpdir(), 'secret-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadOrCreateSecret', () => {
  it('gives every hub starting at once on one data folder the same whole secret', async () => {
    // Two hubs on one PostgreSQL database started together from one folder (hub/test/multiHub.test.ts):
    // the one that lost the race to create the file read it before the winner had written it.
    for (let round = 0; round < 50; round++) {
      const path = join(dir, `race-${round}`, 'csrf.key');
      const all = await Promise.all(Array.from({ length: 8 }, () => loadOrCreateSecret(path)));
      for (const s of all) expect(Buffer.from(s).equals(Buffer.from(all[0] as Uint8Array))).toBe(true);
      expect(all[0]?.length).toBe(32);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(readdirSync(join(dir, `race-${round}`))).toEqual(['csrf.key']);
    }
  });

  it('keeps the secret across starts and refuses a file that holds none', async () => {
    const path = join(dir, 'kept.key');
    const first = await loadOrCreateSecret(path);
    expect(await loadOrCreateSecret(path)).toEqual(first);
    expect(readFileSync(path, 'utf8').trim().length).toBeGreaterThan(40);
    const short = join(dir, 'short.key');
    await import('node:fs/promises').then((f) => f.writeFile(short, 'abc'));
    await expect(loadOrCreateSecret(short)).rejects.toThrow(/holds no 32-byte secret; delete it/);
  });
});
