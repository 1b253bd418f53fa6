import { describe, expect, it } from 'vitest';
import {
  exportPrivateKeyPem,
  exportPublicKeyPem,
  generateSigningKeyPair,
  importPrivateKeyPem,
  importPublicKeyPem,
  KeyFormatError,
  publicKeyFromText,
  publicKeyOf,
  publicKeyToText,
  signBytes,
  verifyBytes,
} from '../src/index.js';

describe('Ed25519 keys', () => {
  it('round-trips private and public keys through PEM and still signs and verifies', async () => {
    const kp = await generateSigningKeyPair();
    const priv = await importPrivateKeyPem(await exportPrivateKeyPem(kp.privateKey));
    const pub = await importPublicKeyPem(await exportPublicKeyPem(kp.publicKey));
    const msg = new TextEncoder().encode('plan result');
    expect(await verifyBytes(pub, await signBytes(priv, msg), msg)).toBe(true);
  });

  it('writes PEM that openssl understands (PKCS#8 / SPKI labels, 64-column base64)', async () => {
    const kp = await generateSigningKeyPair();
    const pem = await exportPrivateKeyPem(kp.privateKey);
    expect(pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END PRIVATE KEY-----\n$/);
    expect(await exportPublicKeyPem(kp.publicKey)).toContain('-----BEGIN PUBLIC KEY-----');
  });

  it('derives the public key from the private key', async () => {
    const kp = await generateSigningKeyPair();
    expect(await publicKeyToText(await publicKeyOf(kp.privateKey))).toBe(await publicKeyToText(kp.publicKey));
  });

  it('prints a public key on one line and reads it back (or from PEM)', async () => {
    const kp = await generateSigningKeyPair();
    const text = await publicKeyToText(kp.publicKey);
    expect(text).toMatch(/^ed25519:[A-Za-z0-9_-]{43}$/);
    expect(await publicKeyToText(await publicKeyFromText(text))).toBe(text);
    expect(await publicKeyToText(await publicKeyFromText(await exportPublicKeyPem(kp.publicKey)))).toBe(text);
  });

  it('explains what is wrong with a bad key', async () => {
    await expect(publicKeyFromText('ssh-ed25519 AAAA')).rejects.toThrow(KeyFormatError);
    await expect(publicKeyFromText('ssh-ed25519 AAAA')).rejects.toThrow(/expected 'ed25519:'/);
    await expect(importPrivateKeyPem('hello')).rejects.toThrow(/BEGIN PRIVATE KEY/);
    const rsaLike = '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n';
    await expect(importPrivateKeyPem(rsaLike)).rejects.toThrow(/not an Ed25519 PKCS#8 key/);
  });
});
