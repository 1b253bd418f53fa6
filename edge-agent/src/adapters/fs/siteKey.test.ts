import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSiteKey, siteKeyPath } from './siteKey.js';

const dirs: string[] = [];
const fresh = () => {
  const d = mkdtempSync(join(tmpdir(), 'site-key-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('loadSiteKey', () => {
  it('creates 32 random bytes with mode 0600 on first use and returns the same key after', () => {
    const dir = join(fresh(), 'data');
    const a = loadSiteKey(dir);
    expect(a.length).toBe(32);
    expect(statSync(siteKeyPath(dir)).mode & 0o777).toBe(0o600);
    expect(Buffer.from(loadSiteKey(dir)).equals(Buffer.from(a))).toBe(true);
    expect(Buffer.from(readFileSync(siteKeyPath(dir))).equals(Buffer.from(a))).toBe(true);
  });

  it('gives different sites different keys', () => {
    expect(Buffer.from(loadSiteKey(fresh())).equals(Buffer.from(loadSiteKey(fresh())))).toBe(false);
  });

  it('refuses a damaged key file and says what to do', () => {
    const dir = fresh();
    writeFileSync(siteKeyPath(dir), 'short');
    expect(() => loadSiteKey(dir)).toThrow(/holds 5 bytes, not 32.*move it away/);
  });
});
