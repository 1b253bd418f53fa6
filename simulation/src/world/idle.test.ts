import { generateKeyPairSync, randomBytes, randomUUID, sign, webcrypto } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IdleWatch } from './idle.js';

/**
 * The world moves its clock only when the process is idle (docs/decisions/540-deterministic-world.md).
 * A crypto job run synchronously (`crypto.sign`, `randomUUID`'s refill) is over when its call returns and
 * never calls back; it once counted as work under way until the garbage collector destroyed it, and a run
 * on a loaded machine failed with "the world is never idle … still SIGNREQUEST" once such a job had been
 * promoted to the old generation. An asynchronous job counts until it calls back.
 */
describe('IdleWatch', () => {
  it('does not count a crypto job run synchronously as work under way', () => {
    const watch = new IdleWatch();
    watch.start();
    try {
      const keys = generateKeyPairSync('ed25519');
      sign(null, Buffer.from('a round'), keys.privateKey);
      for (let i = 0; i < 200; i++) randomUUID(); // past its cache: a synchronous refill
      randomBytes(16);
      expect(watch.busy()).toEqual([]);
    } finally {
      watch.stop();
    }
  });

  it('counts an asynchronous signature until it calls back, and then not', async () => {
    const watch = new IdleWatch();
    const keys = (await webcrypto.subtle.generateKey({ name: 'Ed25519' }, false, [
      'sign',
      'verify',
    ])) as CryptoKeyPair;
    watch.start();
    try {
      const signing = webcrypto.subtle.sign({ name: 'Ed25519' }, keys.privateKey, new Uint8Array(64));
      expect(watch.busy()).toEqual(['SIGNREQUEST']);
      await signing;
      await new Promise<void>((r) => setImmediate(r));
      expect(watch.busy()).toEqual([]);
    } finally {
      watch.stop();
    }
  });
});
