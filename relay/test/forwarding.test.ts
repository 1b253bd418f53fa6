import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryUpstream } from '../src/adapters/memory/MemoryUpstream.js';
import { SqliteCustody } from '../src/adapters/sqlite/SqliteCustody.js';
import { windowsOf } from '../src/core/contactPlan.js';
import { describeBundle } from '../src/core/describeBundle.js';
import { type ForwardEvent, forwardStep, type UpstreamSlot } from '../src/core/Forwarder.js';
import { makeBundle, tmp } from './helpers.js';

const opts = { batchBytes: 1 << 20, batchCount: 2, backoffBaseMs: 1000, backoffMaxMs: 60_000, idleMs: 5000 };
const stores: SqliteCustody[] = [];
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
});
function store(maxBytes?: number) {
  const s = new SqliteCustody(join(tmp(), 'r.sqlite'), { maxBytes });
  stores.push(s);
  return s;
}
async function accept(s: SqliteCustody, now: number, ...bs: { bytes: Uint8Array }[]) {
  return s.accept(
    'ship-7',
    bs.map((b) => {
      const d = describeBundle(b.bytes);
      if (!d.ok) throw new Error(d.message);
      return d.value;
    }),
    now,
  );
}
const T0 = Date.parse('2025-01-01T00:00:00Z');

describe('forwarding order and lifetime', () => {
  it('forwards control before failure before status before bulk, oldest first within one', async () => {
    const s = store();
    const bulk = await makeBundle({ priority: 'bulk', created: T0 });
    const status1 = await makeBundle({ priority: 'status', created: T0 });
    const failure = await makeBundle({ priority: 'failure', created: T0 });
    const status2 = await makeBundle({ priority: 'status', created: T0 });
    const control = await makeBundle({ priority: 'control', created: T0 });
    await accept(s, T0, bulk, status1, failure, status2, control);
    const up = new MemoryUpstream('up');
    const slots: UpstreamSlot[] = [{ upstream: up, plan: { windows: [] }, failures: 0, retryAt: 0 }];
    for (let i = 0; i < 5; i++)
      await forwardStep(
        s,
        slots,
        opts,
        () => T0,
        Math.random,
        () => {},
      );
    expect(up.received).toEqual([control.id, failure.id, status1.id, status2.id, bulk.id]);
  });

  it('drops expired bundles, counts them and reports them with a reason, never forwards them', async () => {
    const s = store();
    const short = await makeBundle({ created: T0, lifetimeS: 60 });
    const long = await makeBundle({ created: T0, lifetimeS: 3600 });
    await accept(s, T0, short, long);
    const events: ForwardEvent[] = [];
    const up = new MemoryUpstream('up');
    const slots = [{ upstream: up, plan: { windows: [] }, failures: 0, retryAt: 0 }];
    await forwardStep(
      s,
      slots,
      opts,
      () => T0 + 61_000,
      Math.random,
      (e) => events.push(e),
    );
    expect(up.received).toEqual([long.id]);
    expect(events).toContainEqual({
      type: 'expired',
      direction: 'uplink',
      id: short.id,
      dest: 'hub',
      priority: 'status',
    });
    expect(s.counter('expired_uplink')).toBe(1);
    // a copy arriving after its lifetime is refused as expired, not queued
    expect(await accept(s, T0 + 61_000, short)).toEqual(['duplicate']);
    const late = await makeBundle({ created: T0, lifetimeS: 1 });
    expect(await accept(s, T0 + 2000, late)).toEqual(['expired']);
  });

  it('backs off with jitter after a failure and keeps the bundle', async () => {
    const s = store();
    const b = await makeBundle({ created: T0 });
    await accept(s, T0, b);
    const up = new MemoryUpstream('up');
    up.down = true;
    const slots = [{ upstream: up, plan: { windows: [] }, failures: 0, retryAt: 0 }];
    const r1 = await forwardStep(
      s,
      slots,
      opts,
      () => T0,
      () => 0.5,
      () => {},
    );
    expect(r1).toEqual({ sent: 0, waitMs: 500 });
    up.down = false;
    // A step runs on every request taken in: while the upstream backs off it reads no batch at all.
    let batchesRead = 0;
    const nextBatch = s.nextBatch.bind(s);
    s.nextBatch = (...a) => {
      batchesRead++;
      return nextBatch(...a);
    };
    const r2 = await forwardStep(
      s,
      slots,
      opts,
      () => T0 + 100,
      () => 0.5,
      () => {},
    );
    expect(r2).toEqual({ sent: 0, waitMs: 400 }); // still backing off, awake when it ends
    expect(batchesRead).toBe(0);
    const r3 = await forwardStep(
      s,
      slots,
      opts,
      () => T0 + 600,
      () => 0.5,
      () => {},
    );
    expect(r3.sent).toBe(1);
    expect(up.received).toEqual([b.id]);
  });
});

describe('contact plan', () => {
  const plan = { windows: windowsOf(['0 */2 * * * for 10m']) };

  it('holds traffic outside windows and sends it inside one', async () => {
    const s = store();
    const b = await makeBundle({ created: T0, lifetimeS: 86_400 });
    await accept(s, T0, b);
    const up = new MemoryUpstream('up');
    const slots = [{ upstream: up, plan, failures: 0, retryAt: 0 }];
    const outside = T0 + 30 * 60_000; // 00:30, next window 02:00
    const r = await forwardStep(
      s,
      slots,
      { ...opts, idleMs: 10 * 3_600_000 },
      () => outside,
      Math.random,
      () => {},
    );
    expect(r).toEqual({ sent: 0, waitMs: 90 * 60_000 });
    expect(up.received).toEqual([]);
    await forwardStep(
      s,
      slots,
      opts,
      () => T0 + 2 * 3_600_000 + 60_000,
      Math.random,
      () => {},
    );
    expect(up.received).toEqual([b.id]);
  });

  it('stops at the byte budget of a window and resumes in the next', async () => {
    const s = store();
    const bs = await Promise.all([1, 2, 3].map(() => makeBundle({ created: T0, lifetimeS: 86_400 })));
    await accept(s, T0, ...bs);
    const size = bs[0]!.bytes.length;
    const up = new MemoryUpstream('up');
    const slots = [
      { upstream: up, plan: { ...plan, bytesPerWindow: size * 2 + 1 }, failures: 0, retryAt: 0 },
    ];
    const o = { ...opts, batchCount: 1 };
    for (let i = 0; i < 4; i++)
      await forwardStep(
        s,
        slots,
        o,
        () => T0 + 60_000,
        Math.random,
        () => {},
      );
    expect(up.received.length).toBe(2);
    for (let i = 0; i < 4; i++)
      await forwardStep(
        s,
        slots,
        o,
        () => T0 + 2 * 3_600_000,
        Math.random,
        () => {},
      );
    expect(up.received.length).toBe(3);
  });
});

describe('disk full', () => {
  it('refuses with OutOfSpace, writes nothing of the failing batch, and recovers when space returns', async () => {
    const s = store(256 * 1024);
    const up = new MemoryUpstream('up');
    const slots = [{ upstream: up, plan: { windows: [] }, failures: 0, retryAt: 0 }];
    const accepted: string[] = [];
    let full = false;
    for (let i = 0; i < 400 && !full; i++) {
      const batch = await Promise.all(Array.from({ length: 10 }, () => makeBundle({ created: T0 })));
      const before = s.queueStats(T0).reduce((n, q) => n + q.count, 0);
      try {
        await accept(s, T0, ...batch);
        accepted.push(...batch.map((b) => b.id));
      } catch (e) {
        expect((e as Error).name).toBe('OutOfSpace');
        expect(s.queueStats(T0).reduce((n, q) => n + q.count, 0)).toBe(before); // nothing half-written
        full = true;
      }
    }
    expect(full).toBe(true);
    for (let i = 0; i < 1000 && s.nextBatch(T0, 1 << 20, 1).length > 0; i++) {
      await forwardStep(
        s,
        slots,
        { ...opts, batchCount: 50 },
        () => T0,
        Math.random,
        () => {},
      );
    }
    expect(up.received).toEqual(accepted); // every receipted bundle forwarded, in order
    const after = await makeBundle({ created: T0 });
    expect(await accept(s, T0, after)).toEqual(['stored']);
  });
});
