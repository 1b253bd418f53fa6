import { describe, expect, it } from 'vitest';
import { DownlinkWaiters } from '../src/http/downlinkWaiters.js';

describe('DownlinkWaiters', () => {
  it('holds pulls until notified, and answers at once past the per-site cap', async () => {
    const waiters = new DownlinkWaiters(2);
    const woken: string[] = [];
    const a = waiters.wait('ship-7', 60_000).then(() => woken.push('a'));
    const b = waiters.wait('ship-7', 60_000).then(() => woken.push('b'));
    const other = waiters.wait('polar-1', 60_000).then(() => woken.push('other'));
    await waiters.wait('ship-7', 60_000); // a third for ship-7 is not held
    expect(woken).toEqual([]);
    expect(waiters.size).toBe(3);
    waiters.notify('ship-7');
    await Promise.all([a, b]);
    expect(woken.sort()).toEqual(['a', 'b']);
    waiters.releaseAll();
    await other;
    expect(waiters.size).toBe(0);
  });

  it('lets a request that went away go without waiting for the hold', async () => {
    const waiters = new DownlinkWaiters();
    const gone = new AbortController();
    const held = waiters.wait('ship-7', 60_000, gone.signal);
    gone.abort();
    await held;
    expect(waiters.size).toBe(0);
  });

  it('keeps two pulls of one holder, wakes only the one ending first, and lets an older go for a newer', async () => {
    let now = 0;
    const waiters = new DownlinkWaiters(8, () => now);
    const ends: string[] = [];
    const held = (name: string, after: string, ms = 60_000) =>
      waiters.wait('ship-7', ms, undefined, { peer: 'agent-a', after }).then((why) => {
        ends.push(`${name}:${why}`);
      });
    const a = held('a', '4');
    now = 10_000;
    const b = held('b', '4');
    const other = waiters.wait('ship-7', 60_000, undefined, { peer: 'agent-b', after: '4' });
    expect(waiters.size).toBe(3);
    // downlink arrives: a (ends first) answers, b still waits, and so does nothing of agent-b's but its one
    waiters.notify('ship-7');
    await a;
    await other;
    expect(ends).toEqual(['a:woken']);
    expect(waiters.size).toBe(1);
    // the holder's next pull after the new cursor: b (after 4) would repeat what a brought, so it goes
    const c = held('c', '5');
    await b;
    expect(ends).toEqual(['a:woken', 'b:superseded']);
    now = 20_000;
    const d = held('d', '5');
    expect(waiters.size).toBe(2);
    // a third after the same cursor lets go the one that ends first (c), not the newest
    now = 30_000;
    const e = held('e', '5');
    await c;
    expect(ends).toEqual(['a:woken', 'b:superseded', 'c:superseded']);
    expect(waiters.size).toBe(2);
    waiters.releaseAll();
    await Promise.all([d, e]);
    expect(waiters.size).toBe(0);
  });
});
