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
});
