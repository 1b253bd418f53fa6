import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/**
 * A 32-byte secret kept in a file (mode 0600), made on first use: the key of the CSRF values the hub
 * derives from session ids, so they stay valid across restarts as the sessions do.
 *
 * Made whole beside the file, then linked into place: `link` fails if a file is there already, and no
 * reader ever sees the file before its secret is in it. Creating the file itself with `wx` and writing into
 * it let a second hub started on the same folder at the same moment read it empty and exit.
 */
export async function loadOrCreateSecret(path: string): Promise<Uint8Array> {
  if (!existsSync(path)) {
    await mkdir(dirname(path), { recursive: true });
    const draft = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(draft, randomBytes(32).toString('base64url'), { mode: 0o600, flag: 'wx' });
    try {
      await link(draft, path);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    } finally {
      await unlink(draft).catch(() => {});
    }
  }
  const bytes = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64url');
  if (bytes.length < 32) throw new Error(`${path} holds no 32-byte secret; delete it to make a new one`);
  return new Uint8Array(bytes);
}
