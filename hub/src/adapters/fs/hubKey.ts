import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import {
  exportPrivateKeyPem,
  generateSigningKeyPair,
  importPrivateKeyPem,
  publicKeyOf,
  publicKeyToText,
} from '@driftline/protocol';

/** The hub's signing key (PKCS#8 PEM, mode 0600), generated on first use (decision 004). */
export async function loadOrCreateHubKey(
  path: string,
): Promise<{ privateKey: CryptoKey; publicKeyText: string; created: boolean }> {
  let created = false;
  if (!existsSync(path)) {
    await mkdir(dirname(path), { recursive: true });
    const pair = await generateSigningKeyPair();
    await writeFile(path, await exportPrivateKeyPem(pair.privateKey), { mode: 0o600, flag: 'wx' });
    created = true;
  }
  const privateKey = await importPrivateKeyPem(await readFile(path, 'utf8'));
  return { privateKey, publicKeyText: await publicKeyToText(await publicKeyOf(privateKey)), created };
}
