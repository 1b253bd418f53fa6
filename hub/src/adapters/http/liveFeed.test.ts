import type { HubEvent } from '@driftline/protocol';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventLog } from '../../core/EventLog.js';
import { LiveFeed } from './liveFeed.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const cell = (component: string, status: string) =>
  ({
    type: 'cell-updated',
    cell: { site: 's', environment: 'prod', component, status },
  }) as unknown as HubEvent;

describe('LiveFeed', () => {
  it('serialises a flush once and writes it to each client in one write, however many clients', () => {
    vi.useFakeTimers();
    const log = new EventLog({ epoch: 'e' });
    const feed = new LiveFeed(log, 250);
    const writes: string[][] = Array.from({ length: 10 }, () => []);
    for (const w of writes) feed.join({ write: (t) => w.push(t), afterSeq: log.seq });
    const stringify = vi.spyOn(JSON, 'stringify');
    for (let i = 0; i < 50; i++) log.publish(cell(`c${i}`, 'ok'));
    log.publish(cell('c0', 'drift'));
    vi.advanceTimersByTime(250);
    expect(stringify).toHaveBeenCalledTimes(50);
    for (const w of writes) {
      expect(w).toHaveLength(1);
      expect(w[0]?.match(/^id: /gm)).toHaveLength(50);
      expect(w[0]).toContain(
        'id: e-51\nevent: cell-updated\ndata: {"type":"cell-updated","cell":{"site":"s","environment":"prod","component":"c0","status":"drift"}}',
      );
    }
    expect(writes[0]?.[0]).toBe(writes[9]?.[0]);
  });

  it('sends a client that joined inside the window only what came after it joined', () => {
    vi.useFakeTimers();
    const log = new EventLog({ epoch: 'e' });
    const feed = new LiveFeed(log, 250);
    const early: string[] = [];
    const late: string[] = [];
    feed.join({ write: (t) => early.push(t), afterSeq: log.seq });
    log.publish(cell('a', 'ok'));
    const leave = feed.join({ write: (t) => late.push(t), afterSeq: log.seq });
    log.publish(cell('b', 'ok'));
    vi.advanceTimersByTime(250);
    expect(early.join('').match(/^id: /gm)).toEqual(['id: ', 'id: ']);
    expect(late.join('')).not.toContain('"component":"a"');
    expect(late.join('')).toContain('id: e-2\n');
    log.publish(cell('c', 'ok'));
    vi.advanceTimersByTime(250);
    expect(late).toHaveLength(2);
    expect(early).toHaveLength(2);
    leave();
    log.publish(cell('d', 'ok'));
    vi.advanceTimersByTime(250);
    expect(late).toHaveLength(2);
    expect(early).toHaveLength(3);
  });
});
