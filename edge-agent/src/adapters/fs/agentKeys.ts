import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  exportPrivateKeyPem,
  generateSigningKeyPair,
  importPrivateKeyPem,
  publicKeyFromText,
  publicKeyOf,
  publicKeyToText,
} from '@driftline/protocol';
import { ConfigProblem } from '../../configProblem.js';

export const agentKeyPath = (dataDir: string) => join(dataDir, 'agent-key.pem');

/** Creates the agent's keypair once (mode 0600); an existing key is kept, never overwritten. */
export async function initAgentKey(dataDir: string): Promise<{ created: boolean; publicKey: string }> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = agentKeyPath(dataDir);
  if (existsSync(path))
    return {
      created: false,
      publicKey: await publicKeyToText(await publicKeyOf(await loadAgentKey(dataDir))),
    };
  const kp = await generateSigningKeyPair();
  writeFileSync(path, await exportPrivateKeyPem(kp.privateKey), { mode: 0o600, flag: 'wx' });
  chmodSync(path, 0o600);
  return { created: true, publicKey: await publicKeyToText(kp.publicKey) };
}

export async function loadAgentKey(dataDir: string): Promise<CryptoKey> {
  const path = agentKeyPath(dataDir);
  if (!existsSync(path))
    throw new ConfigProblem(`no agent key at ${path} (run \`edge-agent init --config <file>\` first)`);
  try {
    return await importPrivateKeyPem(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new ConfigProblem(
      `agent key ${path}: ${(e as Error).message} (restore it from a backup, or make a new one with \`edge-agent init\` and enrol it again)`,
    );
  }
}

export async function loadHubKey(file: string): Promise<CryptoKey> {
  try {
    return await publicKeyFromText(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigProblem(
      `hub public key file ${file}: ${(e as Error).message} (paste the output of \`hub key\` into it)`,
    );
  }
}

export function readToken(file: string): string {
  const token = readFileSync(file, 'utf8').trim();
  if (!token)
    throw new ConfigProblem(`token file ${file} is empty (put the token \`relay token add\` printed in it)`);
  return token;
}
