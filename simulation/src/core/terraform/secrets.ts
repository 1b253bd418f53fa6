import type { Random } from '../rng.js';

/**
 * The site's secrets, fixed per seed + component + environment so that plans are deterministic.
 * Each has a recognisable shape (AWS key id, GitHub token, PEM) so the agent's secret scan has
 * something real to find, and each is placed where Terraform really puts such values.
 */
export interface Secrets {
  dbPassword: string;
  rotatedDbPassword: string;
  apiToken: string;
  awsAccessKey: string;
  awsSecretKey: string;
  deployKeyPem: string;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function pick(r: Random, alphabet: string, n: number): string {
  let s = '';
  for (let i = 0; i < n; i++) s += alphabet[Math.floor(r() * alphabet.length)];
  return s;
}

export function hex(r: Random, n: number): string {
  return pick(r, '0123456789abcdef', n);
}

export function makeSecrets(r: Random): Secrets {
  const b64 = `${ALNUM}+/`;
  return {
    dbPassword: `${pick(r, ALNUM, 18)}!${pick(r, ALNUM, 5)}`,
    rotatedDbPassword: `${pick(r, ALNUM, 18)}#${pick(r, ALNUM, 5)}`,
    apiToken: `ghp_${pick(r, ALNUM, 36)}`,
    awsAccessKey: `AKIA${pick(r, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', 16)}`,
    awsSecretKey: pick(r, b64, 40),
    deployKeyPem: `-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEI${pick(r, b64, 27)}\n-----END PRIVATE KEY-----\n`,
  };
}
