import { describe, expect, it } from 'vitest';
import { contactStatus, renderContact } from './contactStatus.js';

const FROM = Date.parse('2026-11-27T00:00:00Z');
const PLAN = ['every 5m for 1m from 2026-11-27T00:00:00Z'];

describe('contactStatus', () => {
  it('names the next window and how often the agent tries in it', () => {
    const now = FROM + 2 * 60_000;
    const c = contactStatus(PLAN, 900, now);
    expect(c).toMatchObject({
      planned: true,
      open: null,
      next: { start: '2026-11-27T00:05:00.000Z', end: '2026-11-27T00:06:00.000Z' },
      triesEveryS: 15,
    });
    expect(renderContact(c, now)).toContain('next window 2026-11-27T00:05:00.000Z for 1m (in 3 min)');
  });

  it('says a window is open until its end', () => {
    const c = contactStatus(PLAN, 10, FROM + 10_000);
    expect(c.open).toEqual({ start: '2026-11-27T00:00:00.000Z', end: '2026-11-27T00:01:00.000Z' });
    expect(c.triesEveryS).toBe(10);
    expect(renderContact(c, FROM + 10_000)).toMatch(
      /^contact plan {3}window open until 2026-11-27T00:01:00.000Z; next window/,
    );
  });

  it('says so when there is no plan, or only free text', () => {
    expect(renderContact(contactStatus([], 900, FROM), FROM)).toContain('none declared');
    expect(renderContact(contactStatus(['when the dish is up'], 900, FROM), FROM)).toContain('free text');
  });
});
