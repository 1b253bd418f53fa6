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

  it('keeps two pulls of one holder, wakes only the one ending first, and lets the one ending first go for a third', async () => {
    let now = 0;
    const waiters = new DownlinkWaiters(8, () => now);
    const ends: string[] = [];
    const held = (name: string, ms = 60_000) =>
      waiters.wait('ship-7', ms, undefined, { peer: 'agent-a' }).then((why) => {
        ends.push(`${name}:${why}`);
      });
    const a = held('a');
    now = 10_000;
    const b = held('b');
    const other = waiters.wait('ship-7', 60_000, undefined, { peer: 'agent-b' });
    expect(waiters.size).toBe(3);
    // downlink arrives: a (ends first) answers, b still waits; agent-b's one answers too
    waiters.notify('ship-7');
    await a;
    await other;
    expect(ends).toEqual(['a:woken']);
    expect(waiters.size).toBe(1);
    now = 20_000;
    const c = held('c');
    expect(waiters.size).toBe(2);
    // a third lets go the one that ends first (b), not the newest
    now = 30_000;
    const d = held('d');
    await b;
    expect(ends).toEqual(['a:woken', 'b:superseded']);
    expect(waiters.size).toBe(2);
    waiters.releaseAll();
    await Promise.all([c, d]);
    expect(waiters.size).toBe(0);
  });

  it("lets go the holder's earliest pulls for new ones, also when those end first (no storm of superseded pulls)", async () => {
    let now = 0;
    const waiters = new DownlinkWaiters(8, () => now);
    const ends: string[] = [];
    const held = (name: string, ms: number) =>
      waiters.wait('ship-7', ms, undefined, { peer: 'agent-a' }).then((why) => {
        ends.push(`${name}:${why}`);
      });
    // Two six-hour pulls the relay still holds for an agent that is gone (a proxy or NAT that never told
    // it); the agent comes back asking an hour (an older version, or a hold it shortened).
    const ghosts = [held('ghost1', 21_600_000), held('ghost2', 21_600_000)];
    now = 1000;
    const a = held('a', 3_600_000);
    now = 2000;
    const b = held('b', 3_600_000);
    await Promise.all(ghosts);
    // the ghosts go, and the agent's two pulls stay held: before, each new pull let the agent's other
    // one go (it ended first), which was answered at once, whose successor let this one go, and so on
    expect(ends).toEqual(['ghost1:superseded', 'ghost2:superseded']);
    expect(waiters.size).toBe(2);
    waiters.releaseAll();
    await Promise.all([a, b]);
  });

  it('remembers what each holder was last answered, a bounded number of them', () => {
    const waiters = new DownlinkWaiters();
    expect(waiters.answeredUpTo('ship-7', 'agent-a')).toBeUndefined();
    waiters.noteAnswered('ship-7', 'agent-a', '5');
    waiters.noteAnswered('ship-7', 'agent-a', '9');
    expect(waiters.answeredUpTo('ship-7', 'agent-a')).toBe('9');
    for (let i = 0; i < 10_000; i++) waiters.noteAnswered(`site-${i}`, 'x', '1');
    expect(waiters.answeredUpTo('ship-7', 'agent-a')).toBeUndefined();
  });
});
