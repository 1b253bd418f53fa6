import { randomBytes } from 'node:crypto';
import { chmodSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Bytes of the per-site secret key. */
export const SITE_KEY_BYTES = 32;

export const siteKeyPath = (dataDir: string) => join(dataDir, 'site-key');

function read(path: string): Uint8Array {
  const key = readFileSync(path);
  if (key.length !== SITE_KEY_BYTES) {
    throw new Error(
      `site key file ${path} holds ${key.length} bytes, not ${SITE_KEY_BYTES} (it is damaged: move it away and the agent makes a new one; masked tags and plan hashes then change once)`,
    );
  }
  return new Uint8Array(key);
}

/**
 * The site's own secret key: 32 random bytes in `<dataDir>/site-key` (mode 0600), created on first use
 * and never overwritten. It never leaves the site; core code receives it (or an HMAC made from it) as an
 * argument. Keyed digests and masking tags made under it are stable across runs and restarts, and a
 * guess cannot be checked against them without it.
 */
export function loadSiteKey(dataDir: string): Uint8Array {
  const path = siteKeyPath(dataDir);
  try {
    return read(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  // Written aside, then linked into place: a reader never sees a half-written key, and of two
  // processes creating it at once, the second uses the first one's.
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, randomBytes(SITE_KEY_BYTES), { mode: 0o600, flag: 'wx' });
  try {
    chmodSync(tmp, 0o600);
    linkSync(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    unlinkSync(tmp);
  }
  return read(path);
}
