import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * A 32-byte secret kept in a file (mode 0600), made on first use: the key of the CSRF values the hub
 * derives from session ids, so they stay valid across restarts as the sessions do.
 */
export async function loadOrCreateSecret(path: string): Promise<Uint8Array> {
  if (!existsSync(path)) {
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' }).catch((e) => {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    });
  }
  const bytes = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64url');
  if (bytes.length < 32) throw new Error(`${path} holds no 32-byte secret; delete it to make a new one`);
  return new Uint8Array(bytes);
}
