import { createPrivateKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The relay's own Ed25519 key (docs/decisions/290-signed-hop-chain.md): made on first use in its data
 * dir, mode 0600, never overwritten, the same PEM (PKCS#8) an agent keeps. The hub enrols its public
 * half with `hub peer add NAME --key ed25519:…`; the relay signs its exchange times and its custody
 * records with it. Synchronous (node:crypto), so the hop server stamps answers without awaiting.
 */
export interface RelayKey {
  /** `ed25519:<base64url of the 32 raw bytes>`, as `hub peer add --key` takes it. */
  publicKey: string;
  sign(data: Uint8Array): Uint8Array;
}

export const relayKeyPath = (dataDir: string) => join(dataDir, 'relay-key.pem');

function fromPrivate(key: KeyObject): RelayKey {
  const jwk = key.export({ format: 'jwk' }) as { x?: string };
  if (!jwk.x) throw new Error('the relay key has no public half (expected an Ed25519 private key)');
  return {
    publicKey: `ed25519:${jwk.x}`,
    sign: (data) => new Uint8Array(sign(null, data, key)),
  };
}

/** Loads `<dataDir>/relay-key.pem`, creating it first when absent. `created` says which. */
export function loadOrCreateRelayKey(dataDir: string): RelayKey & { created: boolean; path: string } {
  const path = relayKeyPath(dataDir);
  if (!existsSync(path)) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('ed25519');
    try {
      writeFileSync(path, privateKey.export({ format: 'pem', type: 'pkcs8' }) as string, {
        mode: 0o600,
        flag: 'wx',
      });
      chmodSync(path, 0o600);
      return { ...fromPrivate(privateKey), created: true, path };
    } catch (e) {
      // another process made it first: use that one
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new Error(
      `relay key ${path} is not a readable PEM private key (${(e as Error).message}); move it away and run \`relay key\` to make a new one, then enrol it again with \`hub peer rotate NAME --key …\``,
    );
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`relay key ${path} is a ${key.asymmetricKeyType} key; a relay key is Ed25519`);
  return { ...fromPrivate(key), created: false, path };
}
