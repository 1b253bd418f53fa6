import type { HubEvent } from '@driftline/protocol';
import { describe, expect, it } from 'vitest';
import { EventLog, newEpoch } from './EventLog.js';

const reset = { type: 'reset', reason: 'behind' } as const satisfies HubEvent;

describe('EventLog', () => {
  it('gives ids of the form <epoch>-<seq>', () => {
    const log = new EventLog({ epoch: 'e1' });
    expect(log.lastId).toBe('e1-0');
    log.publish(reset);
    log.publish(reset);
    expect(log.since('e1-0')).toMatchObject({ kind: 'replay', events: [{ id: 'e1-1' }, { id: 'e1-2' }] });
    expect(log.since('e1-2')).toEqual({ kind: 'replay', events: [] });
  });

  it('resets a client whose id comes from another epoch, as after a hub restart', () => {
    const before = new EventLog({ epoch: 'aaa' });
    before.publish(reset);
    const after = new EventLog({ epoch: 'bbb' });
    after.publish(reset);
    after.publish(reset);
    expect(after.since(before.lastId)).toEqual({ kind: 'reset', reason: 'restarted', id: 'bbb-2' });
  });

  it('resets a client further behind than the ring, and one with an id never given out', () => {
    const log = new EventLog({ epoch: 'e', capacity: 2 });
    for (let i = 0; i < 5; i++) log.publish(reset);
    expect(log.since('e-2')).toEqual({ kind: 'reset', reason: 'behind', id: 'e-5' });
    expect(log.since('e-3')).toMatchObject({ kind: 'replay', events: [{ seq: 4 }, { seq: 5 }] });
    expect(log.since('e-9')).toMatchObject({ kind: 'reset', reason: 'unknown' });
    expect(log.since('17')).toMatchObject({ kind: 'reset', reason: 'unknown' });
    expect(log.since('garbage')).toMatchObject({ kind: 'reset', reason: 'unknown' });
  });

  it('keeps exactly the last `capacity` events however many go through it', () => {
    const log = new EventLog({ epoch: 'e', capacity: 8 });
    for (let n = 1; n <= 45; n++) {
      log.publish(reset);
      const kept = Math.min(n, 8);
      const first = n - kept + 1;
      expect(log.since(`e-${first - 1}`)).toMatchObject({ kind: 'replay' });
      expect((log.since(`e-${first - 1}`) as { events: unknown[] }).events).toHaveLength(kept);
      if (first > 1) expect(log.since(`e-${first - 2}`)).toMatchObject({ kind: 'reset', reason: 'behind' });
    }
  });

  it('chooses a different epoch for every run', () => {
    const t = 1_750_000_000_000;
    expect(newEpoch(t)).not.toBe(newEpoch(t));
    expect(newEpoch(t)).toMatch(/^[0-9a-z]{1,32}$/);
  });
});
