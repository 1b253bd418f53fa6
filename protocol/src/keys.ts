import { fromBase64, toBase64, toBase64Url } from './bytes.js';

/**
 * Ed25519 keys through WebCrypto (Node 20 and browsers; no `node:` import).
 *
 * Key files are PEM: private keys PKCS#8 (`-----BEGIN PRIVATE KEY-----`), public keys SPKI
 * (`-----BEGIN PUBLIC KEY-----`), the same as `openssl genpkey -algorithm ed25519` writes and
 * `openssl pkey` reads. A public key on one line (enrolment, configs) is `ed25519:<base64url of the 32 raw bytes>`.
 */

export interface SigningKeyPair {
  publicKey: CryptoKey;
  privateKey: CryptoKey;
}

const ALG = { name: 'Ed25519' } as const;
const subtle = () => globalThis.crypto.subtle;

/** A key file or key text that cannot be used; the message says which and why. */
export class KeyFormatError extends Error {
  readonly code = 'bad-key';
  constructor(message: string) {
    super(message);
    this.name = 'KeyFormatError';
  }
}

export async function generateSigningKeyPair(): Promise<SigningKeyPair> {
  return (await subtle().generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
}

function toPem(label: string, der: ArrayBuffer): string {
  const b64 = toBase64(new Uint8Array(der));
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

function fromPem(label: string, pem: string): Uint8Array<ArrayBuffer> {
  const m = pem.match(new RegExp(`-----BEGIN ${label}-----([\\s\\S]+?)-----END ${label}-----`));
  if (!m?.[1]) throw new KeyFormatError(`expected a PEM block '-----BEGIN ${label}-----'`);
  try {
    return fromBase64(m[1]) as Uint8Array<ArrayBuffer>;
  } catch {
    throw new KeyFormatError(`the PEM block '${label}' is not valid base64`);
  }
}

export async function exportPrivateKeyPem(key: CryptoKey): Promise<string> {
  return toPem('PRIVATE KEY', await subtle().exportKey('pkcs8', key));
}

export async function importPrivateKeyPem(pem: string): Promise<CryptoKey> {
  const der = fromPem('PRIVATE KEY', pem);
  try {
    return await subtle().importKey('pkcs8', der, ALG, true, ['sign']);
  } catch {
    throw new KeyFormatError(
      'the private key is not an Ed25519 PKCS#8 key (make one with `edge-agent init`)',
    );
  }
}

export async function exportPublicKeyPem(key: CryptoKey): Promise<string> {
  return toPem('PUBLIC KEY', await subtle().exportKey('spki', key));
}

export async function importPublicKeyPem(pem: string): Promise<CryptoKey> {
  const der = fromPem('PUBLIC KEY', pem);
  try {
    return await subtle().importKey('spki', der, ALG, true, ['verify']);
  } catch {
    throw new KeyFormatError('the public key is not an Ed25519 SPKI key');
  }
}

/** The public half of a private key (via its JWK, which carries `x`). */
export async function publicKeyOf(privateKey: CryptoKey): Promise<CryptoKey> {
  const jwk = await subtle().exportKey('jwk', privateKey);
  return subtle().importKey('jwk', { kty: 'OKP', crv: 'Ed25519', x: jwk.x }, ALG, true, ['verify']);
}

export async function publicKeyRaw(key: CryptoKey): Promise<Uint8Array> {
  return new Uint8Array(await subtle().exportKey('raw', key));
}

/** `ed25519:<base64url>`: a public key on one line. */
export async function publicKeyToText(key: CryptoKey): Promise<string> {
  return `ed25519:${toBase64Url(await publicKeyRaw(key))}`;
}

export async function publicKeyFromText(text: string): Promise<CryptoKey> {
  const t = text.trim();
  if (t.startsWith('-----BEGIN PUBLIC KEY-----')) return importPublicKeyPem(t);
  const m = t.match(/^ed25519:([A-Za-z0-9_-]{43})$/);
  if (!m?.[1]) {
    throw new KeyFormatError(
      `not a public key: expected 'ed25519:' followed by 43 base64url characters, got '${t.slice(0, 20)}…'`,
    );
  }
  const raw = fromBase64(m[1]) as Uint8Array<ArrayBuffer>;
  return subtle().importKey('raw', raw, ALG, true, ['verify']);
}

export async function signBytes(privateKey: CryptoKey, data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await subtle().sign(ALG, privateKey, data as Uint8Array<ArrayBuffer>));
}

export async function verifyBytes(
  publicKey: CryptoKey,
  signature: Uint8Array,
  data: Uint8Array,
): Promise<boolean> {
  return subtle().verify(
    ALG,
    publicKey,
    signature as Uint8Array<ArrayBuffer>,
    data as Uint8Array<ArrayBuffer>,
  );
}

/**
 * Imported public keys, by their one-line text (a re-enrolled key is a new entry); a text that does not
 * import is not kept, so texts from requests cannot fill it with failures.
 */
export class KeyCache {
  private readonly keys = new Map<string, Promise<CryptoKey>>();
  get(text: string): Promise<CryptoKey> {
    let k = this.keys.get(text);
    if (!k) {
      k = publicKeyFromText(text);
      k.catch(() => this.keys.delete(text));
      this.keys.set(text, k);
    }
    return k;
  }
}
