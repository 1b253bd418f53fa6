import { describe, expect, it } from 'vitest';
import { sharedHealthCheck } from './storeHealth.js';

describe('sharedHealthCheck', () => {
  it('asks the store once for callers at the same time and once per ttl', async () => {
    let t = 0;
    let calls = 0;
    const health = sharedHealthCheck(
      async () => {
        calls++;
      },
      1000,
      () => t,
    );
    expect(await Promise.all([health(), health(), health()])).toEqual([
      { ok: true },
      { ok: true },
      { ok: true },
    ]);
    expect(calls).toBe(1);
    t = 999;
    await health();
    expect(calls).toBe(1);
    t = 1000;
    await health();
    expect(calls).toBe(2);
  });

  it('reports a failing check as not ok with its message, and sees the store come back', async () => {
    let t = 0;
    let down = true;
    const health = sharedHealthCheck(
      async () => {
        if (down) throw new Error('PostgreSQL at db:5432/driftline is unavailable (ECONNREFUSED)');
      },
      500,
      () => t,
    );
    expect(await health()).toEqual({
      ok: false,
      detail: 'PostgreSQL at db:5432/driftline is unavailable (ECONNREFUSED)',
    });
    down = false;
    t = 500;
    expect(await health()).toEqual({ ok: true });
  });
});
