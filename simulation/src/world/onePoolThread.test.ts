import { pbkdf2 } from 'node:crypto';
import { describe, expect, it } from 'vitest';

/**
 * The world's replay rests on libuv's pool being one thread in this lane's workers (scripts/onePoolThread.cjs,
 * docs/decisions/540-deterministic-world.md): work then completes in the order it was asked for. A long
 * job asked first and a short one after: with one thread the long one ends first, with four the short one.
 */
describe("the world's lane", () => {
  it('runs file and crypto work on one pool thread, in the order it was asked for', async () => {
    const order: string[] = [];
    const job = (name: string, iterations: number) =>
      new Promise<void>((resolve, reject) =>
        pbkdf2('secret', 'salt', iterations, 32, 'sha256', (e) => {
          if (e) reject(e);
          order.push(name);
          resolve();
        }),
      );
    await Promise.all([job('long', 300_000), job('short', 1)]);
    expect(process.env.UV_THREADPOOL_SIZE).toBe('1');
    expect(order).toEqual(['long', 'short']);
  });
});
