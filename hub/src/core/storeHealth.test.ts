import { describe, expect, it } from 'vitest';
import { type HealthCheckOptions, sharedHealthCheck } from './storeHealth.js';

const options = (now: () => number, extra: Partial<HealthCheckOptions> = {}): HealthCheckOptions => ({
  ttlMs: 1000,
  timeoutMs: 5000,
  now,
  describe: () => 'the store is unavailable',
  ...extra,
});

describe('sharedHealthCheck', () => {
  it('asks the store once for callers at the same time and once per ttl', async () => {
    let t = 0;
    let calls = 0;
    const health = sharedHealthCheck(
      async () => {
        calls++;
      },
      options(() => t),
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

  it('says a fixed phrase on the wire and gives the error itself only to the log, then sees the store back', async () => {
    let t = 0;
    let down = true;
    const logged: string[] = [];
    const health = sharedHealthCheck(
      async () => {
        if (down) throw new Error('password authentication failed for user "hub" at db.internal:5432');
      },
      options(() => t, { ttlMs: 500, onFailure: (e) => logged.push((e as Error).message) }),
    );
    expect(await health()).toEqual({ ok: false, detail: 'the store is unavailable' });
    expect(logged).toEqual(['password authentication failed for user "hub" at db.internal:5432']);
    down = false;
    t = 500;
    expect(await health()).toEqual({ ok: true });
  });

  it('reports a store that does not answer as down after the timeout instead of hanging', async () => {
    const health = sharedHealthCheck(
      () => new Promise<void>(() => {}),
      options(() => 0, { timeoutMs: 20 }),
    );
    expect(await health()).toEqual({ ok: false, detail: 'the store did not answer within 20 ms' });
  });
});
